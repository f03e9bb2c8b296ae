//! `webhooks`: an enterprise's subscriptions (`/api/webhooks`), their deliveries, a test
//! delivery, and `listen`, a local receiver that checks each delivery's signature and prints
//! the event: enough to try webhooks, or to watch them while setting up a real receiver.

use crate::client::{CliError, Client, json_body};
use crate::output::{cell, json, table};
use reqwest::Method;
use roomlink_domain::secret::Secret;
use roomlink_domain::webhook::signature;
use serde_json::{Value, json as body};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// What `webhooks` was asked to do.
#[derive(Debug)]
pub enum WebhookAction<'a> {
    List,
    Create {
        url: &'a str,
        events: &'a [String],
        description: Option<&'a str>,
    },
    Deliveries {
        id: &'a str,
        limit: usize,
    },
    Test {
        id: &'a str,
    },
    Pause {
        id: &'a str,
    },
    Resume {
        id: &'a str,
    },
    Delete {
        id: &'a str,
    },
}

pub fn webhooks(
    client: &Client,
    action: &WebhookAction<'_>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let call = |method: Method, segments: &[&str], payload: Option<Value>| {
        let mut request = client.request(method, client.url(segments, &[]));
        if let Some(payload) = payload {
            request = request.json(&payload);
        }
        json_body(client.send(request)?)
    };
    match action {
        WebhookAction::List => {
            let all = call(Method::GET, &["api", "webhooks"], None)?;
            if as_json {
                return Ok(json(out, &all)?);
            }
            let rows: Vec<Vec<String>> = all
                .as_array()
                .map(|a| a.iter().map(row).collect())
                .unwrap_or_default();
            table(out, &["ID", "URL", "EVENTS", "STATE"], &rows)?;
        }
        WebhookAction::Create {
            url,
            events,
            description,
        } => {
            let created = call(
                Method::POST,
                &["api", "webhooks"],
                Some(body!({"url": url, "eventTypes": events, "description": description})),
            )?;
            if as_json {
                return Ok(json(out, &created)?);
            }
            writeln!(out, "created webhook {}", cell(&created["id"]))?;
            writeln!(
                out,
                "signing secret (shown this once; keep it where the receiver can read it):\n{}",
                cell(&created["secret"])
            )?;
        }
        WebhookAction::Deliveries { id, limit } => {
            let (page, _) = client.page(
                &["api", "webhooks", id, "deliveries"],
                &[("limit", &limit.to_string())],
                "a deliveries",
            )?;
            if as_json {
                return Ok(json(out, &Value::Array(page))?);
            }
            let rows: Vec<Vec<String>> = page
                .iter()
                .map(|d| {
                    vec![
                        cell(&d["id"]),
                        cell(&d["eventType"]),
                        cell(&d["state"]),
                        cell(&d["attempts"]),
                        match (&d["lastStatus"], &d["lastError"]) {
                            (Value::Null, Value::Null) => String::new(),
                            (Value::Null, error) => cell(error),
                            (status, _) => cell(status),
                        },
                        cell(&d["eventId"]),
                    ]
                })
                .collect();
            table(
                out,
                &[
                    "ID",
                    "EVENT",
                    "STATE",
                    "ATTEMPTS",
                    "LAST ANSWER",
                    "WEBHOOK-ID",
                ],
                &rows,
            )?;
        }
        WebhookAction::Test { id } => {
            let queued = call(Method::POST, &["api", "webhooks", id, "test"], None)?;
            if as_json {
                return Ok(json(out, &queued)?);
            }
            writeln!(out, "test event {} queued", cell(&queued["eventId"]))?;
        }
        WebhookAction::Pause { id } | WebhookAction::Resume { id } => {
            let verb = if matches!(action, WebhookAction::Pause { .. }) {
                "pause"
            } else {
                "resume"
            };
            let s = call(Method::POST, &["api", "webhooks", id, verb], None)?;
            if as_json {
                return Ok(json(out, &s)?);
            }
            writeln!(out, "{}", row(&s).join("  "))?;
        }
        WebhookAction::Delete { id } => {
            call(Method::DELETE, &["api", "webhooks", id], None)?;
            if !as_json {
                writeln!(out, "deleted webhook {id}")?;
            }
        }
    }
    Ok(())
}

fn row(s: &Value) -> Vec<String> {
    let events: Vec<String> = s["eventTypes"]
        .as_array()
        .map(|a| a.iter().map(cell).collect())
        .unwrap_or_default();
    let state = match &s["paused"] {
        Value::Null => "active".to_owned(),
        paused => format!("paused: {}", cell(&paused["reason"])),
    };
    vec![cell(&s["id"]), cell(&s["url"]), events.join(","), state]
}

/// The largest body `listen` reads.
const MAX_BODY: usize = 1 << 20;
/// How far a delivery's timestamp may be from this clock (Standard Webhooks: 5 minutes).
const TOLERANCE_S: i64 = 300;

/// Serves `bind` until interrupted (or `count` deliveries): answers 204 to every delivery whose
/// signature checks, 401 otherwise, and prints one line per delivery.
pub fn listen(
    bind: &str,
    secret: &str,
    count: Option<usize>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let secret = Secret::new(secret.to_owned());
    let listener = TcpListener::bind(bind)
        .map_err(|e| CliError::other(format!("cannot listen on {bind}: {e}")))?;
    let address = listener
        .local_addr()
        .map_err(|e| CliError::other(format!("{e}")))?;
    writeln!(out, "listening on http://{address}/ for signed deliveries")?;
    out.flush()?;
    let mut seen = 0;
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let line = match receive(&mut stream, &secret) {
            Ok((status, line)) => {
                let _ = answer(&mut stream, status);
                line
            }
            Err(why) => {
                let _ = answer(&mut stream, 400);
                format!("refused a request: {why}")
            }
        };
        writeln!(out, "{line}")?;
        out.flush()?;
        seen += 1;
        if count.is_some_and(|n| seen >= n) {
            break;
        }
    }
    Ok(())
}

fn answer(stream: &mut TcpStream, status: u16) -> std::io::Result<()> {
    let reason = match status {
        204 => "No Content",
        401 => "Unauthorized",
        _ => "Bad Request",
    };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
}

/// Reads one HTTP/1.1 request: the status to answer and the line to print.
fn receive(stream: &mut TcpStream, secret: &Secret) -> Result<(u16, String), String> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader
        .read_line(&mut request_line)
        .map_err(|e| e.to_string())?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .ok_or("no content-length")?;
    if length > MAX_BODY {
        return Err(format!("a body of {length} bytes"));
    }
    let mut bytes = vec![0; length];
    reader.read_exact(&mut bytes).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| "a body that is not UTF-8")?;
    let (Some(id), Some(timestamp), Some(signed)) = (
        header("webhook-id"),
        header("webhook-timestamp").and_then(|t| t.parse::<i64>().ok()),
        header("webhook-signature"),
    ) else {
        return Err("not a Standard Webhooks delivery (webhook-* headers missing)".into());
    };
    let now = roomlink_domain::ports::Clock::now_ms(&roomlink_domain::system::SystemClock) / 1000;
    if (now - timestamp).abs() > TOLERANCE_S {
        return Ok((
            401,
            format!("{id}: refused, timestamp {timestamp} is more than 5 minutes off"),
        ));
    }
    if !signature::verify(secret, id, timestamp, &text, signed) {
        return Ok((
            401,
            format!("{id}: refused, the signature does not match the secret"),
        ));
    }
    let event: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    Ok((
        204,
        format!(
            "{} {} {} {}",
            cell(&event["timestamp"]),
            cell(&event["type"]),
            id,
            event["data"]
        ),
    ))
}
