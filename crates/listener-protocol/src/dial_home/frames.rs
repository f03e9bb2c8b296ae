//! The socket's frames: roomlink's requests `{"id","method","path","body"}` and the listener's
//! answers `{"id","status","version","body"}` (docs/listener-protocol.md, "Frames").

use crate::server::Answer;
use crate::version::Version;
use crate::wire::Failure;
use serde_json::{Value, json};

/// One request as roomlink sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFrame {
    pub id: u64,
    pub method: String,
    pub path: String,
    /// The JSON body; `null` when there is none (`GET /v1/info`).
    pub body: Value,
}

/// What a frame turned out to be.
#[derive(Debug, PartialEq)]
pub enum Decoded {
    Request(RequestFrame),
    /// Not the protocol, but with an id: answered `400` with this failure.
    Invalid {
        id: u64,
        failure: Failure,
    },
    /// Not the protocol and no id to answer: dropped (the reason is logged).
    Unanswerable(String),
}

pub fn decode(frame: &[u8]) -> Decoded {
    let value: Value = match serde_json::from_slice(frame) {
        Ok(value) => value,
        Err(e) => return Decoded::Unanswerable(format!("not JSON: {e}")),
    };
    let Value::Object(mut fields) = value else {
        return Decoded::Unanswerable("not a JSON object".into());
    };
    let Some(id) = fields.get("id").and_then(Value::as_u64) else {
        return Decoded::Unanswerable("no unsigned integer id".into());
    };
    let text = |fields: &serde_json::Map<String, Value>, name: &str| {
        fields.get(name).and_then(Value::as_str).map(str::to_owned)
    };
    match (text(&fields, "method"), text(&fields, "path")) {
        (Some(method), Some(path)) => Decoded::Request(RequestFrame {
            id,
            method,
            path,
            body: fields.remove("body").unwrap_or(Value::Null),
        }),
        _ => Decoded::Invalid {
            id,
            failure: Failure::listener(
                400,
                "bad_request",
                "the frame is not a request: it needs a string method and path",
            ),
        },
    }
}

/// The answer frame's text. A body that is not the protocol (the simulator's garbage) travels
/// as a JSON string, so the frame itself stays readable.
pub fn encode(id: u64, version: Version, answer: AnswerBody) -> String {
    let (status, body) = match answer {
        AnswerBody::Json { status, body } => (status, body),
        AnswerBody::NotProtocol(text) => (200, Value::String(text)),
    };
    json!({ "id": id, "status": status, "version": version.to_string(), "body": body }).to_string()
}

/// The part of an [`Answer`] that becomes a frame (a reset closes the socket instead).
pub enum AnswerBody {
    Json { status: u16, body: Value },
    NotProtocol(String),
}

impl AnswerBody {
    /// `None` for [`Answer::Reset`].
    pub fn of(answer: Answer) -> Option<AnswerBody> {
        match answer {
            Answer::Json { status, body } => Some(AnswerBody::Json { status, body }),
            Answer::NotProtocol(text) => Some(AnswerBody::NotProtocol(text)),
            Answer::Reset => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_decode_with_their_body() {
        let d = decode(br#"{"id":17,"method":"POST","path":"/v1/status","body":{"endpoints":[]}}"#);
        assert_eq!(
            d,
            Decoded::Request(RequestFrame {
                id: 17,
                method: "POST".into(),
                path: "/v1/status".into(),
                body: json!({"endpoints": []}),
            })
        );
        let Decoded::Request(info) = decode(br#"{"id":1,"method":"GET","path":"/v1/info"}"#) else {
            panic!("a request");
        };
        assert_eq!(info.body, Value::Null);
    }

    #[test]
    fn frames_with_an_id_are_answered_and_others_dropped() {
        for bad in [
            &b"{"[..],
            b"[1]",
            br#"{"method":"GET","path":"/v1/info"}"#,
            br#"{"id":-1}"#,
        ] {
            assert!(matches!(decode(bad), Decoded::Unanswerable(_)), "{bad:?}");
        }
        let Decoded::Invalid { id, failure } = decode(br#"{"id":5,"method":3}"#) else {
            panic!("invalid");
        };
        assert_eq!(
            (id, failure.status, failure.failure),
            (5, 400, "bad_request")
        );
    }

    #[test]
    fn answers_carry_id_status_version_and_body() {
        let v = Version::new(3, 0, 0);
        let text = encode(
            9,
            v,
            AnswerBody::Json {
                status: 404,
                body: json!({"a": 1}),
            },
        );
        let frame: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            frame,
            json!({"id": 9, "status": 404, "version": "3.0.0", "body": {"a": 1}})
        );
        let text = encode(9, v, AnswerBody::NotProtocol("<html>".into()));
        let frame: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(frame["body"], "<html>");
    }
}
