//! `usage`: how the rooms were used (`GET /api/analytics/usage`), or, with `--sessions`, every
//! call session of the period as CSV (`GET /api/analytics/sessions`).

use crate::audit::period;
use crate::client::{CliError, Client, json_body};
use crate::output::{cell, json, table};
use reqwest::Method;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;

/// What `usage` asks for.
#[derive(Debug)]
pub struct UsageArgs<'a> {
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    /// `room`, `day`, `hour` or `weekday` (clap has checked it).
    pub by: &'a str,
    pub sessions: bool,
}

pub fn usage(
    client: &Client,
    args: &UsageArgs<'_>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (from, to) = period(args.since, args.until)?;
    let mut params: Vec<(&str, &str)> = Vec::new();
    for (name, value) in [("from", from.as_deref()), ("to", to.as_deref())] {
        if let Some(value) = value {
            params.push((name, value));
        }
    }
    if args.sessions {
        let url = client.url(&["api", "analytics", "sessions"], &params);
        let response = client.send(client.request(Method::GET, url))?;
        let body = response
            .bytes()
            .map_err(|e| CliError::other(format!("reading the sessions: {e}")))?;
        out.write_all(&body)?;
        return Ok(());
    }
    params.push(("groupBy", args.by));
    let url = client.url(&["api", "analytics", "usage"], &params);
    let answer = json_body(client.send(client.request(Method::GET, url))?)?;
    if as_json {
        return Ok(json(out, &answer)?);
    }
    // Rooms by name as well as id.
    let names: HashMap<String, String> = if args.by == "room" {
        match client.get_json(&["api", "endpoints"])? {
            Value::Array(list) => list
                .iter()
                .map(|e| (cell(&e["id"]), cell(&e["name"])))
                .collect(),
            _ => HashMap::new(),
        }
    } else {
        HashMap::new()
    };
    let empty = Vec::new();
    let groups = answer["groups"].as_array().unwrap_or(&empty);
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let key = cell(&g["key"]);
            let mut row = vec![key.clone()];
            if args.by == "room" {
                row.push(names.get(&key).cloned().unwrap_or_default());
            }
            row.extend([
                cell(&g["calls"]),
                cell(&g["minutesInCall"]),
                cell(&g["daysUsed"]),
            ]);
            row
        })
        .collect();
    let group = args.by.to_uppercase();
    let header: Vec<&str> = if args.by == "room" {
        vec!["ROOM", "NAME", "CALLS", "MINUTES", "DAYS"]
    } else {
        vec![&group, "CALLS", "MINUTES", "DAYS"]
    };
    table(out, &header, &rows)?;
    writeln!(
        out,
        "{} calls, {} minutes in call",
        cell(&answer["calls"]),
        cell(&answer["minutesInCall"])
    )?;
    Ok(())
}
