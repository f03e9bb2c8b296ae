//! The emulated Cisco codec's stored bookings: `Bookings Put` (CE), `Bookings List` and
//! `Bookings Clear` (CE and TC), behind the same `putxml` / SSH front ends as the other
//! commands ([`crate::cisco_xapi::execute`] hands them here).
//!
//! From the vendor's documentation (RoomOS xAPI schemas 9.15.17.4 and 26.4.1, `Bookings Put`;
//! the TC7.3 and CE8.2/9.1 API reference guides, `Bookings List`/`Clear`):
//! - `Bookings Put` is a multiline command, Admin role only, that replaces the stored list with
//!   the bookings of its JSON payload `{"Bookings": [...]}`. Required per booking: `Id`,
//!   `Title`, `Number`, `Protocol` (SIP, H323, ISDN, IP, Spark, WebRTC, None),
//!   `Organizer.Name`, `Time.StartTime` (UTC, `…Z`) and `Time.Duration` (minutes); optional
//!   `MeetingId`, `Agenda`, `Privacy`, `Time.StartTimeBuffer`/`EndTimeBuffer` (seconds).
//!   Over HTTP the payload is the `<body>` parameter (RoomOS HttpApi.md).
//! - `Bookings List` answers `ResultInfo TotalRows`, `LastUpdated`, then per booking `Id`,
//!   `Title`, `Agenda`, `Privacy`, `Organizer FirstName/LastName/Email`, `Time StartTime/
//!   StartTimeBuffer/EndTime/EndTimeBuffer`, `MaximumMeetingExtension`,
//!   `MeetingExtensionAvailability`, `BookingStatus`, `BookingStatusMessage`, in that order.
//!
//! Decided here ([I], kept in docs/drivers.md): the result elements follow the emulator's rule
//! (`BookingsPutResult`, `BookingsListResult`, `BookingsClearResult`); a payload that is not
//! the documented JSON, or lacks a required field, is `<BookingsPutResult status="Error">`
//! with a `Reason`; the Put organizer's `Name` is listed as `FirstName` (with empty `LastName`
//! and `Email`); `MeetingId` follows `BookingStatusMessage`, and the dial information follows
//! as `DialInfo Calls Call[1] Number/Protocol`; `DayOffset`/`Days` are accepted and not
//! applied (the emulator keeps no calendar day), `Limit`/`Offset` are; `LastUpdated` is the
//! time of the last Put's first booking start (the emulator has no clock of its own).

use crate::device::{Booking, Device};
use crate::xml::Element;
use serde_json::Value;

const PROTOCOLS: [&str; 7] = ["SIP", "H323", "ISDN", "IP", "Spark", "WebRTC", "None"];

fn result(name: &str, status: &str) -> Element {
    Element::new(name).attr("status", status)
}

fn error(name: &str, reason: impl Into<String>) -> Element {
    Element::new("Command").child(result(name, "Error").child(Element::leaf("Reason", reason)))
}

/// `Bookings Put`'s payload read into bookings; `Err` is the reason answered.
pub fn parse_put(payload: &str) -> Result<Vec<Booking>, String> {
    let doc: Value =
        serde_json::from_str(payload).map_err(|e| format!("the payload is not JSON: {e}"))?;
    let list = doc
        .get("Bookings")
        .and_then(Value::as_array)
        .ok_or("the payload has no Bookings array")?;
    list.iter()
        .enumerate()
        .map(|(i, b)| booking(b).map_err(|field| format!("Bookings[{i}]: {field}")))
        .collect()
}

fn booking(b: &Value) -> Result<Booking, String> {
    let text = |v: Option<&Value>, name: &str| -> Result<String, String> {
        match v {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            _ => Err(format!("{name} is required")),
        }
    };
    let time = b.get("Time");
    let start_time = text(time.and_then(|t| t.get("StartTime")), "Time.StartTime")?;
    let start_ms = parse_utc(&start_time).ok_or("Time.StartTime is not a UTC time")?;
    let duration = time
        .and_then(|t| t.get("Duration"))
        .and_then(Value::as_u64)
        .ok_or("Time.Duration is required (minutes)")?;
    let seconds = |name: &str| {
        time.and_then(|t| t.get(name))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let protocol = text(b.get("Protocol"), "Protocol")?;
    if !PROTOCOLS.iter().any(|p| p.eq_ignore_ascii_case(&protocol)) {
        return Err(format!("Protocol {protocol} is not one of {PROTOCOLS:?}"));
    }
    Ok(Booking {
        id: text(b.get("Id"), "Id")?,
        meeting_id: b
            .get("MeetingId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        title: text(b.get("Title"), "Title")?,
        agenda: b
            .get("Agenda")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        privacy: b
            .get("Privacy")
            .and_then(Value::as_str)
            .unwrap_or("Public")
            .to_owned(),
        organizer: text(
            b.get("Organizer").and_then(|o| o.get("Name")),
            "Organizer.Name",
        )?,
        number: text(b.get("Number"), "Number")?,
        protocol,
        start_time: format_utc(start_ms),
        end_time: format_utc(start_ms + duration as i64 * 60_000),
        start_buffer_secs: seconds("StartTimeBuffer"),
        end_buffer_secs: seconds("EndTimeBuffer"),
    })
}

/// Carries out a `Bookings` command; `None` when `path` is not one.
pub fn execute(
    path: &[String],
    params: &[(String, String)],
    device: &mut Device,
    admin: bool,
) -> Option<Element> {
    let is = |words: &[&str]| {
        path.len() == words.len()
            && path
                .iter()
                .zip(words)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    };
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if is(&["Bookings", "Put"]) {
        const NAME: &str = "BookingsPutResult";
        if !admin {
            return Some(
                Element::new("Command").child(
                    Element::new("Result")
                        .attr("status", "Error")
                        .child(Element::leaf("Reason", "Permission denied"))
                        .child(Element::leaf("XPath", "/Bookings/Put")),
                ),
            );
        }
        let Some(payload) = param("body") else {
            return Some(error(NAME, "No multiline body"));
        };
        return Some(match parse_put(payload) {
            Ok(bookings) => {
                device.put_bookings(bookings);
                Element::new("Command").child(result(NAME, "OK"))
            }
            Err(reason) => error(NAME, reason),
        });
    }
    if is(&["Bookings", "Clear"]) {
        device.put_bookings(Vec::new());
        return Some(Element::new("Command").child(result("BookingsClearResult", "OK")));
    }
    if is(&["Bookings", "List"]) {
        let number = |name: &str, min: u64, max: u64| match param(name) {
            None => Ok(None),
            Some(v) => v
                .parse::<u64>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .map(Some)
                .ok_or(()),
        };
        let (Ok(limit), Ok(offset), Ok(_), Ok(_)) = (
            number("Limit", 1, 65_534),
            number("Offset", 0, 65_534),
            number("Days", 1, 365),
            number("DayOffset", 0, 365),
        ) else {
            return Some(
                Element::new("Command").child(result("BookingsListResult", "ParameterError")),
            );
        };
        return Some(list(device, limit, offset.unwrap_or(0)));
    }
    None
}

fn list(device: &Device, limit: Option<u64>, offset: u64) -> Element {
    let bookings = &device.bookings;
    let mut answer = result("BookingsListResult", "OK")
        .child(
            Element::new("ResultInfo")
                .child(Element::leaf("TotalRows", bookings.len().to_string())),
        )
        .child(Element::leaf(
            "LastUpdated",
            bookings
                .first()
                .map(|b| b.start_time.clone())
                .unwrap_or_default(),
        ));
    let shown = bookings
        .iter()
        .skip(offset as usize)
        .take(limit.map_or(usize::MAX, |l| l as usize));
    for (i, b) in shown.enumerate() {
        let mut booking = Element::new("Booking")
            .attr("item", (i + 1).to_string())
            .attr("maxOccurrence", "n")
            .child(Element::leaf("Id", b.id.clone()))
            .child(Element::leaf("Title", b.title.clone()))
            .child(Element::leaf("Agenda", b.agenda.clone()))
            .child(Element::leaf("Privacy", b.privacy.clone()))
            .child(
                Element::new("Organizer")
                    .child(Element::leaf("FirstName", b.organizer.clone()))
                    .child(Element::leaf("LastName", ""))
                    .child(Element::leaf("Email", "")),
            )
            .child(
                Element::new("Time")
                    .child(Element::leaf("StartTime", b.start_time.clone()))
                    .child(Element::leaf(
                        "StartTimeBuffer",
                        b.start_buffer_secs.to_string(),
                    ))
                    .child(Element::leaf("EndTime", b.end_time.clone()))
                    .child(Element::leaf(
                        "EndTimeBuffer",
                        b.end_buffer_secs.to_string(),
                    )),
            )
            .child(Element::leaf("MaximumMeetingExtension", "0"))
            .child(Element::leaf("MeetingExtensionAvailability", "Guaranteed"))
            .child(Element::leaf("BookingStatus", "OK"))
            .child(Element::leaf("BookingStatusMessage", ""));
        if let Some(meeting_id) = &b.meeting_id {
            booking = booking.child(Element::leaf("MeetingId", meeting_id.clone()));
        }
        booking = booking.child(
            Element::new("DialInfo").child(
                Element::new("Calls").child(
                    Element::new("Call")
                        .attr("item", "1")
                        .attr("maxOccurrence", "n")
                        .child(Element::leaf("Number", b.number.clone()))
                        .child(Element::leaf("Protocol", b.protocol.clone())),
                ),
            ),
        );
        answer = answer.child(booking);
    }
    Element::new("Command").child(answer)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_of(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDThh:mm:ss[.fraction]Z` in milliseconds since the epoch.
pub fn parse_utc(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let whole = time.split('.').next()?;
    let mut t = whole.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (t.next()??, t.next()??, t.next()??);
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&h)
        && (0..60).contains(&m)
        && (0..61).contains(&s);
    valid.then(|| (days_of(year, month, day) * 86_400 + h * 3600 + m * 60 + s) * 1000)
}

/// Milliseconds since the epoch as `YYYY-MM-DDThh:mm:ssZ`.
pub fn format_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const PAYLOAD: &str = r#"{"Bookings": [
        {"Id": "1", "MeetingId": "review@corp.example", "Title": "Design review",
         "Number": "123456789@bjn.vc", "Protocol": "SIP", "Organizer": {"Name": "roomlink"},
         "Time": {"StartTime": "2027-01-15T10:00:00Z", "Duration": 60}},
        {"Id": "2", "Title": "Team lunch", "Number": "", "Protocol": "None",
         "Organizer": {"Name": "roomlink"},
         "Time": {"StartTime": "2027-01-15T12:00:00.300000000Z", "Duration": 45, "EndTimeBuffer": 300}}
    ]}"#;

    fn put(device: &mut Device, payload: &str) -> String {
        let params = vec![("body".to_owned(), payload.to_owned())];
        execute(&["Bookings".into(), "Put".into()], &params, device, true)
            .unwrap()
            .to_xml()
    }

    fn list(device: &mut Device, params: &[(&str, &str)]) -> String {
        let params: Vec<_> = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        execute(&["Bookings".into(), "List".into()], &params, device, true)
            .unwrap()
            .to_xml()
    }

    #[test]
    fn times_convert_both_ways() {
        assert_eq!(parse_utc("2027-01-15T10:00:00Z"), Some(1_800_007_200_000));
        assert_eq!(parse_utc("1970-01-01T00:00:00.5Z"), Some(0));
        assert_eq!(format_utc(1_800_007_200_000), "2027-01-15T10:00:00Z");
        assert_eq!(format_utc(951_782_400_000), "2000-02-29T00:00:00Z");
        for bad in ["2027-01-15T10:00:00", "2027-13-01T00:00:00Z", "x"] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_put_replaces_the_list_and_list_shows_it_in_the_documented_order() {
        let mut device = Device::new("admin", "pw", Duration::ZERO);
        assert!(put(&mut device, PAYLOAD).contains("<BookingsPutResult status=\"OK\""));
        let xml = list(&mut device, &[]);
        assert!(xml.contains("<TotalRows>2</TotalRows>"), "{xml}");
        let order = [
            "<Id>1</Id>",
            "<Title>Design review</Title>",
            "<Agenda",
            "<Privacy>Public</Privacy>",
            "<FirstName>roomlink</FirstName>",
            "<StartTime>2027-01-15T10:00:00Z</StartTime>",
            "<EndTime>2027-01-15T11:00:00Z</EndTime>",
            "<BookingStatus>OK</BookingStatus>",
            "<MeetingId>review@corp.example</MeetingId>",
            "<Number>123456789@bjn.vc</Number>",
            "<Protocol>SIP</Protocol>",
            "<Id>2</Id>",
            "<EndTime>2027-01-15T12:45:00Z</EndTime>",
            "<EndTimeBuffer>300</EndTimeBuffer>",
        ];
        let mut at = 0;
        for part in order {
            let found = xml[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part} in {xml}"));
            at += found;
        }
        let second = list(&mut device, &[("Offset", "1"), ("Limit", "1")]);
        assert!(second.contains("<Title>Team lunch</Title>") && !second.contains("Design"));
        assert!(put(&mut device, r#"{"Bookings": []}"#).contains("status=\"OK\""));
        assert!(list(&mut device, &[]).contains("<TotalRows>0</TotalRows>"));
    }

    #[test]
    fn bad_payloads_and_roles_are_refused_and_keep_the_list() {
        let mut device = Device::new("admin", "pw", Duration::ZERO);
        put(&mut device, PAYLOAD);
        for (payload, reason) in [
            ("not json", "not JSON"),
            ("{}", "no Bookings"),
            (
                r#"{"Bookings": [{"Id": "1", "Title": "t", "Number": "", "Protocol": "SIP",
                  "Time": {"StartTime": "2027-01-15T10:00:00Z", "Duration": 5}}]}"#,
                "Organizer.Name",
            ),
            (
                r#"{"Bookings": [{"Id": "1", "Title": "t", "Number": "", "Protocol": "Pigeon",
                  "Organizer": {"Name": "x"}, "Time": {"StartTime": "2027-01-15T10:00:00Z", "Duration": 5}}]}"#,
                "Protocol",
            ),
        ] {
            let xml = put(&mut device, payload);
            assert!(
                xml.contains("<BookingsPutResult status=\"Error\">"),
                "{xml}"
            );
            assert!(xml.contains(reason), "{reason}: {xml}");
        }
        assert_eq!(device.bookings.len(), 2, "a refused Put changes nothing");
        let params = vec![("body".to_owned(), PAYLOAD.to_owned())];
        let xml = execute(
            &["Bookings".into(), "Put".into()],
            &params,
            &mut device,
            false,
        )
        .unwrap()
        .to_xml();
        assert!(xml.contains("Permission denied"), "{xml}");
        let xml = list(&mut device, &[("Limit", "0")]);
        assert!(xml.contains("ParameterError"), "{xml}");
        execute(&["Bookings".into(), "Clear".into()], &[], &mut device, true);
        assert!(device.bookings.is_empty());
    }
}
