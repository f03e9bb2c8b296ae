//! Arbitrary input as a PATCH body, merged into sample endpoints by `rules::patch`. Input that
//! is JSON is taken as it is; other bytes are decoded into a JSON object whose keys are mostly
//! real field names, so the fuzzer reaches the field rules without learning JSON first.
//!
//! Never a panic, and the promises of `rules::patch`:
//! - a refusal is `Invalid`, `JsonMappingException` or `Unmodifiable`, never an internal error;
//! - fields the body does not name are unchanged; `id` never changes; ANNEX_O stays;
//! - the password follows the body (absent keeps, null or "" clears, text sets);
//! - the result re-validates: a complete endpoint, equal after a PUT of its own JSON, after
//!   the storage record, and after applying the same PATCH again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_domain::endpoint::{Endpoint, EndpointProfile, Field};
use roomlink_domain::enums::DialStyle;
use roomlink_domain::error::{Error, ErrorKind};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::rules::patch::EndpointPatch;
use roomlink_domain::rules::put::EndpointBody;
use roomlink_domain::rules::{EndpointDraft, put};
use roomlink_domain::secret::SecretChange;
use serde_json::{Map, Number, Value, json};

fn sample(id: &str, body: Value) -> Endpoint {
    let draft = put::insert(body.as_object().expect("an object")).expect("a valid sample");
    Endpoint::new(
        EndpointId::from_trusted(id.to_owned()),
        EnterpriseId::from_trusted("ent".to_owned()),
        draft.profile,
        None,
    )
    .expect("a complete sample")
}

fn samples() -> [Endpoint; 2] {
    [
        sample(
            "5f0c9289e4b0c0c6485f4cfa",
            json!({
                "name": "Boardroom", "ipAddress": "127.77.0.1", "port": 443,
                "listenerServiceId": "550c9289e4b0c0c6485f4cfa", "controlProtocol": "TANDBERG_SSH",
                "signalingProtocol": "SIP", "dialStyle": "ANNEX_O", "addressStyle": "HOSTNAME",
                "username": "admin", "calendarId": "board@corp.example", "calendarType": "GOOGLE",
                "customData": {"correlationId": "x"}, "announcementId": "a1", "assetId": "tag-7",
                "autoJoinMode": "ENABLED", "calendarPushMode": "ENABLED", "contactListId": "c1",
                "elevation": 102.0, "externalId": "ext",
                "geolocation": {"latitude": 1.5, "longitude": -2.0},
                "inMeetingControls": "ENABLED", "location": "Floor 3", "manualMeetingDialer": "ENABLED",
                "meetingPrivacyMode": "REDACTED", "meshBaseUri": "https://mesh.example",
                "pointOfContact": "it@corp.example", "registerToSipProxy": "AUTO",
                "validatePasscodes": "ENABLED", "zeroTouchType": "STATIC", "password": "pw"
            }),
        ),
        sample("e1", json!({"name": "Room"})),
    ]
}

/// Values the field rules care about, for the byte decoder to pick from.
const WORDS: &[&str] = &[
    "",
    " ",
    "ANNEX_O",
    "annex_o",
    "SIP_URI",
    "E164",
    "TANDBERG_SSH",
    "TANDBERG_HTTP",
    "MESH",
    "SIP",
    "H323",
    "HOSTNAME",
    "IP_ADDRESS",
    "GOOGLE",
    "EXCHANGE",
    "ENABLED",
    "DISABLED",
    "STATIC",
    "ROTATING",
    "AUTO",
    "REDACTED",
    "https://mesh.example",
    "http://[::1]:8080/x",
    "127.0.0.1",
    "::1",
    "room.example",
    "e1",
    "5f0c9289e4b0c0c6485f4cfa",
    "a@b.example",
    "'=1+2",
    "-12.5",
    "65535",
    "65536",
    "0",
    "latitude",
    "longitude",
    "modifiedFields",
];

/// Reads the fuzzer's bytes as decisions.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }

    fn key(&mut self) -> Option<String> {
        let pick = usize::from(self.byte()?);
        let fields = Field::ALL.len();
        Some(match pick {
            p if p < fields => Field::ALL[p].json_name().to_owned(),
            p if p == fields => "id".to_owned(),
            p if p == fields + 1 => "password".to_owned(),
            p if p == fields + 2 => "modifiedFields".to_owned(),
            p if p < 200 => Field::ALL[p % fields].json_name().to_owned(),
            _ => {
                let n = usize::from(self.byte().unwrap_or(0) % 16);
                String::from_utf8_lossy(self.take(n)).into_owned()
            }
        })
    }

    fn value(&mut self, depth: u8) -> Value {
        let Some(kind) = self.byte() else {
            return Value::Null;
        };
        match kind % 9 {
            0 => Value::Null,
            1 => Value::Bool(kind & 0x80 != 0),
            2 => {
                let mut raw = [0u8; 8];
                let taken = self.take(8);
                raw[..taken.len()].copy_from_slice(taken);
                Value::Number(i64::from_le_bytes(raw).into())
            }
            3 => {
                let small = i64::from(self.byte().unwrap_or(0) as i8);
                Value::Number(small.into())
            }
            4 => {
                let mut raw = [0u8; 8];
                let taken = self.take(8);
                raw[..taken.len()].copy_from_slice(taken);
                Number::from_f64(f64::from_le_bytes(raw)).map_or(Value::Null, Value::Number)
            }
            5 => {
                let n = usize::from(self.byte().unwrap_or(0));
                Value::String(String::from_utf8_lossy(self.take(n)).into_owned())
            }
            6 => {
                let word = WORDS[usize::from(self.byte().unwrap_or(0)) % WORDS.len()];
                Value::String(word.to_owned())
            }
            7 if depth < 3 => Value::Object(self.object(depth + 1)),
            8 if depth < 3 => {
                let n = self.byte().unwrap_or(0) % 4;
                Value::Array((0..n).map(|_| self.value(depth + 1)).collect())
            }
            _ => Value::Null,
        }
    }

    fn object(&mut self, depth: u8) -> Map<String, Value> {
        let n = self.byte().unwrap_or(0) % 6;
        let mut map = Map::new();
        for _ in 0..n {
            let Some(key) = self.key() else { break };
            let value = self.value(depth);
            map.insert(key, value);
        }
        map
    }
}

fuzz_target!(|data: &[u8]| {
    let body = match serde_json::from_slice::<Value>(data) {
        Ok(json) => json,
        Err(_) => Value::Object(Bytes(data).object(0)),
    };
    for current in samples() {
        check(&current, body.clone());
    }
});

/// A PATCH of `body`'s fields applied to `current`.
fn merge(current: &Endpoint, fields: &Map<String, Value>) -> Result<EndpointDraft, Error> {
    EndpointPatch::from_json(Value::Object(fields.clone()))?.merge_into(current)
}

/// Whether a refusal names the client's mistake: the spec answers a mistyped value with
/// JsonMappingException (a 500 by its table); no other refusal than these three means the
/// client erred.
fn clients_mistake(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Invalid | ErrorKind::JsonMappingException | ErrorKind::Unmodifiable
    )
}

fn check(current: &Endpoint, body: Value) {
    // The fields the body names: a lone `modifiedFields` object is unwrapped.
    let fields = match &body {
        Value::Object(map) if map.len() == 1 => match map.get("modifiedFields") {
            Some(Value::Object(inner)) => inner.clone(),
            _ => map.clone(),
        },
        Value::Object(map) => map.clone(),
        _ => {
            let refused = EndpointPatch::from_json(body.clone());
            assert!(refused.is_err(), "a body that is no object was accepted");
            return;
        }
    };
    // Decoding the body as it came and as its unwrapped fields is the same (unless those are
    // a lone `modifiedFields` object again, which a second decoding would unwrap once more).
    let decoded = EndpointPatch::from_json(body.clone());
    let nested = fields.len() == 1 && fields.get("modifiedFields").is_some_and(Value::is_object);
    if !nested {
        assert_eq!(
            decoded.as_ref().map_err(Error::kind),
            EndpointPatch::from_json(Value::Object(fields.clone()))
                .as_ref()
                .map_err(Error::kind),
            "unwrapping modifiedFields"
        );
    }

    let draft = match decoded.and_then(|patch| patch.merge_into(current)) {
        Ok(draft) => draft,
        Err(e) => {
            assert!(clients_mistake(&e), "a refused PATCH names the client's mistake: {e}");
            return;
        }
    };
    let profile = &draft.profile;

    // Fields the body does not name stay; null clears what it names.
    for field in Field::ALL {
        match fields.get(field.json_name()) {
            None => assert_eq!(
                profile.json(*field),
                current.profile().json(*field),
                "{field:?} changed without being named"
            ),
            Some(Value::Null) => assert_eq!(profile.json(*field), Value::Null, "{field:?}"),
            Some(_) => {}
        }
    }
    // The id is read-only: a body may repeat it, never change it.
    match fields.get("id") {
        None | Some(Value::Null) => {}
        Some(Value::String(id)) => assert_eq!(id, current.id().as_str()),
        Some(other) => panic!("id {other} was accepted"),
    }
    if current.profile().dial_style() == Some(&DialStyle::AnnexO) {
        assert_eq!(
            profile.dial_style(),
            Some(&DialStyle::AnnexO),
            "ANNEX_O is fixed"
        );
    }
    match (fields.get("password"), &draft.password) {
        (None, SecretChange::Keep) => {}
        (Some(Value::Null), SecretChange::Clear) => {}
        (Some(Value::String(s)), SecretChange::Clear) if s.is_empty() => {}
        (Some(Value::String(s)), SecretChange::Set(secret)) => assert_eq!(secret.expose(), s),
        (given, outcome) => panic!("password {given:?} became {outcome:?}"),
    }

    revalidate(current, &fields, &draft);
}

/// The merged endpoint is one the other rules accept and reproduce exactly.
fn revalidate(current: &Endpoint, fields: &Map<String, Value>, draft: &EndpointDraft) {
    let merged = Endpoint::new(
        current.id().clone(),
        current.enterprise_id().clone(),
        draft.profile.clone(),
        None,
    )
    .expect("the merged endpoint is complete");

    // Its own JSON, as a PUT, and as a PATCH naming every field, rebuilds it.
    let whole: Map<String, Value> = Field::ALL
        .iter()
        .map(|f| (f.json_name().to_owned(), draft.profile.json(*f)))
        .collect();
    let put = EndpointBody::from_json(&whole)
        .and_then(|body| body.replacing(&merged))
        .expect("a PUT of the merged endpoint's JSON");
    assert_eq!(put.profile, draft.profile, "JSON round trip");
    let from_current = merge(current, &whole).expect("a PATCH to the merged state");
    assert_eq!(from_current.profile, draft.profile);

    // The same PATCH again changes nothing more.
    let again = merge(&merged, fields).expect("the same PATCH applies again");
    assert_eq!(again.profile, draft.profile, "PATCH is idempotent");

    let back = EndpointProfile::from_record(draft.profile.to_record()).expect("the record reads");
    assert_eq!(back, draft.profile, "the storage record keeps every field");
}
