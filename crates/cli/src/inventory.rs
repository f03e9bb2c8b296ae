//! `inventory`: what the rooms say about themselves (`GET /api/inventory`, every page).

use crate::client::{CliError, Client};
use crate::output::{cell, json, table};
use serde_json::Value;
use std::io::Write;

/// The fleet listing's filters.
#[derive(Debug, Default)]
pub struct InventoryFilter<'a> {
    pub software_version: Option<&'a str>,
    pub model: Option<&'a str>,
    pub listener: Option<&'a str>,
}

pub fn inventory(
    client: &Client,
    filter: &InventoryFilter<'_>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut records = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut params: Vec<(&str, &str)> = vec![("limit", "1000")];
        for (name, value) in [
            ("softwareVersion", filter.software_version),
            ("model", filter.model),
            ("listenerServiceId", filter.listener),
            ("after", after.as_deref()),
        ] {
            if let Some(value) = value {
                params.push((name, value));
            }
        }
        let (page, next) = client.page(&["api", "inventory"], &params, "an inventory")?;
        records.extend(page);
        match next {
            Some(cursor) => after = Some(cursor),
            None => break,
        }
    }
    if as_json {
        return Ok(json(out, &Value::Array(records))?);
    }
    let rows: Vec<Vec<String>> = records.iter().map(row).collect();
    table(
        out,
        &[
            "ROOM",
            "MODEL",
            "SOFTWARE",
            "SERIAL",
            "PERIPHERALS",
            "READ AT",
            "LAST FAILURE",
        ],
        &rows,
    )?;
    Ok(())
}

/// One record as a table row; peripherals as connected/all, with the missing ones named.
fn row(record: &Value) -> Vec<String> {
    let inventory = &record["inventory"];
    let model = if inventory["model"].is_null() {
        cell(&inventory["product"])
    } else {
        cell(&inventory["model"])
    };
    let empty = Vec::new();
    let peripherals = inventory["peripherals"].as_array().unwrap_or(&empty);
    let missing: Vec<String> = peripherals
        .iter()
        .filter(|p| p["connected"] == Value::Bool(false))
        .map(|p| cell(&p["name"]))
        .collect();
    let mut seen = format!(
        "{}/{}",
        peripherals.len() - missing.len(),
        peripherals.len()
    );
    if !missing.is_empty() {
        seen.push_str(&format!(" (missing: {})", missing.join(", ")));
    }
    vec![
        cell(&record["endpointId"]),
        model,
        cell(&inventory["softwareVersion"]),
        cell(&inventory["serialNumber"]),
        seen,
        cell(&record["readAt"]),
        cell(&record["lastFailure"]["errorName"]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_counts_peripherals_and_names_the_missing_ones() {
        let record = json!({
            "endpointId": "e1", "readAt": 5, "lastFailure": null,
            "inventory": {"product": "Cisco Webex Room Kit", "softwareVersion": "ce9.15",
                "serialNumber": "FOC1", "peripherals": [
                    {"kind": "touchPanel", "name": "Navigator", "connected": false},
                    {"kind": "camera", "name": "Cam", "connected": true}]}
        });
        assert_eq!(
            row(&record),
            [
                "e1",
                "Cisco Webex Room Kit",
                "ce9.15",
                "FOC1",
                "1/2 (missing: Navigator)",
                "5",
                "-"
            ]
        );
        let never = json!({"endpointId": "e2", "readAt": null, "inventory": null,
            "lastFailure": {"errorName": "RemoteSystemUnavailable"}});
        assert_eq!(row(&never)[4], "0/0");
        assert_eq!(row(&never)[6], "RemoteSystemUnavailable");
    }
}
