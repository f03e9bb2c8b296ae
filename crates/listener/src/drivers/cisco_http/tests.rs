//! The driver's pure parts; the driver against the emulated codec is in `tests/cisco_http.rs`.

use super::*;
use reqwest::header::HeaderMap;
use roomlink_domain::enums::SignalingProtocol;

#[test]
fn call_status_reads_elements_and_attributes() {
    let doc = xml::parse("<Status><Call item=\"3\"><Status>Connected</Status></Call></Status>")
        .expect("xml");
    assert_eq!(call_phase(&doc), CallPhase::Connected);
    let doc = xml::parse("<Status><Call item=\"1\" status=\"Synced\" protocol=\"H323\"/></Status>")
        .expect("xml");
    assert_eq!(call_phase(&doc), CallPhase::Connected);
    let doc = xml::parse("<Status><Call item=\"4\"><Status>Ringing</Status></Call></Status>")
        .expect("xml");
    assert_eq!(call_phase(&doc), CallPhase::Dialling);
    let doc = xml::parse("<Status product=\"Cisco Codec\"/>").expect("xml");
    assert_eq!(call_phase(&doc), CallPhase::Idle);
}

#[test]
fn bodies_escape_and_pick_the_firmware_form() {
    assert_eq!(
        dial_body("a<b>&c@x", Some(SignalingProtocol::Sip)),
        "<Command><Dial command=\"True\"><Number>a&lt;b&gt;&amp;c@x</Number><Protocol>Sip</Protocol></Dial></Command>"
    );
    assert_eq!(
        dtmf_body(Firmware::Tc, "12#"),
        "<Command><DTMFSend command=\"True\"><DTMFString>12#</DTMFString></DTMFSend></Command>"
    );
    assert!(dtmf_body(Firmware::Ce, "1").starts_with("<Command><Call><DTMFSend"));
    assert_eq!(firmware_of("TC7.3.21.d4d8b4c"), Firmware::Tc);
    assert_eq!(firmware_of("ce9.15.17.4"), Firmware::Ce);
    assert_eq!(firmware_of("RoomOS 11.14"), Firmware::Ce);
    assert_eq!(form_encode("/Status/Call[1]"), "%2FStatus%2FCall%5B1%5D");
}

#[test]
fn response_heads_redact_cookies() {
    let mut headers = HeaderMap::new();
    headers.insert(
        "set-cookie",
        "SessionId=secret; Path=/".parse().expect("header"),
    );
    headers.insert(
        "www-authenticate",
        "Basic realm=\"x\"".parse().expect("header"),
    );
    let head = response_head(StatusCode::UNAUTHORIZED, &headers);
    assert!(head.starts_with("HTTP/1.1 401 Unauthorized"));
    assert!(head.contains("WWW-Authenticate: Basic realm=\"x\""));
    assert!(head.contains("Set-Cookie: [redacted]") && !head.contains("secret"));
}
