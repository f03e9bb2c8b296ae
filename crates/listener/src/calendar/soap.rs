//! The EWS SOAP messages the listener sends (`FindItem` with a `CalendarView`, `GetItem` for
//! the bodies) and what it reads from the answers, in Microsoft's documented shapes:
//! SOAP 1.1 envelopes, the messages namespace for operations and response messages, the types
//! namespace for items and properties. Answers are read by namespace and local name, so any
//! prefixes the server chooses work.

use super::utc;
use crate::xml::{Element, parse};
use quick_xml::escape::escape;

pub const SOAP_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
pub const MESSAGES_NS: &str = "http://schemas.microsoft.com/exchange/services/2006/messages";
pub const TYPES_NS: &str = "http://schemas.microsoft.com/exchange/services/2006/types";

/// The schema version the requests ask for: Exchange 2010 SP2 and every later on-premises
/// version accept it, and it has every property read here.
pub const SERVER_VERSION: &str = "Exchange2010_SP2";

/// The most events one window may hold (`MaxEntriesReturned`); more fails the read rather
/// than showing part of the calendar.
pub const MAX_ENTRIES: usize = 500;

/// Item ids per `GetItem` request.
pub const GET_ITEM_BATCH: usize = 100;

/// The `SOAPAction` of an operation (the EWS WSDL's soapAction).
pub fn soap_action(operation: &str) -> String {
    format!("{MESSAGES_NS}/{operation}")
}

fn envelope(body: &str) -> String {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            r#"<soap:Envelope xmlns:soap="{soap}" xmlns:t="{types}" xmlns:m="{messages}">"#,
            r#"<soap:Header><t:RequestServerVersion Version="{version}"/></soap:Header>"#,
            r#"<soap:Body>{body}</soap:Body></soap:Envelope>"#
        ),
        soap = SOAP_NS,
        types = TYPES_NS,
        messages = MESSAGES_NS,
        version = SERVER_VERSION,
        body = body
    )
}

/// The properties `FindItem` asks for besides the item id (`BaseShape` `IdOnly`).
pub const FIND_PROPERTIES: [&str; 9] = [
    "item:Subject",
    "calendar:UID",
    "calendar:Start",
    "calendar:End",
    "calendar:IsAllDayEvent",
    "calendar:Location",
    "calendar:IsCancelled",
    "calendar:Organizer",
    "calendar:CalendarItemType",
];

/// `FindItem` over the room mailbox's calendar folder (delegate access: the mailbox named in
/// the `DistinguishedFolderId`), expanded into occurrences by a `CalendarView` of `[from, to)`.
pub fn find_item(mailbox: &str, from_ms: i64, to_ms: i64) -> String {
    let properties: String = FIND_PROPERTIES
        .iter()
        .map(|uri| format!(r#"<t:FieldURI FieldURI="{uri}"/>"#))
        .collect();
    envelope(&format!(
        concat!(
            r#"<m:FindItem Traversal="Shallow">"#,
            r#"<m:ItemShape><t:BaseShape>IdOnly</t:BaseShape>"#,
            r#"<t:AdditionalProperties>{properties}</t:AdditionalProperties></m:ItemShape>"#,
            r#"<m:CalendarView MaxEntriesReturned="{max}" StartDate="{start}" EndDate="{end}"/>"#,
            r#"<m:ParentFolderIds><t:DistinguishedFolderId Id="calendar">"#,
            r#"<t:Mailbox><t:EmailAddress>{mailbox}</t:EmailAddress></t:Mailbox>"#,
            r#"</t:DistinguishedFolderId></m:ParentFolderIds>"#,
            r#"</m:FindItem>"#
        ),
        properties = properties,
        max = MAX_ENTRIES,
        start = utc::format(from_ms),
        end = utc::format(to_ms),
        mailbox = escape(mailbox),
    ))
}

/// `GetItem` for the bodies of `ids`, as plain text.
pub fn get_item(ids: &[ItemId]) -> String {
    let ids: String = ids
        .iter()
        .map(|id| match &id.change_key {
            Some(key) => format!(
                r#"<t:ItemId Id="{}" ChangeKey="{}"/>"#,
                escape(&id.id),
                escape(key)
            ),
            None => format!(r#"<t:ItemId Id="{}"/>"#, escape(&id.id)),
        })
        .collect();
    envelope(&format!(
        concat!(
            r#"<m:GetItem><m:ItemShape><t:BaseShape>IdOnly</t:BaseShape>"#,
            r#"<t:BodyType>Text</t:BodyType>"#,
            r#"<t:AdditionalProperties><t:FieldURI FieldURI="item:Body"/></t:AdditionalProperties>"#,
            r#"</m:ItemShape><m:ItemIds>{ids}</m:ItemIds></m:GetItem>"#
        ),
        ids = ids
    ))
}

impl Element {
    /// The text of the child `name` of the types namespace, when present and not empty.
    fn typed_text(&self, name: &str) -> Option<String> {
        self.child(TYPES_NS, name)
            .map(|c| c.text.clone())
            .filter(|t| !t.is_empty())
    }
}

/// An item's id and change key (`<t:ItemId Id= ChangeKey=/>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemId {
    pub id: String,
    pub change_key: Option<String>,
}

/// One calendar item (or occurrence) of a `FindItem` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundItem {
    pub item_id: ItemId,
    pub uid: Option<String>,
    pub subject: Option<String>,
    pub start_ms: i64,
    pub end_ms: i64,
    pub all_day: bool,
    pub location: Option<String>,
    pub cancelled: bool,
    pub organizer_name: Option<String>,
    pub organizer_email: Option<String>,
}

/// A response message that is not a success: its class, code and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseError {
    /// `Error` or `Warning`.
    pub class: String,
    /// `ErrorNonExistentMailbox`, `ErrorAccessDenied`, ...
    pub code: String,
    pub text: Option<String>,
}

/// Why an answer could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerProblem {
    /// A response message with `ResponseClass` other than `Success`.
    Response(ResponseError),
    /// A SOAP fault (`faultcode`, `faultstring`, and the EWS `ResponseCode` of its detail).
    Fault {
        code: String,
        text: String,
        response_code: Option<String>,
    },
    /// Not the shape documented for the operation.
    NotEws(String),
}

/// The `Body` of an envelope, or the problem a fault in it names.
fn body(root: &Element) -> Result<&Element, AnswerProblem> {
    if !root.is(SOAP_NS, "Envelope") {
        return Err(AnswerProblem::NotEws(format!(
            "the answer is not a SOAP envelope (<{}>)",
            root.name
        )));
    }
    let body = root
        .child(SOAP_NS, "Body")
        .ok_or_else(|| AnswerProblem::NotEws("the envelope has no Body".into()))?;
    if let Some(fault) = body.child(SOAP_NS, "Fault") {
        // faultcode and faultstring are unqualified children (SOAP 1.1).
        let text_of = |name: &str| {
            fault
                .children
                .iter()
                .find(|c| c.name == name)
                .map(|c| c.text.clone())
                .unwrap_or_default()
        };
        let response_code = fault
            .children
            .iter()
            .find(|c| c.name == "detail")
            .and_then(|d| d.child(TYPES_NS, "ResponseCode"))
            .map(|c| c.text.clone());
        return Err(AnswerProblem::Fault {
            code: text_of("faultcode"),
            text: text_of("faultstring"),
            response_code,
        });
    }
    Ok(body)
}

/// A SOAP fault in an answer of any status, if it is one.
pub fn fault_of(xml: &str) -> Option<AnswerProblem> {
    let root = parse(xml).ok()?;
    match body(&root) {
        Err(fault @ AnswerProblem::Fault { .. }) => Some(fault),
        _ => None,
    }
}

/// The response messages `{operation}ResponseMessage` of an answer, as they are (each one's
/// `ResponseClass` is the caller's to read: [`success`]).
fn response_messages<'a>(
    root: &'a Element,
    operation: &str,
) -> Result<Vec<&'a Element>, AnswerProblem> {
    let body = body(root)?;
    let response = body
        .child(MESSAGES_NS, &format!("{operation}Response"))
        .ok_or_else(|| AnswerProblem::NotEws(format!("the answer has no {operation}Response")))?;
    let messages = response
        .child(MESSAGES_NS, "ResponseMessages")
        .ok_or_else(|| AnswerProblem::NotEws("the answer has no ResponseMessages".into()))?;
    Ok(messages.children_named(MESSAGES_NS, &format!("{operation}ResponseMessage")))
}

/// `Err` unless the message's `ResponseClass` is `Success`.
fn success(message: &Element) -> Result<(), ResponseError> {
    let class = message.attr("ResponseClass").unwrap_or_default();
    if class == "Success" {
        return Ok(());
    }
    let text_of = |name: &str| {
        message
            .child(MESSAGES_NS, name)
            .map(|c| c.text.clone())
            .filter(|t| !t.is_empty())
    };
    Err(ResponseError {
        class: class.to_owned(),
        code: text_of("ResponseCode").unwrap_or_else(|| "(no ResponseCode)".into()),
        text: text_of("MessageText"),
    })
}

/// What a `FindItem` answer holds: the items, and whether the view held more than them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub items: Vec<FoundItem>,
    /// `IncludesLastItemInRange`: false when `MaxEntriesReturned` cut the view short.
    pub complete: bool,
}

pub fn read_find_item(xml: &str) -> Result<Found, AnswerProblem> {
    let root = parse(xml).map_err(|e| AnswerProblem::NotEws(format!("not XML: {e}")))?;
    let messages = response_messages(&root, "FindItem")?;
    let [message] = messages.as_slice() else {
        return Err(AnswerProblem::NotEws(format!(
            "{} FindItemResponseMessages for one folder",
            messages.len()
        )));
    };
    success(message).map_err(AnswerProblem::Response)?;
    let folder = message
        .child(MESSAGES_NS, "RootFolder")
        .ok_or_else(|| AnswerProblem::NotEws("FindItemResponseMessage has no RootFolder".into()))?;
    let complete = folder.attr("IncludesLastItemInRange") != Some("false");
    let mut items = Vec::new();
    if let Some(list) = folder.child(TYPES_NS, "Items") {
        for item in list.children_named(TYPES_NS, "CalendarItem") {
            items.push(found_item(item).map_err(AnswerProblem::NotEws)?);
        }
    }
    Ok(Found { items, complete })
}

fn item_id(item: &Element) -> Result<ItemId, String> {
    let id = item
        .child(TYPES_NS, "ItemId")
        .ok_or("a CalendarItem has no ItemId")?;
    Ok(ItemId {
        id: id
            .attr("Id")
            .filter(|v| !v.is_empty())
            .ok_or("an ItemId has no Id")?
            .to_owned(),
        change_key: id.attr("ChangeKey").map(str::to_owned),
    })
}

fn found_item(item: &Element) -> Result<FoundItem, String> {
    let item_id = item_id(item)?;
    let time = |name: &str| -> Result<i64, String> {
        let text = item
            .typed_text(name)
            .ok_or_else(|| format!("a CalendarItem has no {name}"))?;
        utc::parse(&text).ok_or_else(|| format!("{name} '{text}' is not a date-time with a zone"))
    };
    let start_ms = time("Start")?;
    let end_ms = time("End")?;
    let flag = |name: &str| item.typed_text(name).as_deref() == Some("true");
    let organizer = item
        .child(TYPES_NS, "Organizer")
        .and_then(|o| o.child(TYPES_NS, "Mailbox"));
    Ok(FoundItem {
        item_id,
        uid: item.typed_text("UID"),
        subject: item.typed_text("Subject"),
        start_ms,
        end_ms,
        all_day: flag("IsAllDayEvent"),
        location: item.typed_text("Location"),
        cancelled: flag("IsCancelled"),
        organizer_name: organizer.and_then(|m| m.typed_text("Name")),
        organizer_email: organizer.and_then(|m| m.typed_text("EmailAddress")),
    })
}

/// One `GetItemResponseMessage`: the item's body text, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GotItem {
    Body { id: String, text: Option<String> },
    Failed(ResponseError),
}

/// The messages of a `GetItem` answer, in request order.
pub fn read_get_item(xml: &str) -> Result<Vec<GotItem>, AnswerProblem> {
    let root = parse(xml).map_err(|e| AnswerProblem::NotEws(format!("not XML: {e}")))?;
    let messages = response_messages(&root, "GetItem")?;
    let mut got = Vec::with_capacity(messages.len());
    for message in messages {
        if let Err(e) = success(message) {
            got.push(GotItem::Failed(e));
            continue;
        }
        let item = message
            .child(MESSAGES_NS, "Items")
            .and_then(|items| items.children.iter().find(|c| c.ns == TYPES_NS))
            .ok_or_else(|| AnswerProblem::NotEws("a GetItemResponseMessage has no item".into()))?;
        let id = item_id(item).map_err(AnswerProblem::NotEws)?.id;
        got.push(GotItem::Body {
            id,
            text: item.typed_text("Body"),
        });
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_item_names_the_room_mailbox_and_the_window() {
        let xml = find_item(
            "board&co@corp.example",
            1_799_971_200_000,
            1_800_057_600_000,
        );
        let root = parse(&xml).unwrap();
        assert!(root.is(SOAP_NS, "Envelope"));
        let header = root.child(SOAP_NS, "Header").unwrap();
        let version = header.child(TYPES_NS, "RequestServerVersion").unwrap();
        assert_eq!(version.attr("Version"), Some(SERVER_VERSION));
        let find = root
            .child(SOAP_NS, "Body")
            .unwrap()
            .child(MESSAGES_NS, "FindItem")
            .unwrap();
        assert_eq!(find.attr("Traversal"), Some("Shallow"));
        let view = find.child(MESSAGES_NS, "CalendarView").unwrap();
        assert_eq!(view.attr("StartDate"), Some("2027-01-15T00:00:00Z"));
        assert_eq!(view.attr("EndDate"), Some("2027-01-16T00:00:00Z"));
        assert_eq!(view.attr("MaxEntriesReturned"), Some("500"));
        let folder = find
            .child(MESSAGES_NS, "ParentFolderIds")
            .unwrap()
            .child(TYPES_NS, "DistinguishedFolderId")
            .unwrap();
        assert_eq!(folder.attr("Id"), Some("calendar"));
        let address = folder
            .child(TYPES_NS, "Mailbox")
            .unwrap()
            .child(TYPES_NS, "EmailAddress")
            .unwrap();
        assert_eq!(address.text, "board&co@corp.example");
    }

    #[test]
    fn get_item_asks_for_text_bodies() {
        let xml = get_item(&[ItemId {
            id: "AAMk\"1".into(),
            change_key: Some("DwAA".into()),
        }]);
        let root = parse(&xml).unwrap();
        let get = root
            .child(SOAP_NS, "Body")
            .unwrap()
            .child(MESSAGES_NS, "GetItem")
            .unwrap();
        let shape = get.child(MESSAGES_NS, "ItemShape").unwrap();
        assert_eq!(shape.child(TYPES_NS, "BodyType").unwrap().text, "Text");
        let id = get
            .child(MESSAGES_NS, "ItemIds")
            .unwrap()
            .child(TYPES_NS, "ItemId")
            .unwrap();
        assert_eq!(id.attr("Id"), Some("AAMk\"1"));
        assert_eq!(id.attr("ChangeKey"), Some("DwAA"));
    }

    #[test]
    fn answers_are_read_by_namespace_not_prefix() {
        let xml = format!(
            concat!(
                r#"<s:Envelope xmlns:s="{soap}"><s:Body>"#,
                r#"<FindItemResponse xmlns="{m}" xmlns:x="{t}"><ResponseMessages>"#,
                r#"<FindItemResponseMessage ResponseClass="Success"><ResponseCode>NoError</ResponseCode>"#,
                r#"<RootFolder TotalItemsInView="1" IncludesLastItemInRange="true"><x:Items>"#,
                r#"<x:CalendarItem><x:ItemId Id="A1" ChangeKey="C1"/><x:Subject>Review &amp; plan</x:Subject>"#,
                r#"<x:UID>040000008200E0</x:UID><x:Start>2027-01-15T09:00:00Z</x:Start><x:End>2027-01-15T10:00:00Z</x:End>"#,
                r#"<x:IsAllDayEvent>false</x:IsAllDayEvent><x:Location>Board</x:Location><x:IsCancelled>true</x:IsCancelled>"#,
                r#"<x:Organizer><x:Mailbox><x:Name>Ann</x:Name><x:EmailAddress>ann@corp.example</x:EmailAddress></x:Mailbox></x:Organizer>"#,
                r#"</x:CalendarItem></x:Items></RootFolder></FindItemResponseMessage></ResponseMessages></FindItemResponse>"#,
                r#"</s:Body></s:Envelope>"#
            ),
            soap = SOAP_NS,
            m = MESSAGES_NS,
            t = TYPES_NS
        );
        let found = read_find_item(&xml).unwrap();
        assert!(found.complete);
        let item = &found.items[0];
        assert_eq!(item.subject.as_deref(), Some("Review & plan"));
        assert_eq!(item.uid.as_deref(), Some("040000008200E0"));
        assert_eq!(item.end_ms - item.start_ms, 3_600_000);
        assert!(item.cancelled && !item.all_day);
        assert_eq!(item.organizer_email.as_deref(), Some("ann@corp.example"));
        // The same elements in another namespace are not EWS.
        let wrong = xml.replace(MESSAGES_NS, "urn:other");
        assert!(matches!(
            read_find_item(&wrong),
            Err(AnswerProblem::NotEws(_))
        ));
    }

    #[test]
    fn error_messages_and_faults_are_told_apart() {
        let xml = format!(
            concat!(
                r#"<s:Envelope xmlns:s="{soap}"><s:Body><m:FindItemResponse xmlns:m="{m}"><m:ResponseMessages>"#,
                r#"<m:FindItemResponseMessage ResponseClass="Error"><m:MessageText>No mailbox.</m:MessageText>"#,
                r#"<m:ResponseCode>ErrorNonExistentMailbox</m:ResponseCode><m:DescriptiveLinkKey>0</m:DescriptiveLinkKey>"#,
                r#"</m:FindItemResponseMessage></m:ResponseMessages></m:FindItemResponse></s:Body></s:Envelope>"#
            ),
            soap = SOAP_NS,
            m = MESSAGES_NS
        );
        match read_find_item(&xml) {
            Err(AnswerProblem::Response(e)) => {
                assert_eq!(e.code, "ErrorNonExistentMailbox");
                assert_eq!(e.class, "Error");
                assert_eq!(e.text.as_deref(), Some("No mailbox."));
            }
            other => panic!("{other:?}"),
        }
        let fault = format!(
            concat!(
                r#"<s:Envelope xmlns:s="{soap}"><s:Body><s:Fault><faultcode xmlns:a="{t}">a:ErrorSchemaValidation</faultcode>"#,
                r#"<faultstring>The request failed schema validation.</faultstring><detail><e:ResponseCode xmlns:e="{t}">ErrorSchemaValidation</e:ResponseCode></detail>"#,
                r#"</s:Fault></s:Body></s:Envelope>"#
            ),
            soap = SOAP_NS,
            t = TYPES_NS
        );
        assert!(matches!(
            fault_of(&fault),
            Some(AnswerProblem::Fault { response_code: Some(ref c), .. }) if c == "ErrorSchemaValidation"
        ));
        assert!(fault_of("<html/>").is_none());
    }
}
