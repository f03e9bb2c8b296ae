//! The Exchange Web Services client: reads a room mailbox's calendar with the service
//! account's delegate access (docs/calendars.md, "EXCHANGE").
//!
//! One `FindItem` (a `CalendarView` of the window on the mailbox's `calendar` folder), then
//! `GetItem` for the bodies (FindItem does not return them), at most 100 ids a request.
//! HTTP Basic with the configured account (`DOMAIN\user` when a domain is set); NTLM and
//! Kerberos are not implemented. Redirects are not followed; one deadline bounds the whole
//! read; an answer is at most 16 MiB. Failure texts name the server's host and what failed,
//! never the password, the Authorization header or the answer's body.

use super::soap::{self, AnswerProblem, FoundItem, GotItem, ItemId};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use roomlink_listener_protocol::wire::{WireEvent, WireOrganizer};
use std::collections::HashMap;
use std::time::Duration;
use zeroize::Zeroizing;

/// The largest answer read.
const ANSWER_MAX: usize = 16 << 20;

/// `[0001-01-01T00:00:00Z, 10000-01-01T00:00:00Z)`: the `CalendarView` dates sent have
/// four-digit years. Before it they would be `0000-...` or `-001-...`, not xs:dateTime, so
/// not EWS (docs/calendars.md, "Checked against Microsoft's schema").
const FIRST_MS: i64 = -62_135_596_800_000;
const END_MS: i64 = 253_402_300_800_000;

/// Where and as whom.
pub struct ExchangeConfig {
    pub soap_uri: String,
    pub username: String,
    pub password: Zeroizing<String>,
    pub domain: Option<String>,
    pub connect_timeout: Duration,
    /// The whole read (FindItem and every GetItem) must be done by then.
    pub timeout: Duration,
}

pub struct ExchangeClient {
    http: reqwest::Client,
    soap_uri: String,
    host: String,
    /// `Basic base64(user:password)`, marked sensitive.
    authorization: HeaderValue,
    timeout: Duration,
}

impl std::fmt::Debug for ExchangeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangeClient")
            .field("soap_uri", &self.soap_uri)
            .finish_non_exhaustive()
    }
}

/// The host (and port) of a URL, for messages.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_owned()
}

impl ExchangeClient {
    pub fn new(config: ExchangeConfig) -> Result<Self, String> {
        let user = match &config.domain {
            Some(domain) if !domain.is_empty() => format!("{domain}\\{}", config.username),
            _ => config.username.clone(),
        };
        let token = Zeroizing::new(BASE64.encode(format!("{user}:{}", config.password.as_str())));
        let mut authorization = HeaderValue::from_str(&format!("Basic {}", token.as_str()))
            .map_err(|_| "calendar.exchange: the username or password cannot be sent".to_owned())?;
        authorization.set_sensitive(true);
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            // Credentials go to the configured server only.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .tls_backend_rustls()
            .build()
            .map_err(|e| format!("calendar.exchange: cannot set up the HTTP client: {e}"))?;
        Ok(ExchangeClient {
            http,
            host: host_of(&config.soap_uri),
            soap_uri: config.soap_uri,
            authorization,
            timeout: config.timeout,
        })
    }

    /// The events of `mailbox`'s calendar overlapping `[from_ms, to_ms)`, in start order.
    /// `Err` is the failure's text: `Exchange {host}, calendar {mailbox}: {what}`.
    pub async fn events(
        &self,
        mailbox: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<WireEvent>, String> {
        let read = tokio::time::timeout(self.timeout, self.read(mailbox, from_ms, to_ms)).await;
        let outcome = match read {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        };
        outcome.map_err(|what| format!("Exchange {}, calendar {mailbox}: {what}", self.host))
    }

    async fn read(
        &self,
        mailbox: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<WireEvent>, String> {
        let years = FIRST_MS..END_MS;
        if !years.contains(&from_ms) || !years.contains(&to_ms) {
            return Err("the window must lie within the years 1 to 9999".to_owned());
        }
        let answer = self
            .call("FindItem", soap::find_item(mailbox, from_ms, to_ms))
            .await?;
        let found = soap::read_find_item(&answer).map_err(|p| problem(&p, mailbox))?;
        if !found.complete {
            return Err(format!(
                "more than {} events in the window; ask for a shorter one",
                soap::MAX_ENTRIES
            ));
        }
        let mut bodies: HashMap<String, Option<String>> = HashMap::new();
        let ids: Vec<ItemId> = found.items.iter().map(|i| i.item_id.clone()).collect();
        for batch in ids.chunks(soap::GET_ITEM_BATCH) {
            let answer = self.call("GetItem", soap::get_item(batch)).await?;
            let got = soap::read_get_item(&answer).map_err(|p| problem(&p, mailbox))?;
            if got.len() != batch.len() {
                return Err(format!(
                    "GetItem answered {} items for {} ids",
                    got.len(),
                    batch.len()
                ));
            }
            for (asked, item) in batch.iter().zip(got) {
                match item {
                    GotItem::Body { text, .. } => {
                        bodies.insert(asked.id.clone(), text);
                    }
                    // Deleted since FindItem: the event is gone.
                    GotItem::Failed(e) if e.code == "ErrorItemNotFound" => {}
                    GotItem::Failed(e) => {
                        return Err(problem(&AnswerProblem::Response(e), mailbox));
                    }
                }
            }
        }
        let mut events: Vec<WireEvent> = found
            .items
            .into_iter()
            .filter_map(|item| {
                let body = bodies.remove(&item.item_id.id)?;
                Some(event(item, body))
            })
            .collect();
        events.sort_by(|a, b| (a.start, a.end, &a.uid).cmp(&(b.start, b.end, &b.uid)));
        Ok(events)
    }

    /// One SOAP request; the answer's text when it is `200`.
    async fn call(&self, operation: &str, envelope: String) -> Result<String, String> {
        let response = self
            .http
            .post(&self.soap_uri)
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "text/xml; charset=utf-8")
            .header(ACCEPT, "text/xml")
            .header(
                "SOAPAction",
                format!("\"{}\"", soap::soap_action(operation)),
            )
            .body(envelope)
            .send()
            .await
            .map_err(|e| transport_failure(&e))?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(format!("refused the account ({status})"));
        }
        let text = read_capped(response).await?;
        if status != StatusCode::OK {
            return Err(match soap::fault_of(&text) {
                Some(fault) => format!("{operation}: {}", describe(&fault)),
                None => format!("{operation} answered {status}"),
            });
        }
        Ok(text)
    }
}

async fn read_capped(mut response: reqwest::Response) -> Result<String, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport_failure(&e))? {
        if bytes.len() + chunk.len() > ANSWER_MAX {
            return Err(format!("an answer is larger than {} MiB", ANSWER_MAX >> 20));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| "an answer is not UTF-8".to_owned())
}

fn transport_failure(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "no answer in time".to_owned()
    } else if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        "the connection failed before a whole answer".to_owned()
    }
}

/// A server text, one line and short (they are the server's words, never ours).
fn short(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 200 {
        format!("{}...", line.chars().take(200).collect::<String>())
    } else {
        line
    }
}

fn describe(problem: &AnswerProblem) -> String {
    match problem {
        AnswerProblem::Response(e) => match &e.text {
            Some(text) => format!("{} ({})", e.code, short(text)),
            None => e.code.clone(),
        },
        AnswerProblem::Fault {
            code,
            text,
            response_code,
        } => format!(
            "SOAP fault {} ({})",
            response_code.as_deref().unwrap_or(code),
            short(text)
        ),
        AnswerProblem::NotEws(why) => format!("the answer is not EWS: {why}"),
    }
}

/// The failure text of an answer's problem; the two codes rooms meet most are said plainly.
fn problem(problem: &AnswerProblem, mailbox: &str) -> String {
    match problem {
        AnswerProblem::Response(e) if e.code == "ErrorNonExistentMailbox" => {
            format!("there is no mailbox {mailbox} (ErrorNonExistentMailbox)")
        }
        AnswerProblem::Response(e) if e.code == "ErrorAccessDenied" => format!(
            "the account may not read the calendar of {mailbox} (ErrorAccessDenied); grant it delegate access"
        ),
        other => describe(other),
    }
}

fn event(item: FoundItem, body: Option<String>) -> WireEvent {
    let organizer = (item.organizer_name.is_some() || item.organizer_email.is_some()).then_some(
        WireOrganizer {
            name: item.organizer_name,
            email: item.organizer_email,
        },
    );
    WireEvent {
        uid: item.uid.unwrap_or_else(|| item.item_id.id.clone()),
        id: item.item_id.id,
        title: item.subject,
        start: item.start_ms,
        end: item.end_ms,
        location: item.location,
        body,
        organizer,
        conference_uris: Vec::new(),
        cancelled: item.cancelled,
        all_day: item.all_day,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_leave_paths_and_userinfo_out() {
        assert_eq!(
            host_of("https://mail.corp.example/EWS/Exchange.asmx"),
            "mail.corp.example"
        );
        assert_eq!(host_of("http://127.0.0.1:8443/EWS"), "127.0.0.1:8443");
    }

    #[test]
    fn the_client_never_prints_its_authorization() {
        let client = ExchangeClient::new(ExchangeConfig {
            soap_uri: "https://mail.corp.example/EWS/Exchange.asmx".into(),
            username: "svc".into(),
            password: Zeroizing::new("ews-pass-77".into()),
            domain: Some("CORP".into()),
            connect_timeout: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
        })
        .unwrap();
        let printed = format!("{client:?}");
        assert!(!printed.contains("ews-pass-77") && !printed.contains("Basic"));
        assert!(client.authorization.is_sensitive());
        let expected = format!("Basic {}", BASE64.encode("CORP\\svc:ews-pass-77"));
        assert_eq!(client.authorization.to_str().unwrap(), expected);
    }
}
