//! An emulated Exchange server's Exchange Web Services endpoint (`POST /EWS/Exchange.asmx`),
//! answering the two operations a listener reads room calendars with, in the shapes of
//! Microsoft's EWS reference (SOAP 1.1; operations and response messages in the messages
//! namespace, items in the types namespace). Written apart from the listener's client: it
//! reads requests by namespace and local name with its own reader, and writes its answers with
//! the prefixes Exchange uses (`s:`, `m:`, `t:`).
//!
//! - **Authentication:** HTTP Basic with the configured user (`DOMAIN\user` when the account
//!   has a domain) and password; anything else is `401` with `WWW-Authenticate: Basic`,
//!   `Negotiate` and `NTLM` challenges and an empty body.
//! - **`FindItem`** with a `CalendarView` on `DistinguishedFolderId Id="calendar"` of the
//!   `Mailbox` named: the items overlapping `[StartDate, EndDate)` (start before EndDate, end
//!   after StartDate) in start order, at most `MaxEntriesReturned`
//!   (`IncludesLastItemInRange="false"` when more exist). Each `t:CalendarItem` has its
//!   `t:ItemId` and only the properties the request's `AdditionalProperties` names
//!   (`item:Subject`, `calendar:UID`, `calendar:Start`, `calendar:End`,
//!   `calendar:IsAllDayEvent`, `calendar:Location`, `calendar:IsCancelled`,
//!   `calendar:Organizer`, `calendar:CalendarItemType`), in schema order; never the body.
//!   An unknown mailbox answers `ResponseClass="Error"` `ErrorNonExistentMailbox`; a mailbox
//!   the account may not open, `ErrorAccessDenied` (both with HTTP 200, as EWS does).
//! - **`GetItem`** of `t:ItemId`s: one `GetItemResponseMessage` per id, in order, the item with
//!   its `t:Body` (`BodyType="Text"` when the shape asks for text, else HTML); an unknown id is
//!   `ErrorItemNotFound`.
//! - A request that is not a SOAP envelope with one of those operations, in the right
//!   namespaces, is `500` with a SOAP fault `ErrorSchemaValidation`. Only `text/xml` bodies
//!   are read (`415` otherwise, the emulator's choice).
//!
//! Every request is recorded ([`Recorded`]): operation, mailbox, `RequestServerVersion`, the
//! `SOAPAction` header, and whether it authenticated.

use crate::Frontend;
use crate::net;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use quick_xml::NsReader;
use quick_xml::escape::escape;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpListener;

pub const PATH: &str = "/EWS/Exchange.asmx";
const SOAP_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const M_NS: &str = "http://schemas.microsoft.com/exchange/services/2006/messages";
const T_NS: &str = "http://schemas.microsoft.com/exchange/services/2006/types";

/// One calendar item (an occurrence, for a recurring meeting) of a room mailbox.
#[derive(Debug, Clone, Default)]
pub struct EwsItem {
    /// The item's `Id` (unique across the server).
    pub id: String,
    pub uid: Option<String>,
    pub subject: Option<String>,
    /// Plain text; written as HTML paragraphs when HTML is asked for.
    pub body: Option<String>,
    pub location: Option<String>,
    pub start_ms: i64,
    pub end_ms: i64,
    pub all_day: bool,
    pub cancelled: bool,
    pub organizer_name: Option<String>,
    pub organizer_email: Option<String>,
}

/// A request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub operation: String,
    pub mailbox: Option<String>,
    pub server_version: Option<String>,
    pub soap_action: Option<String>,
    pub authenticated: bool,
    /// `StartDate` and `EndDate` of a `FindItem`.
    pub view: Option<(String, String)>,
}

#[derive(Default)]
struct Mailbox {
    items: Vec<EwsItem>,
    /// The account has no delegate access to it.
    denied: bool,
}

#[derive(Default)]
struct State {
    user: String,
    password: String,
    mailboxes: HashMap<String, Mailbox>,
    requests: Vec<Recorded>,
}

/// The server's state, shared with the test that drives it.
#[derive(Clone, Default)]
pub struct Ews(Arc<Mutex<State>>);

impl Ews {
    /// A server whose one account is `user` (as sent in Basic: `DOMAIN\name` or `name`).
    pub fn new(user: &str, password: &str) -> Ews {
        let ews = Ews::default();
        {
            let mut state = ews.state();
            state.user = user.to_owned();
            state.password = password.to_owned();
        }
        ews
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a room mailbox (SMTP addresses compare case-insensitively) the account may read.
    pub fn add_mailbox(&self, address: &str) {
        self.state()
            .mailboxes
            .entry(address.to_ascii_lowercase())
            .or_default();
    }

    /// Adds a mailbox the account has no access to (`ErrorAccessDenied`).
    pub fn add_denied_mailbox(&self, address: &str) {
        self.state()
            .mailboxes
            .entry(address.to_ascii_lowercase())
            .or_default()
            .denied = true;
    }

    pub fn add_item(&self, address: &str, item: EwsItem) {
        self.state()
            .mailboxes
            .entry(address.to_ascii_lowercase())
            .or_default()
            .items
            .push(item);
    }

    pub fn set_password(&self, password: &str) {
        self.state().password = password.to_owned();
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }
}

/// Serves EWS on `host:port` (0: a free port) at [`PATH`].
pub async fn start(host: IpAddr, port: u16, ews: Ews) -> io::Result<Frontend> {
    let (port, listeners) = net::bind_all(&[host], port).await?;
    let tasks = listeners
        .into_iter()
        .map(|listener| tokio::spawn(accept_loop(listener, ews.clone())))
        .collect();
    Ok(Frontend { port, tasks })
}

async fn accept_loop(listener: TcpListener, ews: Ews) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let ews = ews.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| handle(request, ews.clone()));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
}

type Answer = Response<Full<Bytes>>;

fn answer(status: StatusCode, body: String) -> Answer {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if status != StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/xml; charset=utf-8"),
        );
    }
    response
}

async fn handle(request: Request<Incoming>, ews: Ews) -> Result<Answer, hyper::Error> {
    if request.uri().path() != PATH {
        return Ok(answer(StatusCode::NOT_FOUND, String::new()));
    }
    if request.method() != Method::POST {
        return Ok(answer(StatusCode::METHOD_NOT_ALLOWED, String::new()));
    }
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let authorization = header(AUTHORIZATION.as_str());
    let content_type = header(CONTENT_TYPE.as_str()).unwrap_or_default();
    let soap_action = header("SOAPAction");
    let body = request.into_body().collect().await?.to_bytes();
    let authenticated = {
        let state = ews.state();
        authorization
            .as_deref()
            .and_then(|v| v.strip_prefix("Basic "))
            .and_then(|b| BASE64.decode(b.trim()).ok())
            .and_then(|b| String::from_utf8(b).ok())
            .is_some_and(|pair| pair == format!("{}:{}", state.user, state.password))
    };
    let parsed = parse_request(&body);
    ews.state().requests.push(Recorded {
        operation: parsed
            .as_ref()
            .map_or_else(|_| "(unreadable)".to_owned(), |r| r.operation.clone()),
        mailbox: parsed.as_ref().ok().and_then(|r| r.mailbox.clone()),
        server_version: parsed.as_ref().ok().and_then(|r| r.server_version.clone()),
        soap_action,
        authenticated,
        view: parsed.as_ref().ok().and_then(|r| r.view.clone()),
    });
    if !authenticated {
        let mut response = answer(StatusCode::UNAUTHORIZED, String::new());
        for challenge in ["Basic realm=\"mail.corp.example\"", "Negotiate", "NTLM"] {
            response
                .headers_mut()
                .append(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        return Ok(response);
    }
    if !content_type.starts_with("text/xml") {
        return Ok(answer(StatusCode::UNSUPPORTED_MEDIA_TYPE, String::new()));
    }
    let request = match parsed {
        Ok(request) => request,
        Err(why) => return Ok(answer(StatusCode::INTERNAL_SERVER_ERROR, fault(&why))),
    };
    let body = match request.operation.as_str() {
        "FindItem" => find_item(&ews, &request),
        _ => get_item(&ews, &request),
    };
    Ok(match body {
        Ok(body) => answer(StatusCode::OK, envelope(&body)),
        Err(why) => answer(StatusCode::INTERNAL_SERVER_ERROR, fault(&why)),
    })
}

/// What a request asked.
#[derive(Debug, Default)]
struct EwsRequest {
    operation: String,
    server_version: Option<String>,
    mailbox: Option<String>,
    folder: Option<String>,
    view: Option<(String, String)>,
    max_entries: Option<usize>,
    properties: Vec<String>,
    body_type: Option<String>,
    item_ids: Vec<String>,
}

/// Reads a request with a streaming namespace-aware reader, following the element path.
fn parse_request(body: &[u8]) -> Result<EwsRequest, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the request is not UTF-8".to_owned())?;
    let mut reader = NsReader::from_str(text);
    let mut path: Vec<(String, String)> = Vec::new();
    let mut request = EwsRequest::default();
    let mut text_of_open = String::new();
    loop {
        let (resolved, event) = reader.read_resolved_event().map_err(|e| e.to_string())?;
        let (start, empty) = match &event {
            Event::Start(s) => (Some(s.clone()), false),
            Event::Empty(s) => (Some(s.clone()), true),
            _ => (None, false),
        };
        if let Some(start) = start {
            let ns = match resolved {
                ResolveResult::Bound(ns) => ns.as_ref().to_owned(),
                _ => String::new(),
            };
            let name = start.local_name().as_ref().to_owned();
            let attr = |key: &str| {
                start.attributes().flatten().find_map(|a| {
                    (a.key.as_ref() == key).then(|| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .map(|v| v.into_owned())
                            .unwrap_or_default()
                    })
                })
            };
            let depth = path.len();
            let parent = path.last().map(|(n, l)| (n.as_str(), l.as_str()));
            match (depth, ns.as_str(), name.as_str()) {
                (0, SOAP_NS, "Envelope") => {}
                (0, ..) => return Err("the request is not a SOAP envelope".into()),
                (1, SOAP_NS, "Header" | "Body") => {}
                (2, T_NS, "RequestServerVersion") if parent == Some((SOAP_NS, "Header")) => {
                    request.server_version = attr("Version");
                }
                (2, M_NS, op @ ("FindItem" | "GetItem")) if parent == Some((SOAP_NS, "Body")) => {
                    request.operation = op.to_owned();
                }
                (2, _, other) if parent == Some((SOAP_NS, "Body")) => {
                    return Err(format!("the operation {other} is not served here"));
                }
                (_, M_NS, "CalendarView") => {
                    let (Some(start), Some(end)) = (attr("StartDate"), attr("EndDate")) else {
                        return Err("CalendarView needs StartDate and EndDate".into());
                    };
                    request.view = Some((start, end));
                    request.max_entries = attr("MaxEntriesReturned").and_then(|m| m.parse().ok());
                }
                (_, T_NS, "DistinguishedFolderId") => request.folder = attr("Id"),
                (_, T_NS, "FieldURI") => request.properties.extend(attr("FieldURI")),
                (_, T_NS, "ItemId") => request.item_ids.extend(attr("Id")),
                _ => {}
            }
            if !empty {
                path.push((ns, name));
                text_of_open.clear();
            }
            continue;
        }
        match event {
            Event::Text(t) => text_of_open.push_str(&t.xml10_content()),
            Event::GeneralRef(r) => {
                if let Some(t) = quick_xml::escape::resolve_predefined_entity(&r) {
                    text_of_open.push_str(t);
                }
            }
            Event::End(_) => {
                let (ns, name) = path.pop().unwrap_or_default();
                let inside = |n: &str| path.last().is_some_and(|(pns, l)| pns == T_NS && l == n);
                if ns == T_NS && name == "EmailAddress" && inside("Mailbox") {
                    request.mailbox = Some(text_of_open.trim().to_owned());
                }
                if ns == T_NS && name == "BodyType" {
                    request.body_type = Some(text_of_open.trim().to_owned());
                }
                text_of_open.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if request.operation.is_empty() {
        return Err("the Body holds no FindItem or GetItem in the messages namespace".into());
    }
    Ok(request)
}

fn envelope(body: &str) -> String {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            r#"<s:Envelope xmlns:s="{soap}"><s:Header>"#,
            r#"<h:ServerVersionInfo MajorVersion="15" MinorVersion="2" MajorBuildNumber="1544" MinorBuildNumber="4" Version="V2017_07_11" xmlns:h="{t}" xmlns="{t}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/>"#,
            r#"</s:Header><s:Body xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">"#,
            "{body}</s:Body></s:Envelope>"
        ),
        soap = SOAP_NS,
        t = T_NS,
        body = body
    )
}

fn fault(why: &str) -> String {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            r#"<s:Envelope xmlns:s="{soap}"><s:Body><s:Fault>"#,
            r#"<faultcode xmlns:a="{t}">a:ErrorSchemaValidation</faultcode>"#,
            r#"<faultstring xml:lang="en-US">The request failed schema validation: {why}</faultstring>"#,
            r#"<detail><e:ResponseCode xmlns:e="{t}">ErrorSchemaValidation</e:ResponseCode>"#,
            r#"<e:Message xmlns:e="{t}">The request failed schema validation.</e:Message></detail>"#,
            r#"</s:Fault></s:Body></s:Envelope>"#
        ),
        soap = SOAP_NS,
        t = T_NS,
        why = escape(why)
    )
}

fn error_message(operation: &str, code: &str, text: &str, extra: &str) -> String {
    format!(
        concat!(
            r#"<m:{op}ResponseMessage ResponseClass="Error"><m:MessageText>{text}</m:MessageText>"#,
            r#"<m:ResponseCode>{code}</m:ResponseCode><m:DescriptiveLinkKey>0</m:DescriptiveLinkKey>{extra}"#,
            r#"</m:{op}ResponseMessage>"#
        ),
        op = operation,
        text = text,
        code = code,
        extra = extra
    )
}

fn response(operation: &str, messages: &str) -> String {
    format!(
        r#"<m:{operation}Response xmlns:m="{M_NS}" xmlns:t="{T_NS}"><m:ResponseMessages>{messages}</m:ResponseMessages></m:{operation}Response>"#
    )
}

fn find_item(ews: &Ews, request: &EwsRequest) -> Result<String, String> {
    if request.folder.as_deref() != Some("calendar") {
        return Err("FindItem here reads the distinguished folder calendar only".into());
    }
    let (start, end) = request
        .view
        .clone()
        .ok_or("FindItem here needs a CalendarView")?;
    let (Some(from), Some(to)) = (parse_time(&start), parse_time(&end)) else {
        return Err("StartDate and EndDate must be xs:dateTime".into());
    };
    if to < from {
        return Err("EndDate is before StartDate".into());
    }
    let mailbox = request.mailbox.clone().ok_or("no Mailbox EmailAddress")?;
    let state = ews.state();
    let Some(found) = state.mailboxes.get(&mailbox.to_ascii_lowercase()) else {
        let extra = format!(
            r#"<m:MessageXml><t:Value Name="SmtpAddress">{}</t:Value></m:MessageXml>"#,
            escape(&mailbox)
        );
        return Ok(response(
            "FindItem",
            &error_message(
                "FindItem",
                "ErrorNonExistentMailbox",
                "The SMTP address has no mailbox associated with it.",
                &extra,
            ),
        ));
    };
    if found.denied {
        return Ok(response(
            "FindItem",
            &error_message(
                "FindItem",
                "ErrorAccessDenied",
                "Access is denied. Check credentials and try again.",
                "",
            ),
        ));
    }
    let mut items: Vec<&EwsItem> = found
        .items
        .iter()
        .filter(|i| i.start_ms < to && i.end_ms > from)
        .collect();
    items.sort_by_key(|i| (i.start_ms, i.end_ms));
    let total = items.len();
    let max = request.max_entries.unwrap_or(usize::MAX);
    let complete = total <= max;
    let wants = |uri: &str| request.properties.iter().any(|p| p == uri);
    let mut xml = String::new();
    for item in items.into_iter().take(max) {
        xml.push_str("<t:CalendarItem>");
        xml.push_str(&item_id(item));
        let text = |xml: &mut String, name: &str, value: &Option<String>| {
            if let Some(v) = value {
                xml.push_str(&format!("<t:{name}>{}</t:{name}>", escape(v)));
            }
        };
        if wants("item:Subject") {
            text(&mut xml, "Subject", &item.subject);
        }
        if wants("calendar:UID") {
            text(&mut xml, "UID", &item.uid);
        }
        if wants("calendar:Start") {
            xml.push_str(&format!(
                "<t:Start>{}</t:Start>",
                format_time(item.start_ms)
            ));
        }
        if wants("calendar:End") {
            xml.push_str(&format!("<t:End>{}</t:End>", format_time(item.end_ms)));
        }
        if wants("calendar:IsAllDayEvent") {
            xml.push_str(&format!(
                "<t:IsAllDayEvent>{}</t:IsAllDayEvent>",
                item.all_day
            ));
        }
        if wants("calendar:Location") {
            text(&mut xml, "Location", &item.location);
        }
        if wants("calendar:IsCancelled") {
            xml.push_str(&format!(
                "<t:IsCancelled>{}</t:IsCancelled>",
                item.cancelled
            ));
        }
        if wants("calendar:CalendarItemType") {
            xml.push_str("<t:CalendarItemType>Single</t:CalendarItemType>");
        }
        if wants("calendar:Organizer") && (item.organizer_email.is_some()) {
            xml.push_str("<t:Organizer><t:Mailbox>");
            text(&mut xml, "Name", &item.organizer_name);
            text(&mut xml, "EmailAddress", &item.organizer_email);
            xml.push_str("<t:RoutingType>SMTP</t:RoutingType></t:Mailbox></t:Organizer>");
        }
        xml.push_str("</t:CalendarItem>");
    }
    Ok(response(
        "FindItem",
        &format!(
            concat!(
                r#"<m:FindItemResponseMessage ResponseClass="Success"><m:ResponseCode>NoError</m:ResponseCode>"#,
                r#"<m:RootFolder TotalItemsInView="{total}" IncludesLastItemInRange="{complete}"><t:Items>{xml}</t:Items></m:RootFolder>"#,
                r#"</m:FindItemResponseMessage>"#
            ),
            total = total,
            complete = complete,
            xml = xml
        ),
    ))
}

fn item_id(item: &EwsItem) -> String {
    format!(
        r#"<t:ItemId Id="{}" ChangeKey="DwAAABYAAA{}"/>"#,
        escape(&item.id),
        item.id.len()
    )
}

fn get_item(ews: &Ews, request: &EwsRequest) -> Result<String, String> {
    if request.item_ids.is_empty() {
        return Err("GetItem needs ItemIds".into());
    }
    let text = request.body_type.as_deref() == Some("Text");
    let state = ews.state();
    let mut messages = String::new();
    for id in &request.item_ids {
        let found = state
            .mailboxes
            .values()
            .flat_map(|m| m.items.iter())
            .find(|i| &i.id == id);
        let Some(item) = found else {
            messages.push_str(&error_message(
                "GetItem",
                "ErrorItemNotFound",
                "The specified object was not found in the store.",
                // messages.xsd: an item response message's `Items` is required, even empty.
                "<m:Items/>",
            ));
            continue;
        };
        let body = item.body.clone().unwrap_or_default();
        let body = if text {
            format!(r#"<t:Body BodyType="Text">{}</t:Body>"#, escape(&body))
        } else {
            let html = format!("<html><body><p>{}</p></body></html>", escape(&body));
            format!(r#"<t:Body BodyType="HTML">{}</t:Body>"#, escape(&html))
        };
        messages.push_str(&format!(
            concat!(
                r#"<m:GetItemResponseMessage ResponseClass="Success"><m:ResponseCode>NoError</m:ResponseCode>"#,
                r#"<m:Items><t:CalendarItem>{id}{body}</t:CalendarItem></m:Items></m:GetItemResponseMessage>"#
            ),
            id = item_id(item),
            body = body
        ));
    }
    Ok(response("GetItem", &messages))
}

const DAY_MS: i64 = 86_400_000;

/// `YYYY-MM-DDTHH:MM:SSZ` (civil date from a day count, Gregorian).
pub fn format_time(ms: i64) -> String {
    let days = ms.div_euclid(DAY_MS);
    let secs = ms.rem_euclid(DAY_MS) / 1000;
    // Walk years, then months: slow and plain, fine for an emulator.
    let mut year = 1970;
    let mut rest = days;
    loop {
        let len = if leap(year) { 366 } else { 365 };
        if rest >= 0 && rest < len {
            break;
        }
        if rest < 0 {
            year -= 1;
            rest += if leap(year) { 366 } else { 365 };
        } else {
            rest -= len;
            year += 1;
        }
    }
    let mut month = 1;
    while rest >= month_len(year, month) {
        rest -= month_len(year, month);
        month += 1;
    }
    format!(
        "{year:04}-{month:02}-{:02}T{:02}:{:02}:{:02}Z",
        rest + 1,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn month_len(year: i64, month: i64) -> i64 {
    match month {
        2 if leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` only (what a client is expected to send here).
fn parse_time(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !text.ends_with('Z') {
        return None;
    }
    let n = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (year, month, day) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, m, s) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > month_len(year, month) {
        return None;
    }
    let mut days = 0;
    for y in 1970..year {
        days += if leap(y) { 366 } else { 365 };
    }
    for mo in 1..month {
        days += month_len(year, mo);
    }
    days += day - 1;
    Some(days * DAY_MS + (h * 3600 + m * 60 + s) * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip() {
        for ms in [0, 1_799_971_200_000, 1_709_208_000_000, 1_800_010_800_000] {
            assert_eq!(
                parse_time(&format_time(ms)),
                Some(ms),
                "{}",
                format_time(ms)
            );
        }
        assert_eq!(format_time(1_709_208_000_000), "2024-02-29T12:00:00Z");
        assert_eq!(parse_time("2027-02-30T00:00:00Z"), None);
    }

    #[test]
    fn requests_in_other_namespaces_are_refused() {
        let good = format!(
            r#"<soap:Envelope xmlns:soap="{SOAP_NS}" xmlns:t="{T_NS}"><soap:Header><t:RequestServerVersion Version="Exchange2010_SP2"/></soap:Header><soap:Body><GetItem xmlns="{M_NS}"><ItemShape><t:BaseShape>IdOnly</t:BaseShape><t:BodyType>Text</t:BodyType></ItemShape><ItemIds><t:ItemId Id="A"/></ItemIds></GetItem></soap:Body></soap:Envelope>"#
        );
        let r = parse_request(good.as_bytes()).unwrap();
        assert_eq!(r.operation, "GetItem");
        assert_eq!(r.item_ids, ["A"]);
        assert_eq!(r.body_type.as_deref(), Some("Text"));
        assert_eq!(r.server_version.as_deref(), Some("Exchange2010_SP2"));
        let wrong = good.replace(M_NS, T_NS);
        assert!(parse_request(wrong.as_bytes()).is_err());
    }
}
