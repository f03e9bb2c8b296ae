//! `template`: configuration templates (`/api/templates`): list, show, create from
//! `key=value` pairs, plan one on rooms as a table of changes, apply it as a job (watched
//! with a progress bar until it ends) and undo a job; `jobs` and `job` read jobs back. A
//! template is assigned to rooms (`assign`, `unassign`); `rooms` shows their drift as the
//! last checks found it, `check` checks them now, `reapply` re-applies it where they drifted.

use crate::client::{CliError, Client, json_body};
use crate::output::{cell, json, table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::Method;
use serde_json::{Map, Value, json as body};
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// How often a watched job is read again.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// Which rooms a plan is for.
#[derive(Debug)]
pub enum Rooms<'a> {
    All,
    Listener(&'a str),
    Location(&'a str),
    Endpoints(&'a [String]),
}

impl Rooms<'_> {
    fn to_json(&self) -> Value {
        match self {
            Rooms::All => body!({"all": true}),
            Rooms::Listener(id) => body!({"listenerId": id}),
            Rooms::Location(location) => body!({"location": location}),
            Rooms::Endpoints(ids) => body!({"endpoints": ids}),
        }
    }
}

/// What `template` was asked to do.
#[derive(Debug)]
pub enum TemplateAction<'a> {
    List,
    Show {
        id: &'a str,
    },
    Create {
        name: &'a str,
        description: Option<&'a str>,
        settings: &'a [String],
    },
    Plan {
        id: &'a str,
        rooms: Rooms<'a>,
    },
    /// Start applying; with `wait`, watch the job to its end.
    Apply {
        id: &'a str,
        rooms: Rooms<'a>,
        wait: bool,
    },
    /// Cancel a running job.
    Cancel {
        job: &'a str,
    },
    /// Start undoing an apply job.
    Undo {
        job: &'a str,
        wait: bool,
    },
    Jobs,
    Job {
        id: &'a str,
    },
    Assign {
        id: &'a str,
        rooms: Rooms<'a>,
    },
    Unassign {
        id: &'a str,
        rooms: Rooms<'a>,
    },
    /// The assigned rooms and their drift, as last checked (`check`: checked now).
    AssignedRooms {
        id: &'a str,
        check: bool,
    },
    /// Start applying the template to its drifted rooms.
    Reapply {
        id: &'a str,
        wait: bool,
    },
}

/// What a job's end says about exit status: whether every room was reached and took every
/// setting it supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    Clean,
    /// Some room was unreachable or refused a setting (`--strict` exits 3).
    Incomplete,
}

/// `key=value` pairs as a settings object: a value of digits is a number, any other value a
/// text (the service checks each against its key's space and says what it expected).
pub fn settings_of(pairs: &[String]) -> Result<Map<String, Value>, CliError> {
    let mut settings = Map::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(CliError::Other(format!(
                "--set {pair}: expected key=value, such as time_zone=Europe/Oslo"
            )));
        };
        let value = match value.parse::<i64>() {
            Ok(n) if !value.starts_with('+') => Value::from(n),
            _ => Value::from(value),
        };
        settings.insert(key.trim().to_owned(), value);
    }
    Ok(settings)
}

pub fn templates(
    client: &Client,
    action: &TemplateAction<'_>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<JobEnd, CliError> {
    let call = |method: Method, segments: &[&str], payload: Option<Value>| {
        let mut request = client.request(method, client.url(segments, &[]));
        if let Some(payload) = payload {
            request = request.json(&payload);
        }
        json_body(client.send(request)?)
    };
    match action {
        TemplateAction::List => {
            let all = call(Method::GET, &["api", "templates"], None)?;
            if as_json {
                return Ok(json(out, &all)?).map(|()| JobEnd::Clean);
            }
            let rows: Vec<Vec<String>> = all
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|t| {
                            let keys: Vec<&str> = t["settings"]
                                .as_object()
                                .map(|s| s.keys().map(String::as_str).collect())
                                .unwrap_or_default();
                            vec![cell(&t["id"]), cell(&t["name"]), keys.join(",")]
                        })
                        .collect()
                })
                .unwrap_or_default();
            table(out, &["ID", "NAME", "SETTINGS"], &rows)?;
        }
        TemplateAction::Show { id } => {
            let template = call(Method::GET, &["api", "templates", id], None)?;
            if as_json {
                return Ok(json(out, &template)?).map(|()| JobEnd::Clean);
            }
            writeln!(
                out,
                "{} ({})",
                cell(&template["name"]),
                cell(&template["id"])
            )?;
            if let Some(description) = template["description"].as_str() {
                writeln!(out, "{description}")?;
            }
            let rows: Vec<Vec<String>> = template["settings"]
                .as_object()
                .map(|s| s.iter().map(|(k, v)| vec![k.clone(), cell(v)]).collect())
                .unwrap_or_default();
            table(out, &["KEY", "VALUE"], &rows)?;
        }
        TemplateAction::Create {
            name,
            description,
            settings,
        } => {
            let settings = settings_of(settings)?;
            let created = call(
                Method::POST,
                &["api", "templates"],
                Some(body!({"name": name, "description": description, "settings": settings})),
            )?;
            if as_json {
                return Ok(json(out, &created)?).map(|()| JobEnd::Clean);
            }
            writeln!(out, "created template {}", cell(&created["id"]))?;
        }
        TemplateAction::Plan { id, rooms } => {
            let plan = call(
                Method::POST,
                &["api", "templates", id, "plan"],
                Some(body!({"rooms": rooms.to_json()})),
            )?;
            if as_json {
                return Ok(json(out, &plan)?).map(|()| JobEnd::Clean);
            }
            table(
                out,
                &["ROOM", "KEY", "PLAN", "NOW", "AFTER"],
                &plan_rows(&plan),
            )?;
            let s = &plan["summary"];
            writeln!(
                out,
                "{} rooms: {} to change ({} settings), {} unreachable; {} settings unchanged, {} unsupported, {} unreadable",
                cell(&s["rooms"]),
                cell(&s["roomsChanging"]),
                cell(&s["changes"]),
                cell(&s["unreachable"]),
                cell(&s["unchanged"]),
                cell(&s["unsupported"]),
                cell(&s["unreadable"]),
            )?;
        }
        TemplateAction::Apply { id, rooms, wait } => {
            let job = call(
                Method::POST,
                &["api", "templates", id, "apply"],
                Some(body!({"rooms": rooms.to_json()})),
            )?;
            return started(client, job, *wait, as_json, out);
        }
        TemplateAction::Undo { job, wait } => {
            let job = call(Method::POST, &["api", "jobs", job, "undo"], None)?;
            return started(client, job, *wait, as_json, out);
        }
        TemplateAction::Cancel { job } => {
            let job = call(Method::POST, &["api", "jobs", job, "cancel"], None)?;
            return report(&job, as_json, out);
        }
        TemplateAction::Jobs => {
            let all = call(Method::GET, &["api", "jobs"], None)?;
            if as_json {
                return Ok(json(out, &all)?).map(|()| JobEnd::Clean);
            }
            let rows: Vec<Vec<String>> = all
                .as_array()
                .into_iter()
                .flatten()
                .map(|j| {
                    let p = &j["progress"];
                    vec![
                        cell(&j["id"]),
                        cell(&j["kind"]),
                        cell(&j["templateName"]),
                        cell(&j["state"]),
                        format!("{}/{}", cell(&p["done"]), cell(&p["rooms"])),
                        cell(&j["createdBy"]),
                    ]
                })
                .collect();
            table(
                out,
                &["ID", "KIND", "TEMPLATE", "STATE", "ROOMS", "BY"],
                &rows,
            )?;
        }
        TemplateAction::Job { id } => {
            let job = call(Method::GET, &["api", "jobs", id], None)?;
            return report(&job, as_json, out);
        }
        TemplateAction::Assign { id, rooms } | TemplateAction::Unassign { id, rooms } => {
            let verb = match action {
                TemplateAction::Assign { .. } => "assign",
                _ => "unassign",
            };
            let rooms = call(
                Method::POST,
                &["api", "templates", id, verb],
                Some(body!({"rooms": rooms.to_json()})),
            )?;
            assigned_rooms(&rooms, as_json, out)?;
        }
        TemplateAction::AssignedRooms { id, check } => {
            let rooms = if *check {
                call(Method::POST, &["api", "templates", id, "check"], None)?
            } else {
                call(Method::GET, &["api", "templates", id, "rooms"], None)?
            };
            assigned_rooms(&rooms, as_json, out)?;
        }
        TemplateAction::Reapply { id, wait } => {
            let job = call(Method::POST, &["api", "templates", id, "reapply"], None)?;
            return started(client, job, *wait, as_json, out);
        }
    }
    Ok(JobEnd::Clean)
}

/// A job just started: its id alone, or (with `wait`) watched to its end and reported.
fn started(
    client: &Client,
    job: Value,
    wait: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<JobEnd, CliError> {
    if !wait {
        if as_json {
            json(out, &job)?;
        } else {
            writeln!(
                out,
                "started job {} on {} rooms (roomlinkctl template job {})",
                cell(&job["id"]),
                cell(&job["progress"]["rooms"]),
                cell(&job["id"])
            )?;
        }
        return Ok(JobEnd::Clean);
    }
    let job = watch(client, job)?;
    report(&job, as_json, out)
}

/// Reads the job again until it has finished, with a bar of rooms done on a terminal.
fn watch(client: &Client, mut job: Value) -> Result<Value, CliError> {
    let id = cell(&job["id"]);
    let bar = rooms_bar(job["progress"]["rooms"].as_u64().unwrap_or(0), &id);
    while job["state"] != "finished" {
        bar.set_position(job["progress"]["done"].as_u64().unwrap_or(0));
        std::thread::sleep(WATCH_EVERY);
        job = client.get_json(&["api", "jobs", &id])?;
    }
    bar.finish_and_clear();
    Ok(job)
}

fn rooms_bar(rooms: u64, id: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(rooms), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} job {msg} [{bar:30}] {pos}/{len} rooms {elapsed}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(id.to_owned());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A job as a row per room and setting, then its summary line.
fn report(job: &Value, as_json: bool, out: &mut dyn Write) -> Result<JobEnd, CliError> {
    let p = &job["progress"];
    let end = if p["unreachable"].as_u64().unwrap_or(0) + p["refused"].as_u64().unwrap_or(0) > 0 {
        JobEnd::Incomplete
    } else {
        JobEnd::Clean
    };
    if as_json {
        json(out, job)?;
        return Ok(end);
    }
    table(
        out,
        &["ROOM", "KEY", "OUTCOME", "BEFORE", "AFTER"],
        &job_rows(job),
    )?;
    writeln!(
        out,
        "{} job {} ({}): {}/{} rooms done, {} unreachable; {} settings applied, {} unchanged, {} refused, {} unsupported, {} unreadable, {} skipped",
        cell(&job["kind"]),
        cell(&job["id"]),
        cell(&job["state"]),
        cell(&p["done"]),
        cell(&p["rooms"]),
        cell(&p["unreachable"]),
        cell(&p["applied"]),
        cell(&p["unchanged"]),
        cell(&p["refused"]),
        cell(&p["unsupported"]),
        cell(&p["unreadable"]),
        cell(&p["skipped"]),
    )?;
    Ok(end)
}

/// One row per room and key (pending ones as `pending`); an unreachable room is one row.
fn job_rows(job: &Value) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for room in job["rooms"].as_array().into_iter().flatten() {
        let name = cell(&room["name"]);
        if let Some(unreachable) = room.get("unreachable") {
            rows.push(unreachable_row(name, unreachable));
            continue;
        }
        for (key, entry) in room["settings"].as_object().into_iter().flatten() {
            let outcome = entry["outcome"]
                .as_str()
                .map_or_else(|| cell(&room["state"]), str::to_owned);
            let (before, after) = match outcome.as_str() {
                "applied" => (cell(&entry["from"]), cell(&entry["to"])),
                "unchanged" => (cell(&entry["to"]), cell(&entry["to"])),
                "pending" | "writing" => ("-".into(), cell(&entry["to"])),
                _ => (cell(&entry["reason"]), "-".into()),
            };
            rows.push(vec![name.clone(), key.clone(), outcome, before, after]);
        }
    }
    rows
}

/// An unreachable room's one row: its catalog error.
fn unreachable_row(name: String, unreachable: &Value) -> Vec<String> {
    let error = format!(
        "{}: {}",
        cell(&unreachable["code"]),
        cell(&unreachable["message"])
    );
    vec![name, "-".into(), "unreachable".into(), error, "-".into()]
}

/// The rooms a template is assigned to: a row per room with its drift, then the counts.
fn assigned_rooms(rooms: &Value, as_json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if as_json {
        return Ok(json(out, rooms)?);
    }
    table(out, &["ROOM", "STATE", "DRIFTED"], &drift_rows(rooms))?;
    let c = &rooms["counts"];
    writeln!(
        out,
        "{} rooms assigned: {} in line, {} drifted, {} unreachable, {} not checked yet",
        cell(&c["assigned"]),
        cell(&c["inLine"]),
        cell(&c["drifted"]),
        cell(&c["unreachable"]),
        cell(&c["unchecked"]),
    )?;
    Ok(())
}

/// A room's drifted settings as `key: held -> template`; an unreachable room's error first.
fn drift_rows(rooms: &Value) -> Vec<Vec<String>> {
    rooms["rooms"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|room| {
            let mut notes: Vec<String> = room
                .get("error")
                .map(|e| format!("{}: {}", cell(&e["errorName"]), cell(&e["message"])))
                .into_iter()
                .collect();
            notes.extend(room["drifted"].as_array().into_iter().flatten().map(|d| {
                format!(
                    "{}: {} -> {}",
                    cell(&d["key"]),
                    cell(&d["held"]),
                    cell(&d["template"])
                )
            }));
            let notes = if notes.is_empty() {
                "-".to_owned()
            } else {
                notes.join("; ")
            };
            vec![cell(&room["name"]), cell(&room["state"]), notes]
        })
        .collect()
}

/// One row per room and key; an unreachable room is one row with its error.
fn plan_rows(plan: &Value) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for room in plan["rooms"].as_array().into_iter().flatten() {
        let name = cell(&room["name"]);
        if let Some(unreachable) = room.get("unreachable") {
            rows.push(unreachable_row(name, unreachable));
            continue;
        }
        for (key, entry) in room["settings"].as_object().into_iter().flatten() {
            let (now, after) = match entry["plan"].as_str() {
                Some("change") => (cell(&entry["from"]), cell(&entry["to"])),
                Some("unchanged") => (cell(&entry["value"]), cell(&entry["value"])),
                _ => (cell(&entry["reason"]), "-".into()),
            };
            rows.push(vec![
                name.clone(),
                key.clone(),
                cell(&entry["plan"]),
                now,
                after,
            ]);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_become_numbers_or_texts() {
        let pairs = [
            "time_zone=Europe/Oslo".to_owned(),
            "standby.delay_minutes=15".to_owned(),
            "system.name=+47".to_owned(),
            "welcome.message=a=b".to_owned(),
        ];
        let settings = settings_of(&pairs).unwrap();
        assert_eq!(settings["time_zone"], "Europe/Oslo");
        assert_eq!(settings["standby.delay_minutes"], 15);
        assert_eq!(settings["system.name"], "+47");
        assert_eq!(settings["welcome.message"], "a=b");
        assert!(settings_of(&["time_zone".to_owned()]).is_err());
    }

    #[test]
    fn a_job_is_a_row_per_room_and_key() {
        let job = body!({"rooms": [
            {"endpointId": "e1", "name": "Oslo", "state": "done", "settings": {
                "system.name": {"outcome": "refused", "reason": "Permission denied", "to": "O"},
                "time_zone": {"outcome": "applied", "from": "Etc/UTC", "to": "Europe/Oslo"}}},
            {"endpointId": "e2", "name": "Bergen", "state": "pending", "settings": {
                "time_zone": {"to": "Europe/Oslo"}}},
            {"endpointId": "e3", "name": "Hamar", "state": "done", "settings": {},
             "unreachable": {"code": "ListenerOffline", "message": "offline"}},
        ]});
        assert_eq!(
            job_rows(&job),
            [
                vec!["Oslo", "system.name", "refused", "Permission denied", "-"],
                vec!["Oslo", "time_zone", "applied", "Etc/UTC", "Europe/Oslo"],
                vec!["Bergen", "time_zone", "pending", "-", "Europe/Oslo"],
                vec!["Hamar", "-", "unreachable", "ListenerOffline: offline", "-"],
            ]
        );
    }

    #[test]
    fn assigned_rooms_are_a_row_each_with_their_drift() {
        let rooms = body!({"rooms": [
            {"name": "Oslo", "state": "drifted", "drifted": [
                {"key": "time_zone", "held": "Etc/UTC", "template": "Europe/Oslo"},
                {"key": "standby.delay_minutes", "held": 10, "template": 15}]},
            {"name": "Bergen", "state": "in_line", "drifted": []},
            {"name": "Hamar", "state": "unreachable", "drifted": [],
             "error": {"errorName": "ListenerOffline", "message": "offline"}},
        ]});
        assert_eq!(
            drift_rows(&rooms),
            [
                vec![
                    "Oslo",
                    "drifted",
                    "time_zone: Etc/UTC -> Europe/Oslo; standby.delay_minutes: 10 -> 15"
                ],
                vec!["Bergen", "in_line", "-"],
                vec!["Hamar", "unreachable", "ListenerOffline: offline"],
            ]
        );
    }

    #[test]
    fn a_plan_is_a_row_per_room_and_key() {
        let plan = body!({"rooms": [
            {"endpointId": "e1", "name": "Oslo", "settings": {
                "proximity.mode": {"plan": "unsupported", "reason": "Poly has none"},
                "time_zone": {"plan": "change", "from": "Etc/UTC", "to": "Europe/Oslo"}}},
            {"endpointId": "e2", "name": "Bergen",
             "unreachable": {"code": "ListenerOffline", "message": "offline"}},
        ]});
        assert_eq!(
            plan_rows(&plan),
            [
                vec![
                    "Oslo",
                    "proximity.mode",
                    "unsupported",
                    "Poly has none",
                    "-"
                ],
                vec!["Oslo", "time_zone", "change", "Etc/UTC", "Europe/Oslo"],
                vec![
                    "Bergen",
                    "-",
                    "unreachable",
                    "ListenerOffline: offline",
                    "-"
                ],
            ]
        );
    }
}
