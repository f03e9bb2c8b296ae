//! Exchange's EWS SOAP answers on arbitrary text, as the listener's `readcalendar` reads them
//! (`roomlink-listener`: `calendar::soap::{read_find_item, read_get_item, fault_of}`,
//! `calendar::utc::parse`).
//!
//! Never a panic, and:
//! - a `FindItem` answer's items have an `ItemId` with an `Id`, times with a zone, texts that
//!   are not empty when present; written out again as a `FindItem` answer they read back the
//!   same (the times to the millisecond, `IncludesLastItemInRange` included);
//! - a `GetItem` answer's messages are bodies with the item's `Id` or refusals that are not
//!   `Success`; written out again they read back the same;
//! - a SOAP fault is the problem of both operations' answers, exactly when `fault_of` sees it;
//!   a refused response message is never `Success`;
//! - an xs:dateTime that reads, written out again (UTC, milliseconds) reads the same.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_domain::civil::UtcParts;
use roomlink_listener::calendar::soap::{
    AnswerProblem, Found, FoundItem, GotItem, MESSAGES_NS, ResponseError, SOAP_NS, TYPES_NS,
    fault_of, read_find_item, read_get_item,
};
use roomlink_listener::calendar::utc;

#[path = "shared/xml_text.rs"]
mod xml_text;

use xml_text::escape;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let fault = fault_of(&text);
    let found = read_find_item(&text);
    let got = read_get_item(&text);
    if let Some(fault) = &fault {
        assert!(matches!(fault, AnswerProblem::Fault { .. }));
        assert_eq!(found.as_ref().err(), Some(fault));
        assert_eq!(got.as_ref().err(), Some(fault));
    }
    for problem in [found.as_ref().err(), got.as_ref().err()]
        .into_iter()
        .flatten()
    {
        match problem {
            AnswerProblem::Fault { .. } => assert_eq!(fault.as_ref(), Some(problem)),
            AnswerProblem::Response(e) => refusal(e),
            AnswerProblem::NotEws(why) => assert!(!why.is_empty()),
        }
    }
    if let Ok(found) = &found {
        find_item(found);
    }
    if let Ok(got) = &got {
        get_item(got);
    }
    if text.len() <= 64 {
        date_time(&text);
    }
});

fn refusal(e: &ResponseError) {
    assert_ne!(e.class, "Success");
    assert!(!e.code.is_empty());
    assert!(e.text.as_ref().is_none_or(|t| !t.is_empty()));
}

/// `ms` as an xs:dateTime in UTC with milliseconds, when its year has four digits.
fn written_time(ms: i64) -> Option<String> {
    let t = UtcParts::of(ms);
    (0..=9999).contains(&t.year).then(|| {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            t.year,
            t.month,
            t.day,
            t.hour,
            t.minute,
            t.second,
            ms.rem_euclid(1000)
        )
    })
}

fn date_time(text: &str) {
    if let Some(ms) = utc::parse(text)
        && let Some(again) = written_time(ms)
    {
        assert_eq!(utc::parse(&again), Some(ms), "{text:?} -> {again}");
    }
}

fn envelope(operation: &str, messages: &str) -> String {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            r#"<s:Envelope xmlns:s="{soap}" xmlns:m="{m}" xmlns:t="{t}"><s:Body>"#,
            r#"<m:{op}Response><m:ResponseMessages>{messages}</m:ResponseMessages>"#,
            r#"</m:{op}Response></s:Body></s:Envelope>"#
        ),
        soap = SOAP_NS,
        m = MESSAGES_NS,
        t = TYPES_NS,
        op = operation,
        messages = messages
    )
}

fn element(name: &str, text: Option<&str>) -> String {
    text.map(|t| format!("<t:{name}>{}</t:{name}>", escape(t, false)))
        .unwrap_or_default()
}

fn item_id(id: &str, change_key: Option<&str>) -> String {
    let key = change_key
        .map(|k| format!(" ChangeKey=\"{}\"", escape(k, true)))
        .unwrap_or_default();
    format!("<t:ItemId Id=\"{}\"{key}/>", escape(id, true))
}

fn find_item(found: &Found) {
    let mut items = String::new();
    for item in &found.items {
        check_item(item);
        let (Some(start), Some(end)) = (written_time(item.start_ms), written_time(item.end_ms))
        else {
            return;
        };
        let organizer = if item.organizer_name.is_some() || item.organizer_email.is_some() {
            format!(
                "<t:Organizer><t:Mailbox>{}{}</t:Mailbox></t:Organizer>",
                element("Name", item.organizer_name.as_deref()),
                element("EmailAddress", item.organizer_email.as_deref())
            )
        } else {
            String::new()
        };
        items.push_str(&format!(
            "<t:CalendarItem>{}{}{}{}{}{}{}{}{}</t:CalendarItem>",
            item_id(&item.item_id.id, item.item_id.change_key.as_deref()),
            element("UID", item.uid.as_deref()),
            element("Subject", item.subject.as_deref()),
            element("Start", Some(&start)),
            element("End", Some(&end)),
            element(
                "IsAllDayEvent",
                Some(if item.all_day { "true" } else { "false" })
            ),
            element("Location", item.location.as_deref()),
            element(
                "IsCancelled",
                Some(if item.cancelled { "true" } else { "false" })
            ),
            organizer,
        ));
    }
    let message = format!(
        concat!(
            r#"<m:FindItemResponseMessage ResponseClass="Success"><m:ResponseCode>NoError</m:ResponseCode>"#,
            r#"<m:RootFolder TotalItemsInView="{n}" IncludesLastItemInRange="{complete}"><t:Items>{items}</t:Items>"#,
            r#"</m:RootFolder></m:FindItemResponseMessage>"#
        ),
        n = found.items.len(),
        complete = found.complete,
        items = items
    );
    let xml = envelope("FindItem", &message);
    assert_eq!(read_find_item(&xml).as_ref(), Ok(found), "{xml}");
}

fn check_item(item: &FoundItem) {
    assert!(!item.item_id.id.is_empty());
    for text in [
        &item.uid,
        &item.subject,
        &item.location,
        &item.organizer_name,
        &item.organizer_email,
    ] {
        assert!(text.as_ref().is_none_or(|t| !t.is_empty()));
    }
}

fn get_item(got: &[GotItem]) {
    let mut messages = String::new();
    for message in got {
        match message {
            GotItem::Body { id, text } => {
                assert!(!id.is_empty());
                assert!(text.as_ref().is_none_or(|t| !t.is_empty()));
                messages.push_str(&format!(
                    concat!(
                        r#"<m:GetItemResponseMessage ResponseClass="Success"><m:ResponseCode>NoError</m:ResponseCode>"#,
                        r#"<m:Items><t:CalendarItem>{}{}</t:CalendarItem></m:Items></m:GetItemResponseMessage>"#
                    ),
                    item_id(id, None),
                    element("Body", text.as_deref())
                ));
            }
            GotItem::Failed(e) => {
                refusal(e);
                let text = e
                    .text
                    .as_ref()
                    .map(|t| format!("<m:MessageText>{}</m:MessageText>", escape(t, false)))
                    .unwrap_or_default();
                messages.push_str(&format!(
                    r#"<m:GetItemResponseMessage ResponseClass="{}">{text}<m:ResponseCode>{}</m:ResponseCode></m:GetItemResponseMessage>"#,
                    escape(&e.class, true),
                    escape(&e.code, false)
                ));
            }
        }
    }
    let xml = envelope("GetItem", &messages);
    assert_eq!(read_get_item(&xml).as_deref(), Ok(got), "{xml}");
}
