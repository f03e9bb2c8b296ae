//! `template`: configuration templates (`/api/templates`): list, show, create from
//! `key=value` pairs, and plan one on rooms as a table of changes.

use crate::client::{CliError, Client, json_body};
use crate::output::{cell, json, table};
use reqwest::Method;
use serde_json::{Map, Value, json as body};
use std::io::Write;

/// Which rooms a plan is for.
#[derive(Debug)]
pub enum Rooms<'a> {
    All,
    Listener(&'a str),
    Endpoints(&'a [String]),
}

impl Rooms<'_> {
    fn to_json(&self) -> Value {
        match self {
            Rooms::All => body!({"all": true}),
            Rooms::Listener(id) => body!({"listenerId": id}),
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
) -> Result<(), CliError> {
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
                return Ok(json(out, &all)?);
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
                return Ok(json(out, &template)?);
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
                return Ok(json(out, &created)?);
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
                return Ok(json(out, &plan)?);
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
    }
    Ok(())
}

/// One row per room and key; an unreachable room is one row with its error.
fn plan_rows(plan: &Value) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for room in plan["rooms"].as_array().into_iter().flatten() {
        let name = cell(&room["name"]);
        if let Some(unreachable) = room.get("unreachable") {
            rows.push(vec![
                name,
                "-".into(),
                "unreachable".into(),
                format!(
                    "{}: {}",
                    cell(&unreachable["code"]),
                    cell(&unreachable["message"])
                ),
                "-".into(),
            ]);
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
