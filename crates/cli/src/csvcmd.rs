//! `csv validate`, `csv upload`, `csv export`.
//!
//! Planning uses the domain's own CSV rules (`CsvUpload::parse` and `plan`), part by part as
//! the service applies them: each part is one upload (one transaction) whose plan sees the
//! effects of the parts before it.

use crate::client::{CliError, Client, json_body};
use crate::output::{json, table};
use crate::split::{self, Part};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::Method;
use roomlink_domain::endpoint::{Endpoint, EndpointProfile, Field};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::rules::csv::{
    CsvContext, CsvPlan, CsvUpload, MAX_BYTES, SkipReason, record_line, restore,
};
use roomlink_domain::rules::limit::EndpointLimit;
use roomlink_domain::rules::put;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// What a row of the file does (or did).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Skip,
    /// A blank row: the service ignores it.
    Ignored,
}

impl Action {
    fn as_str(&self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Skip => "skip",
            Action::Ignored => "ignored",
        }
    }
}

/// One data row of the file with its planned outcome.
#[derive(Debug, Clone)]
pub struct RowPlan {
    pub line: u64,
    pub id: Option<String>,
    pub name: Option<String>,
    pub action: Action,
    /// Why it is skipped, or a note (another row also updates the endpoint).
    pub reason: Option<String>,
    /// The profile the row leads to (creates and the last update of an endpoint).
    profile: Option<EndpointProfile>,
    calendar: Option<String>,
    /// Skipped because another endpoint holds its calendarId.
    calendar_taken: bool,
}

impl RowPlan {
    fn to_json(&self) -> Value {
        json!({
            "line": self.line,
            "id": self.id,
            "name": self.name,
            "action": self.action.as_str(),
            "reason": self.reason,
        })
    }
}

/// The id, name and calendarId cells of every record, by original line.
struct Cells {
    id: Option<String>,
    name: Option<String>,
    calendar: Option<String>,
}

fn cells_by_line(parts: &[Part]) -> HashMap<u64, Cells> {
    let mut out = HashMap::new();
    for part in parts {
        let body = part
            .body
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(&part.body);
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(body);
        let mut records = reader.byte_records();
        let Some(Ok(header)) = records.next() else {
            continue;
        };
        let column = |name: &str| {
            header
                .iter()
                .position(|h| String::from_utf8_lossy(h).trim().eq_ignore_ascii_case(name))
        };
        let (id, name, calendar) = (column("id"), column("name"), column("calendarid"));
        for record in records.flatten() {
            let line = record.position().map_or(0, |p| record_line(body, p));
            let get = |col: Option<usize>| {
                col.and_then(|c| record.get(c))
                    .map(|v| restore(String::from_utf8_lossy(v).trim()).to_owned())
                    .filter(|v| !v.is_empty())
            };
            out.insert(
                part.original_line(line),
                Cells {
                    id: get(id),
                    name: get(name),
                    calendar: get(calendar),
                },
            );
        }
    }
    out
}

/// The state of the enterprise that planning needs, and where it came from.
pub struct Baseline {
    pub ctx: CsvContext,
    pub enterprise: EnterpriseId,
    /// The endpoints before the upload (empty offline).
    pub endpoints: Vec<Endpoint>,
    pub limit: Option<u64>,
    pub offline: bool,
}

/// Offline: every id and listener the file names is assumed to exist, with no limit.
fn offline_baseline(uploads: &[CsvUpload]) -> Result<Baseline, CliError> {
    let enterprise = EnterpriseId::from_trusted("offline".into());
    let mut ctx = CsvContext {
        capacity: usize::MAX,
        ..CsvContext::default()
    };
    for upload in uploads {
        for id in upload.ids() {
            // A stand-in so that an update row is checked against its columns; its name keeps
            // a row whose file has no name column complete.
            let mut body = Map::new();
            body.insert("name".into(), Value::String("(existing endpoint)".into()));
            let profile = put::insert(&body)
                .map_err(|e| CliError::other(e.message().to_owned()))?
                .profile;
            let endpoint = Endpoint::new(id.clone(), enterprise.clone(), profile, None)
                .map_err(|e| CliError::other(e.message().to_owned()))?;
            ctx.existing.insert(id, endpoint);
        }
        ctx.listeners.extend(upload.listener_ids());
    }
    Ok(Baseline {
        ctx,
        enterprise,
        endpoints: Vec::new(),
        limit: None,
        offline: true,
    })
}

/// An endpoint as the service lists it, rebuilt through the domain's decoder.
fn endpoint_from_json(value: &Value, enterprise: &EnterpriseId) -> Result<Endpoint, CliError> {
    let bad = |why: &str| CliError::other(format!("the service listed an endpoint {why}"));
    let object = value
        .as_object()
        .ok_or_else(|| bad("that is not an object"))?;
    let id = object
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("without an id"))?;
    // Only the fields this client knows: a newer service may list more.
    let body: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| Field::from_json_name(k).is_some())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let draft = put::insert(&body)
        .map_err(|e| bad(&format!("this client cannot read ({})", e.message())))?;
    Endpoint::new(
        EndpointId::from_trusted(id.to_owned()),
        enterprise.clone(),
        draft.profile,
        None,
    )
    .map_err(|e| bad(&format!("this client cannot read ({})", e.message())))
}

fn endpoints_from_json(list: &Value, enterprise: &EnterpriseId) -> Result<Vec<Endpoint>, CliError> {
    list.as_array()
        .ok_or_else(|| CliError::other("the service's endpoint list is not a JSON array"))?
        .iter()
        .map(|v| endpoint_from_json(v, enterprise))
        .collect()
}

/// The enterprise as the service has it now: endpoints, listeners, remaining capacity.
fn service_baseline(client: &Client) -> Result<Baseline, CliError> {
    let enterprise_json = client.get_json(&["api", "enterprises", "self"])?;
    let enterprise =
        EnterpriseId::from_trusted(enterprise_json["id"].as_str().unwrap_or("self").to_owned());
    let limit = enterprise_json["endpointLimit"].as_u64();
    let endpoints = endpoints_from_json(&client.get_json(&["api", "endpoints"])?, &enterprise)?;
    let listeners = client.get_json(&["api", "listenerservices"])?;
    let listeners: HashSet<ListenerServiceId> = listeners
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["id"].as_str())
        .map(|id| ListenerServiceId::from_trusted(id.to_owned()))
        .collect();
    let ctx = CsvContext {
        listeners,
        capacity: limit.map_or(usize::MAX, |l| {
            EndpointLimit::from_stored(i64::try_from(l).unwrap_or(i64::MAX)).room(endpoints.len())
        }),
        ..CsvContext::of_endpoints(&endpoints)
    };
    Ok(Baseline {
        ctx,
        enterprise,
        endpoints,
        limit,
        offline: false,
    })
}

/// Parses every part; a file that cannot be parsed at all fails here, before any upload.
fn parse_parts(parts: &[Part]) -> Result<Vec<CsvUpload>, CliError> {
    parts
        .iter()
        .map(|part| {
            CsvUpload::parse(&part.body).map_err(|e| {
                CliError::other(format!("the file cannot be uploaded: {}", e.message()))
            })
        })
        .collect()
}

/// Plans the parts in order, each against the state the previous ones leave.
fn plan_parts(uploads: &[CsvUpload], baseline: &Baseline) -> Result<Vec<CsvPlan>, CliError> {
    let mut ctx = baseline.ctx.clone();
    let mut plans = Vec::with_capacity(uploads.len());
    for (index, upload) in uploads.iter().enumerate() {
        let plan = upload.plan(&ctx);
        ctx.advance(&plan, |create| {
            // Later parts only need to know the calendarId is taken.
            EndpointId::from_trusted(format!("planned-{index}-{}", create.line))
        })
        .map_err(|e| CliError::other(e.message().to_owned()))?;
        plans.push(plan);
    }
    Ok(plans)
}

/// Every data row of the file, in order, with what the plan does to it.
fn rows(parts: &[Part], plans: &[CsvPlan]) -> Vec<RowPlan> {
    let cells = cells_by_line(parts);
    let mut by_line: HashMap<u64, RowPlan> = HashMap::new();
    let row = |line: u64, action: Action, reason: Option<String>| {
        let c = cells.get(&line);
        RowPlan {
            line,
            id: c.and_then(|c| c.id.clone()),
            name: c.and_then(|c| c.name.clone()),
            calendar: c.and_then(|c| c.calendar.clone()),
            action,
            reason,
            profile: None,
            calendar_taken: false,
        }
    };
    // The line that last planned each endpoint's update, across parts.
    let mut last_update: HashMap<String, u64> = HashMap::new();
    for (part, plan) in parts.iter().zip(plans) {
        for create in &plan.creates {
            let line = part.original_line(create.line);
            let mut r = row(line, Action::Create, None);
            r.profile = Some(create.profile.clone());
            by_line.insert(line, r);
        }
        for update in &plan.updates {
            let line = part.original_line(update.line);
            let mut r = row(line, Action::Update, None);
            r.profile = Some(update.profile.clone());
            last_update.insert(update.id.as_str().to_owned(), line);
            by_line.insert(line, r);
        }
        for skip in &plan.skipped {
            let line = part.original_line(skip.line);
            let mut r = row(line, Action::Skip, Some(skip.reason.to_string()));
            r.calendar_taken = matches!(skip.reason, SkipReason::CalendarTaken(_));
            by_line.insert(line, r);
        }
    }
    let mut out = Vec::new();
    for part in parts {
        for &line in &part.lines {
            let planned = by_line.remove(&line);
            out.push(match planned {
                Some(r) => r,
                None => {
                    // Not in the plan's lists: an earlier row for an endpoint a later row also
                    // updates (both apply, in order), or a blank row.
                    let mut r = row(line, Action::Ignored, Some("blank row".into()));
                    if let Some(id) = r.id.clone() {
                        r.action = Action::Update;
                        r.reason = last_update.get(&id).map(|l| {
                            format!("line {l} also updates this endpoint, after this row")
                        });
                    }
                    r
                }
            });
        }
    }
    explain_duplicates(&mut out);
    out
}

/// A calendarId refused because an earlier row of the same file took it says so.
fn explain_duplicates(rows: &mut [RowPlan]) {
    let mut claimed: HashMap<String, u64> = HashMap::new();
    for r in rows.iter_mut() {
        let Some(calendar) = r.calendar.clone() else {
            continue;
        };
        match r.action {
            Action::Create | Action::Update if r.profile.is_some() => {
                claimed.entry(calendar).or_insert(r.line);
            }
            Action::Skip => {
                if let (Some(first), Some(reason)) = (claimed.get(&calendar), r.reason.as_mut())
                    && r.calendar_taken
                {
                    reason.push_str(&format!(" (duplicate of line {first} of this file)"));
                }
            }
            _ => {}
        }
    }
}

/// The shared options of `validate` and `upload`.
pub struct PlanOptions<'a> {
    pub file: &'a Path,
    pub max_part_bytes: Option<usize>,
    pub all: bool,
    pub strict: bool,
    pub as_json: bool,
}

/// Exit status of a command that went through: 0, or 3 under `--strict` when rows do not apply.
pub type Status = u8;

fn read_and_split(options: &PlanOptions) -> Result<(Vec<u8>, Vec<Part>), CliError> {
    let bytes = std::fs::read(options.file)
        .map_err(|e| CliError::other(format!("cannot read {}: {e}", options.file.display())))?;
    let max = options.max_part_bytes.unwrap_or(MAX_BYTES);
    if max == 0 || max > MAX_BYTES {
        return Err(CliError::other(format!(
            "--max-part-bytes must be from 1 to {MAX_BYTES} (the service's bound)"
        )));
    }
    let parts = split::split(&bytes, max)?;
    Ok((bytes, parts))
}

fn count(rows: &[RowPlan], action: &Action) -> usize {
    rows.iter().filter(|r| r.action == *action).count()
}

fn row_table(out: &mut dyn Write, rows: &[&RowPlan]) -> std::io::Result<()> {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.line.to_string(),
                r.action.as_str().to_owned(),
                r.id.clone().unwrap_or_else(|| "-".into()),
                r.name.clone().unwrap_or_else(|| "-".into()),
                r.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    table(out, &["LINE", "ACTION", "ID", "NAME", "REASON"], &cells)
}

/// `csv validate FILE`: the per-row plan, without changing anything.
pub fn validate(
    client: Option<&Client>,
    options: &PlanOptions,
    out: &mut dyn Write,
) -> Result<Status, CliError> {
    let (bytes, parts) = read_and_split(options)?;
    let uploads = parse_parts(&parts)?;
    let baseline = match client {
        Some(client) => service_baseline(client)?,
        None => offline_baseline(&uploads)?,
    };
    let plans = plan_parts(&uploads, &baseline)?;
    let rows = rows(&parts, &plans);
    let (creates, updates, skips) = (
        count(&rows, &Action::Create),
        count(&rows, &Action::Update),
        count(&rows, &Action::Skip),
    );
    let shown: Vec<&RowPlan> = rows
        .iter()
        .filter(|r| options.all || r.action == Action::Skip)
        .collect();
    if options.as_json {
        json(
            out,
            &json!({
                "file": options.file.display().to_string(),
                "offline": baseline.offline,
                "bytes": bytes.len(),
                "parts": parts.len(),
                "rows": rows.len(),
                "create": creates,
                "update": updates,
                "skip": skips,
                "details": shown.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
            }),
        )?;
    } else {
        if baseline.offline {
            writeln!(
                out,
                "offline check: every id and listener service the file names is assumed to exist and the endpoint limit is not checked (--against-service checks them)"
            )?;
        }
        writeln!(
            out,
            "{}: {} rows, {} bytes, {} upload{} of at most {} bytes",
            options.file.display(),
            rows.len(),
            bytes.len(),
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            options.max_part_bytes.unwrap_or(MAX_BYTES)
        )?;
        writeln!(
            out,
            "{creates} to create, {updates} to update, {skips} skipped"
        )?;
        if !shown.is_empty() {
            row_table(out, &shown)?;
        }
    }
    Ok(if options.strict && skips > 0 { 3 } else { 0 })
}

/// A canonical text of a profile: equal texts, equal endpoints.
fn key(profile: &EndpointProfile) -> String {
    Field::ALL
        .iter()
        .map(|f| profile.text(*f))
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

fn progress(total: u64, parts: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {bytes}/{total_bytes} {elapsed}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("part 1/{parts}"));
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// `csv upload FILE`: split, upload part by part, then say which rows did not apply and why.
pub fn upload(
    client: &Client,
    options: &PlanOptions,
    out: &mut dyn Write,
) -> Result<Status, CliError> {
    let (bytes, parts) = read_and_split(options)?;
    let uploads = parse_parts(&parts)?;
    let baseline = service_baseline(client)?;
    let plans = plan_parts(&uploads, &baseline)?;
    let mut rows = rows(&parts, &plans);

    let started = Instant::now();
    let total: u64 = parts.iter().map(|p| p.body.len() as u64).sum();
    let bar = progress(total, parts.len());
    let mut last = None;
    for (index, part) in parts.iter().enumerate() {
        bar.set_message(format!("part {}/{}", index + 1, parts.len()));
        let url = client.url(&["api", "endpoints", "csv"], &[]);
        let request = client
            .request(Method::PUT, url)
            .header("Content-Type", "text/csv")
            .body(part.body.clone());
        let answer = client.send(request).and_then(json_body);
        match answer {
            Ok(list) => last = Some(list),
            Err(e) => {
                bar.abandon();
                let applied = if index == 0 {
                    "nothing was applied".to_owned()
                } else {
                    format!(
                        "parts 1 to {index} were applied (rows up to line {})",
                        parts[index - 1].lines.last().copied().unwrap_or(1)
                    )
                };
                return Err(CliError::other(format!(
                    "part {} of {} (from line {}) failed: {e}; {applied}",
                    index + 1,
                    parts.len(),
                    part.lines.first().copied().unwrap_or(2)
                )));
            }
        }
        bar.inc(part.body.len() as u64);
    }
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    let after = endpoints_from_json(
        &last.unwrap_or(Value::Array(Vec::new())),
        &baseline.enterprise,
    )?;
    let checked = compare(&mut rows, &baseline, &after);

    let not_applied: Vec<&RowPlan> = rows.iter().filter(|r| r.action == Action::Skip).collect();
    let shown: Vec<&RowPlan> = if options.all {
        rows.iter().collect()
    } else {
        not_applied.clone()
    };
    if options.as_json {
        json(
            out,
            &json!({
                "file": options.file.display().to_string(),
                "bytes": bytes.len(),
                "parts": parts.len(),
                "rows": rows.len(),
                "seconds": elapsed.as_secs_f64(),
                "created": checked.created,
                "updated": checked.updated,
                "notApplied": not_applied.len(),
                "endpoints": after.len(),
                "details": shown.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
            }),
        )?;
    } else {
        writeln!(
            out,
            "uploaded {}: {} rows, {} bytes in {} part{} in {:.1} s",
            options.file.display(),
            rows.len(),
            bytes.len(),
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            elapsed.as_secs_f64()
        )?;
        writeln!(
            out,
            "created {}, updated {}, {} row{} did not apply; the enterprise now has {} endpoints",
            checked.created,
            checked.updated,
            not_applied.len(),
            if not_applied.len() == 1 { "" } else { "s" },
            after.len()
        )?;
        if !shown.is_empty() {
            row_table(out, &shown)?;
        }
    }
    Ok(if options.strict && !not_applied.is_empty() {
        3
    } else {
        0
    })
}

struct Checked {
    created: usize,
    updated: usize,
}

/// Compares the service's final list with the plan. Rows the plan skipped keep its reason;
/// planned rows whose result is not in the list become skips with the likely cause.
fn compare(rows: &mut [RowPlan], baseline: &Baseline, after: &[Endpoint]) -> Checked {
    let before: HashSet<&EndpointId> = baseline.endpoints.iter().map(Endpoint::id).collect();
    let final_by_id: HashMap<&str, &Endpoint> =
        after.iter().map(|e| (e.id().as_str(), e)).collect();
    let mut new_keys: HashMap<String, usize> = HashMap::new();
    for e in after.iter().filter(|e| !before.contains(e.id())) {
        *new_keys.entry(key(e.profile())).or_default() += 1;
    }
    let full = baseline.limit.is_some_and(|l| after.len() as u64 >= l);
    // Only an endpoint's last planned update must match the final list; earlier ones (in
    // earlier parts) were overwritten by it.
    let last_update: HashMap<String, u64> = rows
        .iter()
        .filter(|r| r.action == Action::Update && r.profile.is_some())
        .filter_map(|r| Some((r.id.clone()?, r.line)))
        .collect();
    let mut checked = Checked {
        created: 0,
        updated: 0,
    };
    for r in rows.iter_mut() {
        let Some(profile) = &r.profile else {
            continue;
        };
        match r.action {
            Action::Create => match new_keys.get_mut(&key(profile)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    checked.created += 1;
                }
                _ => {
                    r.action = Action::Skip;
                    r.reason = Some(if full {
                        "not created: the enterprise's endpoint limit was reached (probably by other changes during the upload)".into()
                    } else {
                        "not created: not in the service's answer (probably a concurrent change, e.g. its calendarId was taken meanwhile)".into()
                    });
                }
            },
            Action::Update => {
                let id = r.id.clone().unwrap_or_default();
                if last_update.get(&id) != Some(&r.line) {
                    continue;
                }
                match final_by_id.get(id.as_str()) {
                    Some(e) if key(e.profile()) == key(profile) => checked.updated += 1,
                    Some(_) => {
                        r.action = Action::Skip;
                        r.reason = Some(
                            "the endpoint differs from this row after the upload (changed by someone else meanwhile?)".into(),
                        );
                    }
                    None => {
                        r.action = Action::Skip;
                        r.reason = Some("the endpoint is gone (deleted during the upload?)".into());
                    }
                }
            }
            _ => {}
        }
    }
    checked
}

/// `csv export [-o FILE]`: the service's CSV export, to a file or standard output.
pub fn export(
    client: &Client,
    output: Option<&Path>,
    with_inventory: bool,
    out: &mut dyn Write,
) -> Result<Status, CliError> {
    let include: &[(&str, &str)] = if with_inventory {
        &[("include", "inventory")]
    } else {
        &[]
    };
    let url = client.url(&["api", "endpoints", "csv"], include);
    let mut response = client.send(client.request(Method::GET, url))?;
    match output {
        None => {
            response.copy_to(out).map_err(|e| {
                CliError::other(format!("the export was cut short: {}", e.without_url()))
            })?;
        }
        Some(path) => {
            let mut body = Vec::new();
            response.copy_to(&mut body).map_err(|e| {
                CliError::other(format!("the export was cut short: {}", e.without_url()))
            })?;
            std::fs::write(path, &body)
                .map_err(|e| CliError::other(format!("cannot write {}: {e}", path.display())))?;
            let rows = split::records(&body).1.len();
            writeln!(out, "exported {rows} endpoints to {}", path.display())?;
        }
    }
    Ok(0)
}
