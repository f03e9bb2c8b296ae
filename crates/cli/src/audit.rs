//! `audit`: reads the enterprise's audit trail (`GET /api/auditlog`), newest first, following
//! the service's pages until `--limit` entries (or, with `--all`, the end).

use crate::client::{CliError, Client};
use crate::output::{cell, json, table, time};
use serde_json::Value;
use std::io::Write;

/// The service's largest page.
const PAGE: usize = 1000;

/// What `audit` asks for.
#[derive(Debug, Default)]
pub struct AuditQuery<'a> {
    pub target: Option<&'a str>,
    pub actor: Option<&'a str>,
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    /// `None`: every entry.
    pub limit: Option<usize>,
}

pub fn audit(
    client: &Client,
    query: &AuditQuery<'_>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (from, to) = period(query.since, query.until)?;
    let mut entries: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let wanted = query.limit.map_or(PAGE, |l| (l - entries.len()).min(PAGE));
        let page_size = wanted.to_string();
        let mut params: Vec<(&str, &str)> = vec![("limit", &page_size)];
        for (name, value) in [
            ("targetId", query.target),
            ("actor", query.actor),
            ("from", from.as_deref()),
            ("to", to.as_deref()),
            ("cursor", cursor.as_deref()),
        ] {
            if let Some(value) = value {
                params.push((name, value));
            }
        }
        let (page, next) = client.page(&["api", "auditlog"], &params, "an audit")?;
        entries.extend(page);
        let full = query.limit.is_some_and(|l| entries.len() >= l);
        match next {
            Some(next) if !full => cursor = Some(next),
            _ => break,
        }
    }
    if as_json {
        return Ok(json(out, &Value::Array(entries))?);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            let actor = &e["actor"];
            let who = match actor["username"].as_str() {
                Some(user) => format!("{} ({user})", cell(&actor["id"])),
                None => cell(&actor["id"]),
            };
            vec![
                time(&e["at"]),
                who,
                cell(&e["operation"]),
                cell(&e["targetId"]),
                cell(&e["outcome"]),
                cell(&e["detail"]),
            ]
        })
        .collect();
    table(
        out,
        &["AT", "ACTOR", "OPERATION", "TARGET", "OUTCOME", "DETAIL"],
        &rows,
    )?;
    Ok(())
}

/// `--since` and `--until` as the service's `from` and `to` (milliseconds, as text).
pub(crate) fn period(
    since: Option<&str>,
    until: Option<&str>,
) -> Result<(Option<String>, Option<String>), CliError> {
    let now = now_ms();
    let ms = |t: Option<&str>| -> Result<Option<String>, CliError> {
        Ok(t.map(|t| moment(t, now))
            .transpose()?
            .map(|n| n.to_string()))
    };
    Ok((ms(since)?, ms(until)?))
}

fn now_ms() -> i64 {
    use roomlink_domain::ports::Clock;
    roomlink_domain::system::SystemClock.now_ms()
}

/// `--since`/`--until`: milliseconds since the epoch, or an age such as `90m`, `24h`, `7d`.
pub fn moment(text: &str, now_ms: i64) -> Result<i64, CliError> {
    let bad = || {
        CliError::other(format!(
            "'{text}' is not a time: give milliseconds since the epoch or an age such as 30m, 24h or 7d"
        ))
    };
    let text = text.trim();
    if let Ok(ms) = text.parse::<i64>() {
        return if ms >= 0 { Ok(ms) } else { Err(bad()) };
    }
    let split = text.len().checked_sub(1).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let unit_ms: i64 = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 604_800_000,
        _ => return Err(bad()),
    };
    let n: i64 = number.parse().ok().filter(|n| *n >= 0).ok_or_else(bad)?;
    Ok(now_ms.saturating_sub(n.saturating_mul(unit_ms)).max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_epoch_ms_or_ages() {
        let now = 10 * 86_400_000;
        assert_eq!(moment("1700000000000", now).unwrap(), 1_700_000_000_000);
        assert_eq!(moment("24h", now).unwrap(), 9 * 86_400_000);
        assert_eq!(moment("7d", now).unwrap(), 3 * 86_400_000);
        assert_eq!(moment("30d", now).unwrap(), 0);
        for bad in ["", "h", "-5", "3y", "x1d"] {
            assert!(moment(bad, now).is_err(), "{bad}");
        }
    }
}
