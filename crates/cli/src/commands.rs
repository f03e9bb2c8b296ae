//! `token ...` and `endpoints ...`: thin calls of the API with readable output.

use crate::client::{Auth, CliError, Client, json_body};
use crate::output::{cell, json, table, time};
use reqwest::Method;
use serde_json::Value;
use std::io::Write;

/// `token create`: needs a username and password (Basic); prints the new token.
pub fn token_create(
    client: &Client,
    duration: Option<&str>,
    client_name: Option<&str>,
    as_json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if !matches!(client.auth(), Auth::Basic { .. }) {
        return Err(CliError::other(
            "token create needs a username and password (--username/--password, ROOMLINKCTL_USERNAME/ROOMLINKCTL_PASSWORD or the config file), not a token",
        ));
    }
    let mut query = Vec::new();
    if let Some(d) = duration {
        query.push(("duration", d));
    }
    if let Some(n) = client_name {
        query.push(("clientName", n));
    }
    let url = client.url(&["api", "auth", "accesstokens"], &query);
    let token = json_body(client.send(client.request(Method::POST, url))?)?;
    if as_json {
        json(out, &token)?;
    } else {
        // The value alone on stdout, so `TOKEN=$(roomlinkctl token create)` works; the rest
        // goes to stderr for the person watching.
        writeln!(out, "{}", token["accessToken"].as_str().unwrap_or_default())?;
        writeln!(
            err,
            "token {} for {} ({}), expires {}",
            cell(&token["id"]),
            cell(&token["enterpriseName"]),
            cell(&token["roles"]),
            time(&token["expirationDate"])
        )?;
    }
    Ok(())
}

pub fn token_list(client: &Client, as_json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let tokens = client.get_json(&["api", "auth", "accesstokens"])?;
    if as_json {
        return Ok(json(out, &tokens)?);
    }
    let rows: Vec<Vec<String>> = array(&tokens)
        .iter()
        .map(|t| {
            vec![
                cell(&t["id"]),
                cell(&t["roles"]),
                cell(&t["clientName"]),
                cell(&t["creator"]),
                time(&t["creationDate"]),
                time(&t["expirationDate"]),
            ]
        })
        .collect();
    table(
        out,
        &["ID", "ROLES", "CLIENT", "CREATOR", "CREATED", "EXPIRES"],
        &rows,
    )?;
    Ok(())
}

/// `token delete ID`: a token id from `token list`, or a token value.
pub fn token_delete(
    client: &Client,
    key: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let url = client.url(&["api", "auth", "accesstokens", key], &[]);
    client.send(client.request(Method::DELETE, url))?;
    if as_json {
        json(out, &serde_json::json!({ "deleted": true }))?;
    } else {
        writeln!(out, "deleted")?;
    }
    Ok(())
}

fn array(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

pub fn endpoints_list(client: &Client, as_json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let list = client.get_json(&["api", "endpoints"])?;
    if as_json {
        return Ok(json(out, &list)?);
    }
    let rows: Vec<Vec<String>> = array(&list)
        .iter()
        .map(|e| {
            vec![
                cell(&e["id"]),
                cell(&e["name"]),
                cell(&e["ipAddress"]),
                cell(&e["controlProtocol"]),
                cell(&e["listenerServiceId"]),
            ]
        })
        .collect();
    table(
        out,
        &["ID", "NAME", "ADDRESS", "PROTOCOL", "LISTENER"],
        &rows,
    )?;
    Ok(())
}

pub fn endpoints_get(
    client: &Client,
    id: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let endpoint = client.get_json(&["api", "endpoints", id])?;
    if as_json {
        return Ok(json(out, &endpoint)?);
    }
    let rows: Vec<Vec<String>> = endpoint
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| !v.is_null() && k.as_str() != "password")
        .map(|(k, v)| vec![k.clone(), cell(v)])
        .collect();
    table(out, &["FIELD", "VALUE"], &rows)?;
    Ok(())
}

/// A control command (`join`, `hangup`, `senddtmf`, ...): 204 on success.
pub fn control(
    client: &Client,
    id: &str,
    command: &str,
    query: &[(&str, &str)],
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let url = client.url(&["api", "endpoints", id, command], query);
    client.send(client.request(Method::POST, url))?;
    if as_json {
        json(
            out,
            &serde_json::json!({ "endpointId": id, "command": command, "ok": true }),
        )?;
    } else {
        writeln!(out, "{command}: sent to {id}")?;
    }
    Ok(())
}

pub fn status(
    client: &Client,
    id: Option<&str>,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let value = match id {
        Some(id) => client.get_json(&["api", "endpoints", id, "status"])?,
        None => client.get_json(&["api", "endpoints", "status"])?,
    };
    if as_json {
        return Ok(json(out, &value)?);
    }
    let statuses = match &value {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    };
    let rows: Vec<Vec<String>> = statuses
        .iter()
        .map(|s| {
            vec![
                cell(&s["endpointId"]),
                cell(&s["callActive"]),
                cell(&s["dialing"]),
                cell(&s["microphoneMuted"]),
                // 0: no listener has reported on the endpoint yet.
                if s["timestamp"].as_i64() == Some(0) {
                    "never reported".to_owned()
                } else {
                    time(&s["timestamp"])
                },
            ]
        })
        .collect();
    table(
        out,
        &["ENDPOINT", "IN CALL", "DIALING", "MUTED", "AS OF"],
        &rows,
    )?;
    Ok(())
}
