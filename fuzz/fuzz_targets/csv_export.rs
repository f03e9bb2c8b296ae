//! The CSV export (`rules::csv::export`) of endpoints built from the fuzzer's bytes, two ways:
//! - the bytes as an upload into an empty enterprise: the endpoints its rows create;
//! - the bytes as choices: each field gets a value the fuzzer picks (realistic words, free text
//!   with the characters CSV and spreadsheets care about, numbers, small JSON objects) and
//!   keeps it when the POST rules (`put::insert`) accept it.
//!
//! Either way the endpoints are ones roomlink could have stored.
//!
//! Never a panic, and the promises of `rules::csv::export`:
//! - the csv crate reads the file back: the header first, then one record per endpoint with a
//!   cell per column; every record is quoted and the file ends with CRLF, without a BOM;
//! - each cell is the field's text behind the formula guard: `restore(cell)` is the value
//!   (`id` the id, `password` blank), and no cell begins with a formula character unless it is
//!   a plain number;
//! - the file, uploaded again into the enterprise that holds those endpoints, changes nothing.

#![no_main]

use libfuzzer_sys::arbitrary::{Result as ArbitraryResult, Unstructured};
use libfuzzer_sys::fuzz_target;
use roomlink_domain::endpoint::{Endpoint, Field};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::rules::csv::{CsvContext, CsvUpload, MAX_BYTES, export, neutralize, restore};
use roomlink_domain::rules::put;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Values the field rules accept somewhere, and the characters CSV quoting and the formula
/// guard must survive.
const WORDS: &[&str] = &[
    "Boardroom",
    "Huddle 3",
    " Room with blanks ",
    "Zürich 会議室",
    "=1+2",
    "+33 1 23 45",
    "-12.5",
    "-3",
    "-1.",
    "-",
    "@SUM(A1)",
    "'=already",
    "''",
    "'quoted'",
    "a,b",
    "say \"hi\"",
    "\"",
    "127.77.0.1",
    "fe80::1",
    "room-1.corp.example",
    "room.corp.example.",
    "5f0c9289e4b0c0c6485f4cfa",
    "ls1",
    "-ref_1",
    "_x",
    "board@corp.example",
    "it@corp.example",
    "https://mesh.example/-=@",
    "http://[::1]:8080/x",
    "TANDBERG_SSH",
    "TANDBERG_HTTP",
    "POLYCOM_HTTP_HDX",
    "MESH",
    "SIP",
    "H323",
    "SIP_URI",
    "E164",
    "ANNEX_O",
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
    "22",
    "443",
    "65535",
    "0",
];

/// Pieces of free text: quotes, separators, guard characters, blanks, non-ASCII.
const PIECES: &[&str] = &[
    "=",
    "+",
    "-",
    "@",
    "'",
    "\"",
    ",",
    ";",
    " ",
    "\t",
    "\r",
    "\n",
    "Room",
    "Zürich",
    "会議室",
    "A1",
    "1",
    ".",
    "|",
    "\\",
    "\u{feff}",
    "\u{a0}",
];

fn value(u: &mut Unstructured<'_>, depth: u8) -> ArbitraryResult<Value> {
    Ok(match u.int_in_range(0..=6u8)? {
        0 => Value::String((*u.choose(WORDS)?).to_owned()),
        1 => {
            let mut text = String::new();
            for _ in 0..u.int_in_range(1..=8u8)? {
                text.push_str(u.choose(PIECES)?);
            }
            Value::String(text)
        }
        2 => Value::String(u.arbitrary()?),
        3 => Value::from(u.arbitrary::<i64>()?),
        4 => serde_json::Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        5 if depth < 2 => Value::Object(object(u, depth + 1)?),
        6 if depth < 2 => {
            let n = u.int_in_range(0..=3u8)?;
            Value::Array(
                (0..n)
                    .map(|_| value(u, depth + 1))
                    .collect::<ArbitraryResult<_>>()?,
            )
        }
        _ => Value::Bool(u.arbitrary()?),
    })
}

/// A small object: geolocation-shaped half of the time, otherwise free keys (customData).
fn object(u: &mut Unstructured<'_>, depth: u8) -> ArbitraryResult<Map<String, Value>> {
    let mut map = Map::new();
    if u.arbitrary()? {
        map.insert("latitude".into(), value(u, depth)?);
        map.insert("longitude".into(), value(u, depth)?);
    } else {
        for _ in 0..u.int_in_range(0..=3u8)? {
            let key = if u.arbitrary()? {
                (*u.choose(WORDS)?).to_owned()
            } else {
                u.arbitrary()?
            };
            map.insert(key, value(u, depth)?);
        }
    }
    Ok(map)
}

/// The endpoints an upload of `data` creates in an empty enterprise with room for 64.
fn created_by_upload(data: &[u8]) -> Vec<Endpoint> {
    let Ok(upload) = CsvUpload::parse(data) else {
        return Vec::new();
    };
    let ctx = CsvContext {
        listeners: upload.listener_ids().into_iter().collect(),
        capacity: 64,
        ..CsvContext::default()
    };
    upload
        .plan(&ctx)
        .creates
        .into_iter()
        .enumerate()
        .map(|(i, create)| {
            let id = EndpointId::from_trusted(format!("new{i}"));
            let enterprise = EnterpriseId::from_trusted("ent".to_owned());
            Endpoint::new(id, enterprise, create.profile, None).expect("a created endpoint")
        })
        .collect()
}

/// Up to six endpoints the API could hold together: valid fields, unique ids, unique
/// calendarIds (the store refuses a second one).
fn chosen(u: &mut Unstructured<'_>) -> ArbitraryResult<Vec<Endpoint>> {
    let mut out: Vec<Endpoint> = Vec::new();
    let mut ids = HashSet::new();
    let mut calendars = HashSet::new();
    for i in 0..u.int_in_range(0..=6u8)? {
        let wanted: String = if u.arbitrary()? {
            (*u.choose(WORDS)?).to_owned()
        } else {
            u.arbitrary()?
        };
        let id = EndpointId::parse(&wanted)
            .ok()
            .filter(|id| !ids.contains(id))
            .unwrap_or_else(|| {
                // A chosen id may already be `e{i}`: the first of e{i}, e{i}_, ... still free.
                let mut fallback = format!("e{i}");
                while ids.contains(&EndpointId::from_trusted(fallback.clone())) {
                    fallback.push('_');
                }
                EndpointId::from_trusted(fallback)
            });
        ids.insert(id.clone());

        let mut body = Map::new();
        body.insert("name".into(), Value::String(format!("Room {i}")));
        let mut profile = put::insert(&body).expect("a plain name is valid").profile;
        for field in Field::ALL {
            if !u.arbitrary::<bool>()? {
                continue;
            }
            let previous = body.insert(field.json_name().to_owned(), value(u, 0)?);
            match put::insert(&body) {
                Ok(draft)
                    if draft
                        .profile
                        .calendar_id()
                        .is_none_or(|c| !calendars.contains(c.as_str())) =>
                {
                    profile = draft.profile;
                }
                _ => match previous {
                    Some(p) => {
                        body.insert(field.json_name().to_owned(), p);
                    }
                    None => {
                        body.remove(field.json_name());
                    }
                },
            }
        }
        if let Some(calendar) = profile.calendar_id() {
            calendars.insert(calendar.as_str().to_owned());
        }
        let enterprise = EnterpriseId::from_trusted("ent".to_owned());
        out.push(Endpoint::new(id, enterprise, profile, None).expect("a named endpoint"));
    }
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    check_export(&created_by_upload(data));
    if let Ok(endpoints) = chosen(&mut Unstructured::new(data)) {
        check_export(&endpoints);
    }
});

fn check_export(endpoints: &[Endpoint]) {
    let file = export::export(endpoints).expect("the export writes");
    check_file(&file, endpoints);
    check_upload(&file, endpoints);
}

/// What a spreadsheet would evaluate: the formula characters (OWASP's list).
fn starts_like_a_formula(cell: &str) -> bool {
    cell.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// `-?digits(.digits)?`, the only formula-like start the guard lets through.
fn is_plain_number(cell: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = cell.strip_prefix('-').unwrap_or(cell);
    match unsigned.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(unsigned),
    }
}

fn check_file(file: &[u8], endpoints: &[Endpoint]) {
    let header = export::header(false);
    assert!(
        file.starts_with(header.as_bytes()),
        "the header comes first"
    );
    assert!(file.ends_with(b"\r\n"), "the file ends with CRLF");
    let names: Vec<&str> = header.trim_end_matches("\r\n").split(',').collect();

    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(file);
    let records: Vec<::csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .expect("the csv crate reads the export");
    assert_eq!(records.len(), endpoints.len() + 1, "a record per endpoint");
    assert_eq!(records[0].iter().collect::<Vec<_>>(), names);

    for (record, endpoint) in records[1..].iter().zip(endpoints) {
        assert_eq!(record.len(), names.len(), "a cell per column");
        for (name, cell) in names.iter().zip(record) {
            let expected = match *name {
                "id" => endpoint.id().as_str().to_owned(),
                "password" => String::new(),
                other => {
                    let field = Field::from_csv_name(other).expect("a header names a field");
                    endpoint.profile().text(field)
                }
            };
            assert_eq!(cell, neutralize(&expected), "{name} is written guarded");
            assert_eq!(restore(cell), expected, "{name} reads back");
            assert!(
                !starts_like_a_formula(cell) || is_plain_number(cell),
                "{name}: {cell:?} would run in a spreadsheet"
            );
        }
    }
    // Every record is quoted: after the header each record starts with a quote.
    for record in &records[1..] {
        let at = record.position().expect("a record has a position").byte();
        let mut at = usize::try_from(at).expect("a file in memory");
        // After a CRLF the reader's position is still on the LF (see `record_line`).
        if file[at] == b'\n' {
            at += 1;
        }
        assert_eq!(file[at], b'"', "records are quoted");
    }
}

fn check_upload(file: &[u8], endpoints: &[Endpoint]) {
    if file.len() > MAX_BYTES {
        return;
    }
    let upload = CsvUpload::parse(file).expect("the export uploads");
    assert_eq!(upload.len(), endpoints.len());
    let listeners: HashSet<ListenerServiceId> = endpoints
        .iter()
        .filter_map(|e| e.profile().listener())
        .collect();
    let ctx = CsvContext {
        listeners,
        ..CsvContext::of_endpoints(endpoints)
    };
    let plan = upload.plan(&ctx);
    assert!(plan.skipped.is_empty(), "{:?}", plan.skipped);
    assert!(plan.creates.is_empty());
    assert_eq!(plan.updates.len(), endpoints.len());
    for (update, endpoint) in plan.updates.iter().zip(endpoints) {
        assert_eq!(&update.id, endpoint.id());
        assert_eq!(
            &update.profile,
            endpoint.profile(),
            "the upload changes nothing"
        );
        assert_eq!(update.password_line, None, "a blank password keeps it");
    }
}
