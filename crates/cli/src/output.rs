//! Human output: aligned tables and readable times. (`--json` output is the service's JSON.)

use roomlink_domain::civil::UtcParts;
use serde_json::Value;
use std::io::Write;

/// Writes rows under a header, each column as wide as its widest cell.
pub fn table(out: &mut dyn Write, header: &[&str], rows: &[Vec<String>]) -> std::io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell); // no trailing blanks
            } else {
                text.push_str(&format!("{cell:<w$}  "));
            }
        }
        text
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

/// A JSON value as a table cell: strings bare, null as "-", the rest as JSON.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.replace(['\n', '\r', '\t'], " "),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// Epoch milliseconds as `YYYY-MM-DD HH:MM:SSZ` (UTC).
pub fn time(value: &Value) -> String {
    match value.as_i64() {
        Some(ms) => format_ms(ms),
        None => cell(value),
    }
}

pub fn format_ms(ms: i64) -> String {
    let t = UtcParts::of(ms);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// Pretty JSON for `--json`.
pub fn json(out: &mut dyn Write, value: &Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    writeln!(out, "{text}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_are_utc_calendar_dates() {
        assert_eq!(format_ms(0), "1970-01-01 00:00:00Z");
        assert_eq!(format_ms(951_782_400_000), "2000-02-29 00:00:00Z");
        assert_eq!(format_ms(1_767_225_599_999), "2025-12-31 23:59:59Z");
    }

    #[test]
    fn tables_align_columns() {
        let mut out = Vec::new();
        table(
            &mut out,
            &["ID", "NAME"],
            &[
                vec!["a".into(), "Board room".into()],
                vec!["bbbb".into(), "-".into()],
            ],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "ID    NAME\na     Board room\nbbbb  -\n"
        );
        assert_eq!(cell(&json!(["A", "B"])), "A,B");
        assert_eq!(cell(&json!(null)), "-");
    }
}
