//! Bulk load from CSV: parsing and the per-row plan.
//!
//! The file is at most [`MAX_BYTES`]. Its first line is the header; column names are matched
//! case-insensitively against the endpoint's field names plus `id` and `password`, in any
//! order; an unknown or repeated column makes the whole upload `Invalid`. Values follow RFC
//! 4180 (double quotes; commas, quotes and newlines inside quotes). A leading apostrophe
//! before `=`, `+`, `-`, `@`, TAB, CR or another apostrophe is the export's formula guard
//! and is dropped from every cell but `password` (see [`super::csv_export`]).
//!
//! Each row then either creates, updates or is skipped with a reason:
//! - a blank `id` creates an endpoint, which must have a `password` and a `name`;
//! - a filled `id` updates that endpoint of the enterprise: each column present in the file
//!   replaces the field (blank means null), columns absent from the header leave their fields
//!   as they are, and a blank `password` keeps the stored one;
//! - a row is skipped when its id is unknown, a value breaks a field's bounds, it would change
//!   an ANNEX_O dial style, reuse another endpoint's calendarId, name another enterprise's
//!   listener, or create past the enterprise's endpoint limit;
//! - endpoints absent from the file are untouched; rows are applied in file order, so a later
//!   row for the same id sees the earlier row's result.
//!
//! The service applies the whole plan in one transaction and answers with the full list; the
//! skip reasons are kept for the logs and for `roomlinkctl csv validate`.

use super::{csv_export, dial_style, password_from_text};
use crate::endpoint::{Endpoint, EndpointProfile, Field};
use crate::enums::shorten;
use crate::error::{Error, ErrorKind};
use crate::ids::{EndpointId, ListenerServiceId};
use crate::secret::{Secret, SecretChange};
use std::collections::{HashMap, HashSet};

/// The size bound of one upload: 1 MiB. Larger files are split by the client.
pub const MAX_BYTES: usize = 1024 * 1024;

/// The columns of the specification's header, in its order.
pub const STANDARD_COLUMNS: [&str; 14] = [
    "id",
    "name",
    "ipaddress",
    "port",
    "listenerserviceid",
    "controlprotocol",
    "signalingprotocol",
    "dialstyle",
    "addressstyle",
    "username",
    "password",
    "calendarid",
    "calendartype",
    "customdata",
];

/// `PayloadTooLarge` for an upload over [`MAX_BYTES`].
pub fn too_large() -> Error {
    Error::new(
        ErrorKind::PayloadTooLarge,
        format!("A CSV upload may be at most {MAX_BYTES} bytes; split the file into smaller ones."),
    )
    .with("limitBytes", MAX_BYTES)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Id,
    Password,
    Field(Field),
}

impl Column {
    fn from_header(name: &str) -> Option<Column> {
        match name.trim().to_ascii_lowercase().as_str() {
            "id" => Some(Column::Id),
            "password" => Some(Column::Password),
            _ => Field::from_csv_name(name).map(Column::Field),
        }
    }
}

/// A parsed upload: the header's columns and every data row.
#[derive(Debug, Clone)]
pub struct CsvUpload {
    columns: Vec<Column>,
    rows: Vec<Row>,
}

#[derive(Debug, Clone)]
struct Row {
    line: u64,
    cells: Result<Vec<String>, String>,
}

/// One row the plan did not apply, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// The line of the file where the row starts (the header is line 1).
    pub line: u64,
    /// The row's `id` cell, if it had one.
    pub id: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCreate {
    pub line: u64,
    pub profile: EndpointProfile,
    pub password: Secret,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedUpdate {
    /// The last line that changed this endpoint.
    pub line: u64,
    pub id: EndpointId,
    pub profile: EndpointProfile,
    pub password: SecretChange,
}

/// What an upload will do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvPlan {
    pub creates: Vec<PlannedCreate>,
    pub updates: Vec<PlannedUpdate>,
    pub skipped: Vec<SkippedRow>,
}

/// What the plan needs to know of the enterprise, read inside the upload's transaction.
#[derive(Debug, Clone, Default)]
pub struct CsvContext {
    /// The enterprise's endpoints among those the upload names (see [`CsvUpload::ids`]).
    pub existing: HashMap<EndpointId, Endpoint>,
    /// Every calendarId in use in the enterprise, with the endpoint that has it.
    pub calendar_owners: HashMap<String, EndpointId>,
    /// The enterprise's listener services.
    pub listeners: HashSet<ListenerServiceId>,
    /// How many endpoints may still be created under the enterprise's limit.
    pub capacity: usize,
}

/// The line of `bytes` (as given to the csv reader) that a record at `position` starts on.
/// After a CRLF the reader's position is still on the `\n`, whose line it has not counted yet.
pub fn record_line(bytes: &[u8], position: &::csv::Position) -> u64 {
    let at_newline = usize::try_from(position.byte())
        .ok()
        .and_then(|i| bytes.get(i))
        == Some(&b'\n');
    position.line() + u64::from(at_newline)
}

impl CsvContext {
    /// The context of an enterprise that holds exactly `endpoints` (each existing, each
    /// calendarId taken), with no listener services and no room for new endpoints.
    pub fn of_endpoints<'a>(endpoints: impl IntoIterator<Item = &'a Endpoint>) -> CsvContext {
        let mut ctx = CsvContext::default();
        for e in endpoints {
            if let Some(calendar) = e.profile().calendar_id() {
                ctx.calendar_owners
                    .insert(calendar.as_str().to_owned(), e.id().clone());
            }
            ctx.existing.insert(e.id().clone(), e.clone());
        }
        ctx
    }
}

impl CsvUpload {
    /// Parses an upload. Fails as a whole only when it is too large or its header is wrong.
    pub fn parse(bytes: &[u8]) -> Result<CsvUpload, Error> {
        if bytes.len() > MAX_BYTES {
            return Err(too_large());
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let mut records = reader.byte_records();
        let header = match records.next() {
            Some(Ok(header)) => header,
            Some(Err(e)) => return Err(Error::invalid(format!("CSV header: {e}"))),
            None => {
                return Err(Error::invalid(
                    "CSV: the file is empty; a header row is required",
                ));
            }
        };
        let columns = parse_header(&header)?;
        let mut rows = Vec::new();
        for record in records {
            match record {
                Ok(record) => {
                    let line = record.position().map_or(0, |p| record_line(bytes, p));
                    if record
                        .iter()
                        .all(|cell| cell.iter().all(u8::is_ascii_whitespace))
                    {
                        continue; // a blank line, perhaps with separators only
                    }
                    rows.push(Row {
                        line,
                        cells: decode_cells(&record, &columns),
                    });
                }
                Err(e) => {
                    let line = e.position().map_or(0, |p| record_line(bytes, p));
                    rows.push(Row {
                        line,
                        cells: Err(format!("unreadable row: {e}")),
                    });
                }
            }
        }
        Ok(CsvUpload { columns, rows })
    }

    /// The number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The well-formed ids the rows name: what [`CsvContext::existing`] must be read for.
    pub fn ids(&self) -> Vec<EndpointId> {
        let Some(id_col) = self.columns.iter().position(|c| *c == Column::Id) else {
            return Vec::new();
        };
        let mut seen = HashSet::new();
        self.rows
            .iter()
            .filter_map(|row| row.cells.as_ref().ok())
            .filter_map(|cells| EndpointId::parse(cells[id_col].trim()).ok())
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// The well-formed listener service ids the rows name (offline validation assumes them).
    pub fn listener_ids(&self) -> Vec<ListenerServiceId> {
        let Some(col) = self
            .columns
            .iter()
            .position(|c| *c == Column::Field(Field::ListenerServiceId))
        else {
            return Vec::new();
        };
        let mut seen = HashSet::new();
        self.rows
            .iter()
            .filter_map(|row| row.cells.as_ref().ok())
            .filter_map(|cells| ListenerServiceId::parse(cells[col].trim()).ok())
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// Decides, row by row, what the upload does to the enterprise described by `ctx`.
    pub fn plan(&self, ctx: &CsvContext) -> CsvPlan {
        let mut planner = Planner {
            ctx,
            calendar_owners: ctx
                .calendar_owners
                .iter()
                .map(|(c, id)| (c.clone(), Owner::Stored(id.clone())))
                .collect(),
            update_index: HashMap::new(),
            plan: CsvPlan::default(),
        };
        for row in &self.rows {
            let id_cell = self
                .cell(row, Column::Id)
                .map(str::trim)
                .filter(|s| !s.is_empty());
            let outcome = match &row.cells {
                Err(reason) => Err(reason.clone()),
                Ok(_) => match id_cell {
                    None => planner.create(self, row),
                    Some(id) => planner.update(self, row, id),
                },
            };
            if let Err(reason) = outcome {
                planner.plan.skipped.push(SkippedRow {
                    line: row.line,
                    id: id_cell.map(shorten),
                    reason,
                });
            }
        }
        planner.plan
    }

    fn cell<'r>(&self, row: &'r Row, column: Column) -> Option<&'r str> {
        let index = self.columns.iter().position(|c| *c == column)?;
        row.cells.as_ref().ok().map(|cells| cells[index].as_str())
    }

    /// The row's field cells, in header order.
    fn field_cells<'r>(&'r self, row: &'r Row) -> impl Iterator<Item = (Field, &'r str)> + 'r {
        let cells = row.cells.as_deref().unwrap_or(&[]);
        self.columns
            .iter()
            .zip(cells)
            .filter_map(|(column, cell)| match column {
                Column::Field(field) => Some((*field, cell.as_str())),
                _ => None,
            })
    }
}

fn parse_header(header: &::csv::ByteRecord) -> Result<Vec<Column>, Error> {
    let mut columns = Vec::with_capacity(header.len());
    for raw in header {
        let name =
            std::str::from_utf8(raw).map_err(|_| Error::invalid("CSV header: not valid UTF-8"))?;
        let column = Column::from_header(name).ok_or_else(|| {
            Error::invalid(format!(
                "CSV header: unknown column '{}'; the columns are {} and the other endpoint fields",
                shorten(name.trim()),
                STANDARD_COLUMNS.join(", ")
            ))
        })?;
        if columns.contains(&column) {
            return Err(Error::invalid(format!(
                "CSV header: column '{}' appears twice",
                shorten(name.trim())
            )));
        }
        columns.push(column);
    }
    Ok(columns)
}

/// The row's cells as text. Every cell but `password` loses the formula guard the export adds
/// (see [`csv_export::restore`]); a password is taken exactly as written.
fn decode_cells(record: &::csv::ByteRecord, columns: &[Column]) -> Result<Vec<String>, String> {
    if record.len() != columns.len() {
        return Err(format!(
            "the row has {} fields; the header has {}",
            record.len(),
            columns.len()
        ));
    }
    record
        .iter()
        .zip(columns)
        .map(|(cell, column)| {
            let text =
                std::str::from_utf8(cell).map_err(|_| "the row is not valid UTF-8".to_owned())?;
            Ok(match column {
                Column::Password => text.to_owned(),
                _ => csv_export::restore(text).to_owned(),
            })
        })
        .collect()
}

/// Who holds a calendarId while the plan runs: a stored endpoint or a row creating one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owner {
    Stored(EndpointId),
    NewRow(u64),
}

struct Planner<'c> {
    ctx: &'c CsvContext,
    calendar_owners: HashMap<String, Owner>,
    /// Position in `plan.updates` of each endpoint updated so far.
    update_index: HashMap<EndpointId, usize>,
    plan: CsvPlan,
}

impl Planner<'_> {
    fn create(&mut self, upload: &CsvUpload, row: &Row) -> Result<(), String> {
        let password = upload
            .cell(row, Column::Password)
            .filter(|p| !p.is_empty())
            .ok_or("a new endpoint needs a password")?;
        let password = password_from_text(password).map_err(|e| e.message().to_owned())?;
        let mut profile = EndpointProfile::default();
        apply_cells(&mut profile, upload.field_cells(row))?;
        self.check_listener(&profile)?;
        let owner = Owner::NewRow(row.line);
        self.check_calendar(&profile, &owner)?;
        if self.plan.creates.len() >= self.ctx.capacity {
            return Err("the enterprise's endpoint limit is reached".to_owned());
        }
        self.claim_calendar(None, &profile, owner);
        self.plan.creates.push(PlannedCreate {
            line: row.line,
            profile,
            password,
        });
        Ok(())
    }

    fn update(&mut self, upload: &CsvUpload, row: &Row, id: &str) -> Result<(), String> {
        let unknown = || format!("no endpoint with id '{}' in this enterprise", shorten(id));
        let id = EndpointId::parse(id).map_err(|_| unknown())?;
        let stored = self.ctx.existing.get(&id).ok_or_else(unknown)?;
        let earlier = self.update_index.get(&id).map(|&i| &self.plan.updates[i]);
        let before = earlier.map_or(stored.profile(), |u| &u.profile).clone();
        let mut profile = before.clone();
        apply_cells(&mut profile, upload.field_cells(row))?;
        dial_style::check_unchanged(stored, &profile).map_err(|e| e.message().to_owned())?;
        self.check_listener(&profile)?;
        let owner = Owner::Stored(id.clone());
        self.check_calendar(&profile, &owner)?;
        let password = match upload.cell(row, Column::Password).filter(|p| !p.is_empty()) {
            Some(p) => {
                SecretChange::Set(password_from_text(p).map_err(|e| e.message().to_owned())?)
            }
            None => earlier.map_or(SecretChange::Keep, |u| u.password.clone()),
        };
        self.claim_calendar(Some(&before), &profile, owner);
        let update = PlannedUpdate {
            line: row.line,
            id: id.clone(),
            profile,
            password,
        };
        match self.update_index.get(&id) {
            Some(&i) => self.plan.updates[i] = update,
            None => {
                self.update_index.insert(id, self.plan.updates.len());
                self.plan.updates.push(update);
            }
        }
        Ok(())
    }

    fn check_listener(&self, profile: &EndpointProfile) -> Result<(), String> {
        match profile.listener() {
            Some(l) if !self.ctx.listeners.contains(&l) => Err(format!(
                "listenerServiceId '{l}' is not a listener service of this enterprise"
            )),
            _ => Ok(()),
        }
    }

    fn check_calendar(&self, profile: &EndpointProfile, owner: &Owner) -> Result<(), String> {
        let Some(calendar) = profile.calendar_id() else {
            return Ok(());
        };
        match self.calendar_owners.get(calendar.as_str()) {
            Some(holder) if holder != owner => Err(format!(
                "calendarId '{}' is already used by another endpoint",
                calendar.as_str()
            )),
            _ => Ok(()),
        }
    }

    fn claim_calendar(
        &mut self,
        before: Option<&EndpointProfile>,
        after: &EndpointProfile,
        owner: Owner,
    ) {
        if let Some(old) = before.and_then(EndpointProfile::calendar_id) {
            self.calendar_owners.remove(old.as_str());
        }
        if let Some(new) = after.calendar_id() {
            self.calendar_owners.insert(new.as_str().to_owned(), owner);
        }
    }
}

fn apply_cells<'a>(
    profile: &mut EndpointProfile,
    cells: impl Iterator<Item = (Field, &'a str)>,
) -> Result<(), String> {
    for (field, text) in cells {
        profile
            .set_text(field, text)
            .map_err(|e| e.message().to_owned())?;
    }
    profile.check_complete().map_err(|e| e.message().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::EnterpriseId;
    use crate::rules::put;
    use serde_json::json;

    const HEADER: &str = "id,name,ipaddress,port,listenerserviceid,controlprotocol,signalingprotocol,dialstyle,addressstyle,username,password,calendarid,calendartype,customdata\n";

    fn endpoint(id: &str, body: serde_json::Value) -> Endpoint {
        let d = put::insert(body.as_object().unwrap()).unwrap();
        Endpoint::new(
            EndpointId::from_trusted(id.into()),
            EnterpriseId::from_trusted("ent".into()),
            d.profile,
            None,
        )
        .unwrap()
    }

    fn ctx_with(endpoints: Vec<Endpoint>) -> CsvContext {
        CsvContext {
            listeners: HashSet::from([ListenerServiceId::from_trusted("ls1".into())]),
            capacity: 100,
            ..CsvContext::of_endpoints(&endpoints)
        }
    }

    fn plan(csv: &str, ctx: &CsvContext) -> CsvPlan {
        CsvUpload::parse(csv.as_bytes()).unwrap().plan(ctx)
    }

    #[test]
    fn blank_id_creates_and_needs_a_password() {
        let csv = format!(
            "{HEADER}\"\",\"Room A\",\"127.77.0.1\",\"22\",\"ls1\",\"TANDBERG_SSH\",\"SIP\",\"ANNEX_O\",\"HOSTNAME\",\"admin\",\"pw\",\"a@corp.example\",\"GOOGLE\",\"\"\n\
             \"\",\"Room B\",\"127.77.0.2\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n"
        );
        let p = plan(&csv, &ctx_with(vec![]));
        assert_eq!(p.creates.len(), 1);
        let c = &p.creates[0];
        assert_eq!(c.profile.name().unwrap().as_str(), "Room A");
        assert_eq!(c.profile.port().unwrap().get(), 22);
        assert_eq!(c.password.expose(), "pw");
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(p.skipped[0].line, 3);
        assert!(p.skipped[0].reason.contains("password"), "{:?}", p.skipped);
    }

    /// Files saved on Windows end lines with CRLF; their rows keep the same line numbers.
    #[test]
    fn crlf_line_endings_keep_line_numbers() {
        let lf = format!(
            "{HEADER}\"\",\"Room A\",\"127.77.0.1\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n\
             \"\",\"Room B\",\"127.77.0.2\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n"
        );
        let crlf = lf.replace('\n', "\r\n");
        for csv in [lf, crlf] {
            let p = plan(&csv, &ctx_with(vec![]));
            let lines: Vec<u64> = p.skipped.iter().map(|s| s.line).collect();
            assert_eq!(lines, [2, 3], "{csv:?}");
        }
    }

    #[test]
    fn quoted_commas_quotes_and_newlines_survive() {
        let csv = format!(
            "{HEADER}\"\",\"Room, \"\"East\"\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"p,w\",\"\",\"\",\"{{\"\"note\"\": \"\"a, \\\"\"b\\\"\"\"\",\n\"\"x\"\": 1}}\"\n\
             \"\",\"Next\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"pw\",\"\",\"\",\"\"\n"
        );
        let p = plan(&csv, &ctx_with(vec![]));
        assert!(p.skipped.is_empty(), "{:?}", p.skipped);
        assert_eq!(
            p.creates[0].profile.name().unwrap().as_str(),
            "Room, \"East\""
        );
        assert_eq!(p.creates[0].password.expose(), "p,w");
        let custom = p.creates[0].profile.custom_data().unwrap();
        assert_eq!(custom.as_map()["note"], "a, \"b\"");
        assert_eq!(custom.as_map()["x"], 1, "a newline inside the quoted value");
        assert_eq!(
            p.creates[1].line, 4,
            "line numbers count the embedded newline"
        );
    }

    #[test]
    fn filled_id_updates_blank_password_keeps_and_filled_changes() {
        let existing = endpoint("e1", json!({"name": "Old", "port": 22, "location": "HQ"}));
        let keep = plan(
            "id,name,port,password\ne1,New,,\n",
            &ctx_with(vec![existing.clone()]),
        );
        let u = &keep.updates[0];
        assert_eq!(u.profile.name().unwrap().as_str(), "New");
        assert_eq!(
            u.profile.port(),
            None,
            "a present column's blank means null"
        );
        assert_eq!(
            u.profile.location().unwrap().as_str(),
            "HQ",
            "absent columns stay"
        );
        assert_eq!(u.password, SecretChange::Keep);
        let change = plan(
            "id,name,password\ne1,New,secret\n",
            &ctx_with(vec![existing]),
        );
        assert!(
            matches!(&change.updates[0].password, SecretChange::Set(s) if s.expose() == "secret")
        );
    }

    #[test]
    fn unknown_ids_and_bad_values_are_skipped_with_reasons() {
        let existing = endpoint("e1", json!({"name": "Old"}));
        let csv = "id,name,port,password\nnope,X,,\ne1,X,99999,\ne1,,,\n\"\",Fine,1,pw\n";
        let p = plan(csv, &ctx_with(vec![existing]));
        assert_eq!(p.creates.len(), 1);
        assert!(p.updates.is_empty());
        let reasons: Vec<_> = p
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].1.contains("no endpoint with id 'nope'"));
        assert!(reasons[1].1.contains("port"));
        assert!(reasons[2].1.contains("name"));
        assert_eq!(p.skipped[0].id.as_deref(), Some("nope"));
    }

    #[test]
    fn annex_o_listener_calendar_and_limit_rules_skip_rows() {
        let annex = endpoint(
            "e1",
            json!({"name": "A", "dialStyle": "ANNEX_O", "calendarId": "a@x.example"}),
        );
        let ctx = CsvContext {
            capacity: 1,
            ..ctx_with(vec![annex])
        };
        let csv = "id,name,dialstyle,listenerserviceid,calendarid,password\n\
                   e1,A,SIP_URI,,a@x.example,\n\
                   ,B,,ls-other,,pw\n\
                   ,C,,,a@x.example,pw\n\
                   ,D,,ls1,d@x.example,pw\n\
                   ,E,,,,pw\n";
        let p = plan(csv, &ctx);
        assert_eq!(p.creates.len(), 1, "{:?}", p.skipped);
        assert_eq!(p.creates[0].profile.name().unwrap().as_str(), "D");
        let reasons: Vec<_> = p.skipped.iter().map(|s| s.reason.clone()).collect();
        assert!(reasons[0].contains("ANNEX_O"), "{reasons:?}");
        assert!(reasons[1].contains("listenerServiceId"));
        assert!(reasons[2].contains("calendarId"));
        assert!(reasons[3].contains("limit"));
    }

    #[test]
    fn calendar_ids_move_between_rows_in_order() {
        let a = endpoint("e1", json!({"name": "A", "calendarId": "c@x.example"}));
        let csv = "id,name,calendarid,password\ne1,A,,\n,B,c@x.example,pw\n,C,c@x.example,pw\n";
        let p = plan(csv, &ctx_with(vec![a]));
        assert_eq!(p.updates.len(), 1);
        assert_eq!(
            p.creates.len(),
            1,
            "the freed id goes to the first claimant"
        );
        assert_eq!(p.skipped.len(), 1);
    }

    #[test]
    fn later_rows_for_the_same_id_build_on_earlier_ones() {
        let a = endpoint("e1", json!({"name": "A"}));
        let p = plan(
            "id,name,location,password\ne1,A,HQ,new\ne1,B,,\n",
            &ctx_with(vec![a]),
        );
        assert_eq!(p.updates.len(), 1);
        let u = &p.updates[0];
        assert_eq!(u.profile.name().unwrap().as_str(), "B");
        assert_eq!(u.line, 3);
        assert!(matches!(&u.password, SecretChange::Set(s) if s.expose() == "new"));
    }

    #[test]
    fn header_errors_fail_the_whole_upload() {
        for bad in ["", "id,name,colour\n", "id,name,NAME\n"] {
            let e = CsvUpload::parse(bad.as_bytes()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Invalid, "{bad:?}");
        }
        let ok = CsvUpload::parse("\u{feff}ID, Name ,IpAddress\n".as_bytes()).unwrap();
        assert!(ok.is_empty());
    }

    #[test]
    fn ragged_rows_and_blank_lines() {
        let p = plan("id,name,password\n,A\n\n,B,pw\n,,\n", &ctx_with(vec![]));
        assert_eq!(p.creates.len(), 1);
        assert_eq!(p.skipped.len(), 1);
        assert!(p.skipped[0].reason.contains("2 fields"));
    }

    #[test]
    fn size_bound_is_checked_before_parsing() {
        let big = vec![b'a'; MAX_BYTES + 1];
        let e = CsvUpload::parse(&big).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PayloadTooLarge);
        assert_eq!(e.details()["limitBytes"], MAX_BYTES);
        let mut exact = HEADER.as_bytes().to_vec();
        exact.resize(MAX_BYTES, b'\n');
        assert!(CsvUpload::parse(&exact).is_ok());
    }

    #[test]
    fn ids_lists_each_named_id_once() {
        let u = CsvUpload::parse(b"id,name\ne1,A\ne1,B\n,C\n../x,D\ne2,E\n").unwrap();
        let ids: Vec<_> = u.ids().iter().map(|i| i.as_str().to_owned()).collect();
        assert_eq!(ids, ["e1", "e2"]);
    }
}
