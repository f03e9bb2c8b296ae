//! Reading request bodies with our own limits and content-type rules, so that every refusal
//! is a catalog error (never actix's default 400/413/415 pages).

use actix_web::HttpRequest;
use actix_web::http::header;
use actix_web::web::{Bytes, BytesMut, Payload};
use futures::StreamExt;
use roomlink_domain::{Error, ErrorKind};
use serde_json::Value;

/// JSON bodies (an endpoint, a listener, modifiedFields) are small: 256 KiB is plenty.
pub const JSON_MAX_BYTES: usize = 256 * 1024;

pub const CSV_TYPES: [&str; 3] = [
    "text/csv",
    "application/vnd.ms-excel",
    "application/octet-stream",
];

fn payload_too_large(limit: usize) -> Error {
    Error::new(
        ErrorKind::PayloadTooLarge,
        format!("The request body exceeds the limit of {limit} bytes."),
    )
    .with("limitBytes", limit)
}

fn unsupported(content_type: &str, supported: &[&str]) -> Error {
    Error::new(
        ErrorKind::UnsupportedMediaType,
        format!(
            "Content type '{}' is not supported here; send one of {}.",
            content_type,
            supported.join(", ")
        ),
    )
    .with("contentType", content_type)
    .with("supported", supported.to_vec())
}

/// The media type without parameters, lower-cased; `None` when the header is absent.
fn media_type(req: &HttpRequest) -> Option<String> {
    let raw = req.headers().get(header::CONTENT_TYPE)?;
    let text = raw.to_str().unwrap_or("invalid");
    Some(
        text.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase(),
    )
}

/// Reads at most `limit` bytes. A declared length over the limit is refused before reading.
pub async fn read_limited(
    req: &HttpRequest,
    mut payload: Payload,
    limit: usize,
) -> Result<Bytes, Error> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(payload_too_large(limit));
    }
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0).min(limit));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk
            .map_err(|e| Error::invalid(format!("the request body could not be read: {e}")))?;
        if body.len() + chunk.len() > limit {
            return Err(payload_too_large(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// A JSON body: `application/json` (or no content type). Malformed JSON is
/// `JsonParseException`.
pub async fn read_json(req: &HttpRequest, payload: Payload) -> Result<Value, Error> {
    if let Some(media) = media_type(req)
        && media != "application/json"
        && !media.ends_with("+json")
    {
        return Err(unsupported(&media, &["application/json"]));
    }
    let bytes = read_limited(req, payload, JSON_MAX_BYTES).await?;
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::new(
            ErrorKind::JsonParseException,
            format!(
                "The request body is not well-formed JSON (line {}, column {}).",
                e.line(),
                e.column()
            ),
        )
    })
}

/// A JSON object body; anything else is `JsonMappingException`.
pub async fn read_json_object(
    req: &HttpRequest,
    payload: Payload,
    entity: &str,
) -> Result<serde_json::Map<String, Value>, Error> {
    match read_json(req, payload).await? {
        Value::Object(map) => Ok(map),
        _ => Err(Error::json_mapping(
            "$",
            format!("expected a JSON object ({entity})"),
        )),
    }
}

/// A CSV upload body: one of [`CSV_TYPES`], at most the domain's CSV bound.
pub async fn read_csv(req: &HttpRequest, payload: Payload) -> Result<Bytes, Error> {
    match media_type(req) {
        Some(media) if CSV_TYPES.contains(&media.as_str()) => {}
        other => {
            return Err(unsupported(
                other.as_deref().unwrap_or("(none)"),
                &CSV_TYPES,
            ));
        }
    }
    read_limited(req, payload, roomlink_domain::rules::csv::MAX_BYTES)
        .await
        .map_err(|e| {
            if e.kind() == ErrorKind::PayloadTooLarge {
                roomlink_domain::rules::csv::too_large()
            } else {
                e
            }
        })
}
