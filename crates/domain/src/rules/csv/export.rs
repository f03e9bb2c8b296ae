//! CSV export: an enterprise's endpoints in the exact form the bulk load reads back.
//!
//! - The header is the specification's fourteen columns in its order, then every other
//!   endpoint field (lower-case): [`Column::export_order`].
//! - Every value is double-quoted and formula-guarded ([`neutralize`]); rows end with CRLF
//!   (RFC 4180). No byte-order mark.
//! - `id` is filled (re-uploading the file updates the same endpoints); `password` is always
//!   blank, which the upload reads as "keep the stored one".
//! - With inventory, the [`ReportedColumn`]s follow: what each room last reported (blank when
//!   it never did). The upload ignores them, so the file still loads unchanged.

use super::columns::{Column, ReportedColumn, neutralize};
use crate::civil::UtcParts;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::ids::EndpointId;
use crate::inventory::EndpointInventory;
use std::collections::HashMap;

/// The rooms' inventory records an export includes, by endpoint.
pub type Inventories = HashMap<EndpointId, EndpointInventory>;

/// The media type and file name the HTTP adapter answers with.
pub const CONTENT_TYPE: &str = "text/csv; charset=utf-8";
pub const FILE_NAME: &str = "endpoints.csv";

/// The header line (with its CRLF), with the inventory columns when `with_inventory`.
pub fn header(with_inventory: bool) -> String {
    let names: Vec<String> = columns(with_inventory)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    format!("{}\r\n", names.join(","))
}

fn columns(with_inventory: bool) -> Vec<(String, Column)> {
    let mut columns = Column::export_order();
    if with_inventory {
        columns.extend(
            ReportedColumn::ALL
                .into_iter()
                .map(|c| (c.header().to_owned(), Column::Reported(c))),
        );
    }
    columns
}

/// What a room reported in `column` (blank when it was not read, or did not say).
fn reported(record: Option<&EndpointInventory>, column: ReportedColumn) -> String {
    let Some(record) = record else {
        return String::new();
    };
    let inventory = record.inventory.as_ref();
    let text = |value: Option<&String>| value.cloned().unwrap_or_default();
    match column {
        ReportedColumn::Model => text(inventory.and_then(|i| i.model.as_ref())),
        ReportedColumn::SerialNumber => text(inventory.and_then(|i| i.serial_number.as_ref())),
        ReportedColumn::SoftwareVersion => {
            text(inventory.and_then(|i| i.software_version.as_ref()))
        }
        ReportedColumn::SoftwareReleaseDate => {
            text(inventory.and_then(|i| i.software_release_date.as_ref()))
        }
        ReportedColumn::UptimeSeconds => inventory
            .and_then(|i| i.uptime_seconds)
            .map(|s| s.to_string())
            .unwrap_or_default(),
        ReportedColumn::Peripherals => inventory
            .map(|i| i.peripherals.len().to_string())
            .unwrap_or_default(),
        ReportedColumn::PeripheralsDisconnected => inventory
            .map(|i| i.disconnected().count().to_string())
            .unwrap_or_default(),
        ReportedColumn::ReadAt => record
            .read_at
            .map(|t| UtcParts::of(t).rfc3339())
            .unwrap_or_default(),
        ReportedColumn::LastFailure => record
            .last_failure
            .as_ref()
            .map(|f| format!("{}: {}", f.error_name, f.error_message))
            .unwrap_or_default(),
    }
}

/// Appends one quoted row per endpoint to `out`; with the inventory columns when
/// `inventories` is given (a room without a record has them blank).
pub fn write_rows(
    out: &mut Vec<u8>,
    endpoints: &[Endpoint],
    inventories: Option<&Inventories>,
) -> Result<(), Error> {
    let columns = columns(inventories.is_some());
    let mut writer = ::csv::WriterBuilder::new()
        .has_headers(false)
        .quote_style(::csv::QuoteStyle::Always)
        .terminator(::csv::Terminator::CRLF)
        .from_writer(out);
    let mut cells: Vec<String> = Vec::with_capacity(columns.len());
    for endpoint in endpoints {
        cells.clear();
        for (_, column) in &columns {
            let text = match column {
                Column::Id => endpoint.id().as_str().to_owned(),
                Column::Password => String::new(),
                Column::Field(field) => endpoint.profile().text(*field),
                Column::Reported(column) => {
                    reported(inventories.and_then(|i| i.get(endpoint.id())), *column)
                }
            };
            cells.push(neutralize(&text).into_owned());
        }
        writer
            .write_record(&cells)
            .map_err(|e| Error::internal(format!("CSV export: {e}")))?;
    }
    writer
        .flush()
        .map_err(|e| Error::internal(format!("CSV export: {e}")))
}

/// The whole export: header and rows (without inventory).
pub fn export(endpoints: &[Endpoint]) -> Result<Vec<u8>, Error> {
    let mut out = header(false).into_bytes();
    write_rows(&mut out, endpoints, None)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::{EndpointProfile, Field};
    use crate::enums::{
        AddressStyle, CalendarType, ControlProtocol, DialStyle, MeetingPrivacyMode,
        RegisterToSipProxy, SignalingProtocol, Toggle, ZeroTouchType,
    };
    use crate::ids::{EndpointId, EnterpriseId, ListenerServiceId};
    use crate::rules::csv::STANDARD_COLUMNS;
    use crate::rules::csv::{CsvContext, CsvUpload};
    use crate::test_rng::Rng;
    use serde_json::{Value, json};
    use std::collections::{HashMap, HashSet};

    #[test]
    fn header_is_the_export_order_with_crlf() {
        let header = header(false);
        let names: Vec<&str> = header.trim_end().split(',').collect();
        assert_eq!(&names[..STANDARD_COLUMNS.len()], STANDARD_COLUMNS);
        assert_eq!(names.len(), Field::ALL.len() + 2);
        assert!(header.ends_with("\r\n"));
    }

    #[test]
    fn rows_are_quoted_with_a_blank_password() {
        let mut profile = EndpointProfile::default();
        profile.set_text(Field::Name, "=HYPERLINK(\"x\")").unwrap();
        profile.set_text(Field::Elevation, "-20.5").unwrap();
        let e = endpoint("e1", profile);
        let text = String::from_utf8(export(&[e]).unwrap()).unwrap();
        let row = text.lines().nth(1).unwrap();
        assert!(
            row.starts_with("\"e1\",\"'=HYPERLINK(\"\"x\"\")\",\"\""),
            "{row}"
        );
        assert!(row.contains("\"-20.5\""), "{row}");
        let password = STANDARD_COLUMNS
            .iter()
            .position(|c| *c == "password")
            .unwrap();
        let cells = ::csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(text.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(&cells[password], "");
    }

    fn endpoint(id: &str, profile: EndpointProfile) -> Endpoint {
        Endpoint::new(
            EndpointId::from_trusted(id.into()),
            EnterpriseId::from_trusted("ent".into()),
            profile,
            None,
        )
        .unwrap()
    }

    impl Rng {
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
        /// Free text that exercises quoting and the formula guard.
        fn text(&mut self, max: usize) -> String {
            const PIECES: [&str; 16] = [
                "=",
                "+",
                "-",
                "@",
                "'",
                "\"",
                ",",
                ";",
                " ",
                "Room",
                "Zürich",
                "会議室",
                "A1",
                "1",
                "|",
                "\\",
            ];
            let mut s = String::new();
            for _ in 0..=self.below(6) {
                s.push_str(self.pick(&PIECES));
            }
            if s.trim().is_empty() {
                s.push('x');
            }
            s.chars().take(max).collect()
        }
        fn reference(&mut self) -> String {
            format!("{}ref_{}", self.pick(&["", "-", "_"]), self.below(1000))
        }
        fn enum_value<T: Copy>(&mut self, all: &[T], name: fn(T) -> &'static str) -> String {
            name(all[self.below(all.len())]).to_owned()
        }
    }

    fn random_value(rng: &mut Rng, field: Field, index: usize) -> Value {
        let text = match field {
            Field::Name | Field::Username | Field::AssetId | Field::ExternalId => rng.text(255),
            Field::Location | Field::PointOfContact => rng.text(300),
            Field::CalendarId => format!("{}{index}@corp.example", rng.text(20)),
            Field::IpAddress => match rng.below(3) {
                0 => format!("127.77.{}.{}", rng.below(256), rng.below(256)),
                1 => format!("fe80::{:x}", rng.below(65536)),
                _ => format!("room-{}.corp.example", rng.below(1000)),
            },
            Field::Port => return json!(1 + rng.below(65535)),
            Field::Elevation => return json!((rng.below(10_500) as f64 - 500.0) / 4.0),
            Field::Geolocation => {
                return json!({
                    "latitude": rng.below(180) as f64 - 90.0,
                    "longitude": (rng.below(3600) as f64 - 1800.0) / 10.0,
                });
            }
            Field::CustomData => {
                return json!({ "note": rng.text(40), "n": rng.below(100), "nested": {"a": [1, "=x"]} });
            }
            Field::ListenerServiceId => "ls1".to_owned(),
            Field::AnnouncementId | Field::ContactListId => rng.reference(),
            Field::MeshBaseUri => format!("https://mesh{}.example/-=@", rng.below(10)),
            Field::ControlProtocol => rng.enum_value(ControlProtocol::ALL, ControlProtocol::as_str),
            Field::SignalingProtocol => {
                rng.enum_value(SignalingProtocol::ALL, SignalingProtocol::as_str)
            }
            Field::DialStyle => rng.enum_value(DialStyle::ALL, DialStyle::as_str),
            Field::AddressStyle => rng.enum_value(AddressStyle::ALL, AddressStyle::as_str),
            Field::CalendarType => rng.enum_value(CalendarType::ALL, CalendarType::as_str),
            Field::AutoJoinMode
            | Field::CalendarPushMode
            | Field::InMeetingControls
            | Field::ManualMeetingDialer
            | Field::ValidatePasscodes => rng.enum_value(Toggle::ALL, Toggle::as_str),
            Field::MeetingPrivacyMode => {
                rng.enum_value(MeetingPrivacyMode::ALL, MeetingPrivacyMode::as_str)
            }
            Field::RegisterToSipProxy => {
                rng.enum_value(RegisterToSipProxy::ALL, RegisterToSipProxy::as_str)
            }
            Field::ZeroTouchType => rng.enum_value(ZeroTouchType::ALL, ZeroTouchType::as_str),
        };
        Value::String(text)
    }

    fn random_endpoints(seed: u64, count: usize) -> Vec<Endpoint> {
        let mut rng = Rng(seed);
        (0..count)
            .map(|i| {
                let mut profile = EndpointProfile::default();
                for field in Field::ALL {
                    if *field == Field::Name || rng.chance(70) {
                        let value = random_value(&mut rng, *field, i);
                        profile
                            .set_json(*field, &value)
                            .unwrap_or_else(|e| panic!("{field:?} = {value}: {}", e.message()));
                    }
                }
                // Ids may begin with '-' too: the guard must not break them.
                endpoint(&format!("{}e{i:05}", rng.pick(&["", "-", "_"])), profile)
            })
            .collect()
    }

    fn context_of(endpoints: &[Endpoint]) -> CsvContext {
        CsvContext {
            listeners: HashSet::from([ListenerServiceId::from_trusted("ls1".into())]),
            ..CsvContext::of_endpoints(endpoints)
        }
    }

    #[test]
    fn property_export_then_upload_changes_nothing() {
        for seed in 1..=8u64 {
            let endpoints = random_endpoints(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), 150);
            let file = export(&endpoints).unwrap();
            let upload = CsvUpload::parse(&file).unwrap();
            assert_eq!(upload.len(), endpoints.len(), "seed {seed}");
            let plan = upload.plan(&context_of(&endpoints));
            assert!(plan.skipped.is_empty(), "seed {seed}: {:?}", plan.skipped);
            assert!(plan.creates.is_empty());
            assert_eq!(plan.updates.len(), endpoints.len());
            let stored: HashMap<_, _> = endpoints.iter().map(|e| (e.id(), e)).collect();
            for update in &plan.updates {
                let before = stored[&update.id];
                assert_eq!(
                    &update.profile,
                    before.profile(),
                    "seed {seed}, {}",
                    update.id
                );
                assert_eq!(update.password_line, None, "a blank password keeps it");
            }
        }
    }

    /// An inventory record as a room reports it; the serial number starts with `=` to show
    /// that reported cells get the formula guard too.
    fn inventory_of(endpoint: &Endpoint) -> EndpointInventory {
        use crate::inventory::{Inventory, Peripheral, PeripheralKind, ReadFailure};
        let camera = |connected| Peripheral {
            kind: PeripheralKind::Camera,
            id: None,
            name: None,
            model: None,
            serial_number: None,
            software_version: None,
            connected,
        };
        EndpointInventory {
            endpoint_id: endpoint.id().clone(),
            listener_service_id: None,
            read_at: Some(1_800_000_000_000),
            attempted_at: 1_800_000_060_000,
            inventory: Some(Inventory {
                model: Some("Room Kit Pro".into()),
                serial_number: Some("=FOC2315".into()),
                software_version: Some("ce11.27.1.3".into()),
                software_release_date: Some("2025-06-30".into()),
                uptime_seconds: Some(86_400),
                peripherals: vec![camera(true), camera(false)],
                ..Inventory::default()
            }),
            last_failure: Some(ReadFailure {
                error_name: "ExternalSystemTimedOut".into(),
                error_message: "the room did not answer within 10 s".into(),
            }),
        }
    }

    #[test]
    fn property_export_with_inventory_then_upload_changes_nothing() {
        let endpoints = random_endpoints(77, 60);
        // Every other room has a record; the rest have blank inventory cells.
        let inventories: Inventories = endpoints
            .iter()
            .step_by(2)
            .map(|e| (e.id().clone(), inventory_of(e)))
            .collect();
        let mut file = header(true).into_bytes();
        write_rows(&mut file, &endpoints, Some(&inventories)).unwrap();
        let text = String::from_utf8(file.clone()).unwrap();
        let head = text.lines().next().unwrap();
        assert!(head.ends_with(
            ",inventory.model,inventory.serialnumber,inventory.softwareversion,\
             inventory.softwarereleasedate,inventory.uptimeseconds,inventory.peripherals,\
             inventory.peripheralsdisconnected,inventory.readat,inventory.lastfailure"
        ));
        let first = text.lines().nth(1).unwrap();
        assert!(
            first.ends_with(
                r#","Room Kit Pro","'=FOC2315","ce11.27.1.3","2025-06-30","86400","2","1","2027-01-15T08:00:00Z","ExternalSystemTimedOut: the room did not answer within 10 s""#
            ),
            "{first}"
        );
        let second = text.lines().nth(2).unwrap();
        assert!(
            second.ends_with(r#","","","","","","","","","""#),
            "{second}"
        );
        // Loaded back, the reported columns are ignored: nothing changes.
        let plan = CsvUpload::parse(&file)
            .unwrap()
            .plan(&context_of(&endpoints));
        assert!(plan.skipped.is_empty(), "{:?}", plan.skipped);
        assert!(plan.creates.is_empty());
        let stored: HashMap<_, _> = endpoints.iter().map(|e| (e.id(), e)).collect();
        assert_eq!(plan.updates.len(), endpoints.len());
        for update in &plan.updates {
            assert_eq!(&update.profile, stored[&update.id].profile());
        }
    }

    #[test]
    fn property_export_with_ids_blanked_recreates_identical_profiles() {
        let endpoints = random_endpoints(42, 200);
        let text = String::from_utf8(export(&endpoints).unwrap()).unwrap();
        // Blank the id and fill the password of every row: a copy into a new enterprise.
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes());
        let mut writer = ::csv::WriterBuilder::new()
            .quote_style(::csv::QuoteStyle::Always)
            .from_writer(Vec::new());
        for (i, record) in reader.records().enumerate() {
            let mut cells: Vec<String> = record.unwrap().iter().map(str::to_owned).collect();
            if i > 0 {
                cells[0].clear();
                cells[10] = "pw".to_owned();
            }
            writer.write_record(&cells).unwrap();
        }
        let copy = writer.into_inner().unwrap();
        let plan = CsvUpload::parse(&copy).unwrap().plan(&CsvContext {
            capacity: usize::MAX,
            ..context_of(&[])
        });
        assert!(plan.skipped.is_empty(), "{:?}", plan.skipped);
        let created: Vec<_> = plan.creates.iter().map(|c| &c.profile).collect();
        let original: Vec<_> = endpoints.iter().map(Endpoint::profile).collect();
        assert_eq!(created, original);
    }

    #[test]
    fn an_empty_enterprise_exports_the_header_only() {
        let file = export(&[]).unwrap();
        assert_eq!(file, header(false).into_bytes());
        assert!(CsvUpload::parse(&file).unwrap().is_empty());
    }
}
