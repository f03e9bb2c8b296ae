//! The emulator's control surface, for tests and demos (JSON over HTTP, no authentication: it
//! listens on a loopback address of the operator's machine):
//!
//! - `GET /emu/devices`: every device (the emulated hosts and any address seen since).
//! - `GET /emu/devices/{address}`: one device's view, with `configuration`: every Cisco
//!   configuration path the device has and the value it holds (`crate::cisco_config`), and
//!   `polyConfiguration`: the Poly settings (Telnet API command → value, `crate::poly_config`).
//! - `PUT /emu/devices/{address}/faults/{name}` (body `{"ms": N}` optional, for `slow`),
//!   `DELETE /emu/devices/{address}/faults/{name}`, `DELETE /emu/devices/{address}/faults`.
//! - `PUT /emu/devices/{address}/credentials` `{"username": "…", "password": "…"}`.
//! - `PUT|DELETE /emu/devices/{address}/peripherals/{id}/disconnected`: loses or restores a
//!   peripheral (`id`: a Cisco `ConnectedDevice` `ID`, or Poly's `microphones`, `camera`,
//!   `remotecontrol`; the view's `inventory` lists them).
//! - `PUT /emu/devices/{address}/software` `{"version": "…", "releaseDate": "YYYY-MM-DD"}`
//!   (`releaseDate` optional): the software version the device reports from then on;
//!   `DELETE` returns to the firmware's own.
//!
//! Errors are `{"error": CODE, "message": TEXT}` with 400 (bad address or body), 404 (unknown
//! path, fault name or peripheral) or 405.

use crate::Frontend;
use crate::device::{Device, Devices, Fault, Software};
use crate::http::{self, Request, Response, respond};
use hyper::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Serves the control surface on `host:port`.
pub async fn start(
    host: IpAddr,
    port: u16,
    devices: Devices,
    hosts: Vec<IpAddr>,
) -> io::Result<(SocketAddr, Frontend)> {
    let (port, listeners) = crate::net::bind_all(&[host], port).await?;
    let hosts: Arc<Vec<String>> = Arc::new(hosts.iter().map(ToString::to_string).collect());
    let handler: http::Handler = Arc::new(move |request| {
        let devices = devices.clone();
        let hosts = hosts.clone();
        Box::pin(async move { Ok(handle(&request, &devices, &hosts)) })
    });
    let tasks = http::serve(listeners, None, handler);
    Ok((SocketAddr::new(host, port), Frontend { port, tasks }))
}

/// The device's view and the configuration it holds.
fn device_view(device: &Device, address: &str) -> Value {
    let mut view = device.view(address);
    view["configuration"] = json!(crate::cisco_config::view(device));
    view["polyConfiguration"] = json!(crate::poly_config::view(device));
    view
}

fn json_answer(status: StatusCode, value: &Value) -> Response {
    respond(status, "application/json", value.to_string())
}

fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    json_answer(status, &json!({"error": code, "message": message.into()}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlowBody {
    ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialsBody {
    username: String,
    password: String,
}

fn fault_names() -> String {
    Fault::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Answers one control request (never a hang-up).
pub fn handle(request: &Request, devices: &Devices, hosts: &[String]) -> Response {
    let segments: Vec<&str> = request.path.split('/').filter(|s| !s.is_empty()).collect();
    let method = &request.method;
    match segments.as_slice() {
        ["emu", "devices"] if method == Method::GET => {
            let mut all: Vec<String> = hosts.to_vec();
            for seen in devices.addresses() {
                if !all.contains(&seen) {
                    all.push(seen);
                }
            }
            let views: Vec<Value> = all
                .iter()
                .map(|a| devices.with(a, |d| device_view(d, a)))
                .collect();
            json_answer(StatusCode::OK, &Value::Array(views))
        }
        ["emu", "devices", address, rest @ ..] => {
            let Ok(ip) = address.parse::<IpAddr>() else {
                return error(
                    StatusCode::BAD_REQUEST,
                    "bad_address",
                    format!("not an IP address: {:?}", truncate(address)),
                );
            };
            device_request(request, devices, &ip.to_string(), rest)
        }
        _ => error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such path: {}", truncate(&request.path)),
        ),
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(100).collect()
}

fn device_request(request: &Request, devices: &Devices, address: &str, rest: &[&str]) -> Response {
    let method = &request.method;
    let view = |devices: &Devices| devices.with(address, |d| device_view(d, address));
    match rest {
        [] if method == Method::GET => json_answer(StatusCode::OK, &view(devices)),
        ["faults"] if method == Method::DELETE => {
            devices.with(address, |d| d.faults.clear());
            tracing::info!(%address, "faults cleared");
            json_answer(StatusCode::OK, &view(devices))
        }
        ["faults", name] if method == Method::PUT || method == Method::DELETE => {
            let Some(fault) = Fault::parse(name) else {
                return error(
                    StatusCode::NOT_FOUND,
                    "unknown_fault",
                    format!(
                        "unknown fault {:?}; the faults are {}",
                        truncate(name),
                        fault_names()
                    ),
                );
            };
            if method == Method::DELETE {
                devices.with(address, |d| d.faults.remove(&fault));
                tracing::info!(%address, fault = fault.name(), "fault cleared");
                return json_answer(StatusCode::OK, &view(devices));
            }
            let slow_ms = if request.body.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                match serde_json::from_slice::<SlowBody>(&request.body) {
                    Ok(body) => Some(body.ms),
                    Err(e) => {
                        return error(
                            StatusCode::BAD_REQUEST,
                            "bad_body",
                            format!("expected no body or {{\"ms\": N}}: {e}"),
                        );
                    }
                }
            };
            devices.with(address, |d| {
                d.faults.insert(fault);
                if let Some(ms) = slow_ms {
                    d.slow_ms = ms;
                }
            });
            tracing::info!(%address, fault = fault.name(), "fault set");
            json_answer(StatusCode::OK, &view(devices))
        }
        ["credentials"] if method == Method::PUT => {
            match serde_json::from_slice::<CredentialsBody>(&request.body) {
                Ok(body) => {
                    devices.with(address, |d| {
                        d.username = body.username;
                        d.password = body.password;
                    });
                    tracing::info!(%address, "credentials changed");
                    json_answer(StatusCode::OK, &view(devices))
                }
                // serde's message may quote the input: leave it out, it may hold a password.
                Err(_) => error(
                    StatusCode::BAD_REQUEST,
                    "bad_body",
                    "expected {\"username\": \"…\", \"password\": \"…\"}",
                ),
            }
        }
        ["peripherals", id, "disconnected"]
            if method == Method::PUT || method == Method::DELETE =>
        {
            if !crate::inventory::has_peripheral(address, id) {
                return error(
                    StatusCode::NOT_FOUND,
                    "unknown_peripheral",
                    format!(
                        "no peripheral {:?}; this device's are {}",
                        truncate(id),
                        crate::inventory::peripheral_ids(address).join(", ")
                    ),
                );
            }
            let lost = method == Method::PUT;
            devices.with(address, |d| {
                if lost {
                    d.disconnected_peripherals.insert((*id).to_owned())
                } else {
                    d.disconnected_peripherals.remove(*id)
                }
            });
            tracing::info!(%address, peripheral = %id, disconnected = lost, "peripheral changed");
            json_answer(StatusCode::OK, &view(devices))
        }
        ["software"] if method == Method::PUT => {
            let software = match serde_json::from_slice::<Software>(&request.body) {
                Ok(s) if valid_software(&s) => s,
                _ => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        "bad_body",
                        "expected {\"version\": \"1 to 100 characters\", \"releaseDate\": \"YYYY-MM-DD\"} (releaseDate optional)",
                    );
                }
            };
            tracing::info!(%address, version = %software.version, "software set");
            devices.with(address, |d| d.software = Some(software));
            json_answer(StatusCode::OK, &view(devices))
        }
        ["software"] if method == Method::DELETE => {
            devices.with(address, |d| d.software = None);
            tracing::info!(%address, "software reset to the firmware's");
            json_answer(StatusCode::OK, &view(devices))
        }
        []
        | ["faults"]
        | ["faults", _]
        | ["credentials"]
        | ["software"]
        | ["peripherals", _, "disconnected"] => error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("{method} is not allowed on {}", truncate(&request.path)),
        ),
        _ => error(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such path: {}", truncate(&request.path)),
        ),
    }
}

/// A version the device can report: one line, not empty, not huge; a release date shaped
/// `YYYY-MM-DD`.
fn valid_software(software: &Software) -> bool {
    let version_ok = !software.version.trim().is_empty()
        && software.version.len() <= 100
        && !software.version.chars().any(char::is_control);
    let date_ok = software.release_date.as_deref().is_none_or(|d| {
        d.len() == 10
            && d.char_indices().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            })
    });
    version_ok && date_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceDefaults;

    fn request(method: Method, path: &str, body: &str) -> Request {
        Request {
            method,
            path: path.into(),
            query: None,
            headers: hyper::HeaderMap::new(),
            body: body.to_owned().into(),
            local: "127.77.0.1:1".parse().expect("address"),
        }
    }

    async fn body(response: Response) -> Value {
        use http_body_util::BodyExt;
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        serde_json::from_slice(&bytes).expect("json")
    }

    #[tokio::test]
    async fn peripherals_are_lost_and_restored_and_software_set() {
        let devices = Devices::new(DeviceDefaults::default());
        let hosts = ["127.77.0.1".to_owned()];
        let path = "/emu/devices/127.77.0.1/peripherals/camera/disconnected";
        let put = handle(&request(Method::PUT, path, ""), &devices, &hosts);
        assert_eq!(put.status(), StatusCode::OK);
        assert_eq!(
            body(put).await["disconnectedPeripherals"],
            json!(["camera"])
        );
        assert!(!devices.get("127.77.0.1").peripheral_connected("camera"));
        let gone = handle(&request(Method::DELETE, path, ""), &devices, &hosts);
        assert_eq!(body(gone).await["disconnectedPeripherals"], json!([]));
        let unknown = handle(
            &request(
                Method::PUT,
                "/emu/devices/127.77.0.1/peripherals/toaster/disconnected",
                "",
            ),
            &devices,
            &hosts,
        );
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);

        let software = "/emu/devices/127.77.0.1/software";
        let set = handle(
            &request(
                Method::PUT,
                software,
                r#"{"version": "ce9.15.18.5", "releaseDate": "2024-06-12"}"#,
            ),
            &devices,
            &hosts,
        );
        assert_eq!(body(set).await["software"]["version"], "ce9.15.18.5");
        for bad in [
            r#"{"version": ""}"#,
            r#"{"version": "x", "releaseDate": "June"}"#,
            "{}",
        ] {
            let refused = handle(&request(Method::PUT, software, bad), &devices, &hosts);
            assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        let reset = handle(&request(Method::DELETE, software, ""), &devices, &hosts);
        assert!(body(reset).await["software"].is_null());
    }
}
