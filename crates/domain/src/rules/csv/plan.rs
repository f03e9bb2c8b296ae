//! The per-row plan of an upload: create, update or skip, with a [`SkipReason`] for each skip.
//!
//! - a blank `id` creates an endpoint, which must have a `password` and a `name`;
//! - a filled `id` updates that endpoint of the enterprise: each column present in the file
//!   replaces the field (blank means null), columns absent from the header leave their fields
//!   as they are, and a blank `password` keeps the stored one;
//! - a row is skipped when it cannot be read, its id is unknown, a value breaks a field's
//!   bounds, it would change an ANNEX_O dial style, reuse another endpoint's calendarId, name
//!   another enterprise's listener, or create past the enterprise's endpoint limit;
//! - rows are applied in file order, so a later row for the same id sees the earlier row's
//!   result.

use super::columns::Column;
use super::parse::{CsvUpload, MalformedRow, Row};
use crate::endpoint::{Endpoint, EndpointProfile, Field};
use crate::enums::shorten;
use crate::ids::{EndpointId, ListenerServiceId};
use crate::rules::{dial_style, password_from_text};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Why the plan did not apply a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// The row could not be read as cells.
    Malformed(MalformedRow),
    /// A blank `id` creates, and a new endpoint needs a password.
    PasswordRequired,
    /// No endpoint of the enterprise has this id (shortened for display).
    UnknownId(String),
    /// A value breaks a field's bounds, or a required field is missing: the field's message.
    InvalidValue(String),
    /// The row would change or clear an ANNEX_O dial style: the rule's message.
    DialStyleLocked(String),
    /// The row names a listener service the enterprise does not have.
    UnknownListener(ListenerServiceId),
    /// Another endpoint (stored, or created by an earlier row) holds the calendarId.
    CalendarTaken(String),
    /// Creating the endpoint would pass the enterprise's endpoint limit.
    LimitReached,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Malformed(defect) => defect.fmt(f),
            SkipReason::PasswordRequired => f.write_str("a new endpoint needs a password"),
            SkipReason::UnknownId(id) => write!(f, "no endpoint with id '{id}' in this enterprise"),
            SkipReason::InvalidValue(message) | SkipReason::DialStyleLocked(message) => {
                f.write_str(message)
            }
            SkipReason::UnknownListener(id) => write!(
                f,
                "listenerServiceId '{id}' is not a listener service of this enterprise"
            ),
            SkipReason::CalendarTaken(calendar) => {
                write!(
                    f,
                    "calendarId '{calendar}' is already used by another endpoint"
                )
            }
            SkipReason::LimitReached => f.write_str("the enterprise's endpoint limit is reached"),
        }
    }
}

/// One row the plan did not apply, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// The line of the file where the row starts (the header is line 1).
    pub line: u64,
    /// The row's `id` cell, if it had one.
    pub id: Option<String>,
    pub reason: SkipReason,
}

/// A row that creates an endpoint; its password is the row's own `password` cell.
///
/// The plan holds no password, only the line whose cell has it: passwords are sealed before
/// the plan runs (see [`super::write`]), and the plan's rows are shown to people.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCreate {
    pub line: u64,
    pub profile: EndpointProfile,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedUpdate {
    /// The last line that changed this endpoint.
    pub line: u64,
    pub id: EndpointId,
    pub profile: EndpointProfile,
    /// The line whose `password` cell sets the new password (a later blank cell keeps an
    /// earlier row's); `None` keeps the stored one.
    pub password_line: Option<u64>,
}

/// What an upload will do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvPlan {
    pub creates: Vec<PlannedCreate>,
    pub updates: Vec<PlannedUpdate>,
    pub skipped: Vec<SkippedRow>,
}

impl CsvPlan {
    /// What the plan did, once written: counts and the skipped rows.
    pub fn into_report(self) -> CsvReport {
        CsvReport {
            created: self.creates.len(),
            updated: self.updates.len(),
            skipped: self.skipped,
        }
    }
}

/// What a written upload did, for the logs and for clients that compare (the HTTP answer is
/// the full list).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvReport {
    pub created: usize,
    pub updated: usize,
    pub skipped: Vec<SkippedRow>,
}

impl CsvReport {
    /// The audit trail's detail of an upload: counts only (rows hold passwords).
    pub fn audit_detail(&self) -> String {
        format!(
            "created {}, updated {}, skipped {}",
            self.created,
            self.updated,
            self.skipped.len()
        )
    }
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
    /// How many endpoints may still be created: `EndpointLimit::room` of the stored count.
    pub capacity: usize,
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

    /// The context the next upload of the same enterprise sees once `plan` is written, for a
    /// tool that plans a file in several uploads (`roomlinkctl csv upload`): updated profiles,
    /// calendarIds moved or claimed, the capacity the creates used. A created endpoint's id is
    /// only known once written; `stand_in` names it here.
    pub fn advance(
        &mut self,
        plan: &CsvPlan,
        stand_in: impl Fn(&PlannedCreate) -> EndpointId,
    ) -> Result<(), crate::error::Error> {
        for update in &plan.updates {
            let Some(stored) = self.existing.get(&update.id) else {
                continue;
            };
            if let Some(old) = stored.profile().calendar_id()
                && self.calendar_owners.get(old.as_str()) == Some(&update.id)
            {
                self.calendar_owners.remove(old.as_str());
            }
            if let Some(new) = update.profile.calendar_id() {
                self.calendar_owners
                    .insert(new.as_str().to_owned(), update.id.clone());
            }
            let updated = Endpoint::new(
                update.id.clone(),
                stored.enterprise_id().clone(),
                update.profile.clone(),
                stored.password().cloned(),
            )?;
            self.existing.insert(update.id.clone(), updated);
        }
        for create in &plan.creates {
            if let Some(calendar) = create.profile.calendar_id() {
                self.calendar_owners
                    .insert(calendar.as_str().to_owned(), stand_in(create));
            }
        }
        self.capacity = self.capacity.saturating_sub(plan.creates.len());
        Ok(())
    }
}

impl CsvUpload {
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
                Err(defect) => Err(SkipReason::Malformed(defect.clone())),
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
    fn create(&mut self, upload: &CsvUpload, row: &Row) -> Result<(), SkipReason> {
        let password = upload
            .cell(row, Column::Password)
            .filter(|p| !p.is_empty())
            .ok_or(SkipReason::PasswordRequired)?;
        password_from_text(password).map_err(invalid)?;
        let mut profile = EndpointProfile::default();
        apply_cells(&mut profile, upload.field_cells(row))?;
        self.check_listener(&profile)?;
        let owner = Owner::NewRow(row.line);
        self.check_calendar(&profile, &owner)?;
        if self.plan.creates.len() >= self.ctx.capacity {
            return Err(SkipReason::LimitReached);
        }
        self.claim_calendar(None, &profile, owner);
        self.plan.creates.push(PlannedCreate {
            line: row.line,
            profile,
        });
        Ok(())
    }

    fn update(&mut self, upload: &CsvUpload, row: &Row, id: &str) -> Result<(), SkipReason> {
        let unknown = || SkipReason::UnknownId(shorten(id));
        let id = EndpointId::parse(id).map_err(|_| unknown())?;
        let stored = self.ctx.existing.get(&id).ok_or_else(unknown)?;
        let earlier = self.update_index.get(&id).map(|&i| &self.plan.updates[i]);
        let before = earlier.map_or(stored.profile(), |u| &u.profile).clone();
        let mut profile = before.clone();
        apply_cells(&mut profile, upload.field_cells(row))?;
        dial_style::check_unchanged(stored, &profile)
            .map_err(|e| SkipReason::DialStyleLocked(e.message().to_owned()))?;
        self.check_listener(&profile)?;
        let owner = Owner::Stored(id.clone());
        self.check_calendar(&profile, &owner)?;
        let password_line = match upload.cell(row, Column::Password).filter(|p| !p.is_empty()) {
            Some(p) => password_from_text(p)
                .map(|_| Some(row.line))
                .map_err(invalid)?,
            None => earlier.and_then(|u| u.password_line),
        };
        self.claim_calendar(Some(&before), &profile, owner);
        let update = PlannedUpdate {
            line: row.line,
            id: id.clone(),
            profile,
            password_line,
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

    fn check_listener(&self, profile: &EndpointProfile) -> Result<(), SkipReason> {
        match profile.listener() {
            Some(l) if !self.ctx.listeners.contains(&l) => Err(SkipReason::UnknownListener(l)),
            _ => Ok(()),
        }
    }

    fn check_calendar(&self, profile: &EndpointProfile, owner: &Owner) -> Result<(), SkipReason> {
        let Some(calendar) = profile.calendar_id() else {
            return Ok(());
        };
        match self.calendar_owners.get(calendar.as_str()) {
            Some(holder) if holder != owner => {
                Err(SkipReason::CalendarTaken(calendar.as_str().to_owned()))
            }
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

fn invalid(e: crate::error::Error) -> SkipReason {
    SkipReason::InvalidValue(e.message().to_owned())
}

fn apply_cells<'a>(
    profile: &mut EndpointProfile,
    cells: impl Iterator<Item = (Field, &'a str)>,
) -> Result<(), SkipReason> {
    for (field, text) in cells {
        profile.set_text(field, text).map_err(invalid)?;
    }
    profile.check_complete().map_err(invalid)
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
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(p.skipped[0].line, 3);
        assert_eq!(p.skipped[0].reason, SkipReason::PasswordRequired);
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
        assert_eq!(u.password_line, None);
        let change = plan(
            "id,name,password\ne1,New,secret\n",
            &ctx_with(vec![existing]),
        );
        assert_eq!(change.updates[0].password_line, Some(2));
    }

    #[test]
    fn unknown_ids_and_bad_values_are_skipped_with_reasons() {
        let existing = endpoint("e1", json!({"name": "Old"}));
        let csv = "id,name,port,password\nnope,X,,\ne1,X,99999,\ne1,,,\n\"\",Fine,1,pw\n";
        let p = plan(csv, &ctx_with(vec![existing]));
        assert_eq!(p.creates.len(), 1);
        assert!(p.updates.is_empty());
        let reasons: Vec<_> = p.skipped.iter().map(|s| &s.reason).collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert_eq!(*reasons[0], SkipReason::UnknownId("nope".into()));
        assert_eq!(
            reasons[0].to_string(),
            "no endpoint with id 'nope' in this enterprise"
        );
        assert!(matches!(reasons[1], SkipReason::InvalidValue(m) if m.contains("port")));
        assert!(matches!(reasons[2], SkipReason::InvalidValue(m) if m.contains("name")));
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
        assert!(
            matches!(&reasons[0], SkipReason::DialStyleLocked(m) if m.contains("ANNEX_O")),
            "{reasons:?}"
        );
        assert_eq!(
            reasons[1],
            SkipReason::UnknownListener(ListenerServiceId::from_trusted("ls-other".into()))
        );
        assert_eq!(reasons[2], SkipReason::CalendarTaken("a@x.example".into()));
        assert_eq!(reasons[3], SkipReason::LimitReached);
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
        assert_eq!(
            u.password_line,
            Some(2),
            "the earlier row's password stays set"
        );
    }

    #[test]
    fn ragged_rows_and_blank_lines() {
        let p = plan("id,name,password\n,A\n\n,B,pw\n,,\n", &ctx_with(vec![]));
        assert_eq!(p.creates.len(), 1);
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(
            p.skipped[0].reason.to_string(),
            "the row has 2 fields; the header has 3"
        );
    }
}
