//! The listener protocol, version 1.

use crate::SimState;
use crate::fault::{Effect, Fault};
use crate::rooms::RoomCommand;
use crate::secrets;
use actix_web::http::header::ContentType;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use roomlink_domain::ports::Clock;
use roomlink_domain::system::SystemClock;
use roomlink_listener_protocol::server::{
    MAX_STATUS_BATCH, bad_request, failure, info_body, refuse_secret,
};
use roomlink_listener_protocol::wire::{CommandBody, Failure, StatusBody, WireEndpoint};
use serde_json::json;
use std::sync::atomic::Ordering;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/info", web::get().to(info))
        .route("/v1/commands/{command}", web::post().to(command))
        .route("/v1/status", web::post().to(status));
}

async fn info(state: web::Data<SimState>, req: HttpRequest) -> HttpResponse {
    state.stats.info.fetch_add(1, Ordering::Relaxed);
    if let Some(refusal) = refuse_secret(state.secret.as_ref(), &req) {
        return refusal;
    }
    HttpResponse::Ok().json(info_body(
        state.version,
        &state.commands,
        &state.control_protocols,
    ))
}

/// Checks that apply to any endpoint named in a request, before its room system is touched.
fn check_endpoint<'a>(state: &SimState, endpoint: &'a WireEndpoint) -> Result<&'a str, Failure> {
    let Some(address) = endpoint.address() else {
        return Err(Failure::listener(
            502,
            "misprovisioned",
            "the endpoint has no ipAddress",
        ));
    };
    match endpoint.control_protocol.as_deref() {
        Some(p) if state.supports_protocol(p) => Ok(address),
        other => Err(Failure::listener(
            501,
            "unsupported_protocol",
            format!(
                "this listener does not support controlProtocol {}",
                other.unwrap_or("(none)")
            ),
        )),
    }
}

async fn command(
    state: web::Data<SimState>,
    req: HttpRequest,
    name: web::Path<String>,
    body: Bytes,
) -> HttpResponse {
    state.stats.commands.fetch_add(1, Ordering::Relaxed);
    if let Some(refusal) = refuse_secret(state.secret.as_ref(), &req) {
        return refusal;
    }
    let name = name.into_inner();
    if name == "status" || !state.has_command(&name) {
        return failure(&Failure::listener(
            404,
            "no_such_command",
            format!("listener {} has no command {name}", state.version),
        ));
    }
    let body: CommandBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return bad_request(format!("the body is not a {name} command: {e}")),
    };
    let command = match RoomCommand::parse(&name, body.params.unwrap_or_default()) {
        Ok(command) => command,
        Err(problem) => return bad_request(problem),
    };
    let address = match check_endpoint(&state, &body.endpoint) {
        Ok(address) => address,
        Err(f) => return failure(&f),
    };
    let seen = secrets::inspect(body.credential.as_ref(), state.private_key.as_ref());
    let now = SystemClock.now_ms();
    let outcome = state.rooms.with(address, |room| {
        room.count_command();
        room.saw_credential(seen);
        match room.fault() {
            Some(fault) => Err(fault),
            None => {
                room.apply(command, now);
                Ok(room.state())
            }
        }
    });
    match outcome {
        Ok(room_state) => {
            tracing::info!(command = %name, address, "command carried out");
            HttpResponse::Ok().json(json!({ "state": room_state }))
        }
        Err(fault) => {
            tracing::info!(command = %name, address, %fault, "command met a fault");
            answer(fault.effect(&name, &body.endpoint)).await
        }
    }
}

async fn status(state: web::Data<SimState>, req: HttpRequest, body: Bytes) -> HttpResponse {
    state.stats.status.fetch_add(1, Ordering::Relaxed);
    if let Some(refusal) = refuse_secret(state.secret.as_ref(), &req) {
        return refusal;
    }
    if !state.has_command("status") {
        return failure(&Failure::listener(
            404,
            "no_such_command",
            format!("listener {} has no batched status", state.version),
        ));
    }
    let body: StatusBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(e) => return bad_request(format!("the body is not a status request: {e}")),
    };
    let count = body.endpoints.len();
    state
        .stats
        .status_endpoints
        .fetch_add(count as u64, Ordering::Relaxed);
    if count > MAX_STATUS_BATCH {
        return bad_request(format!(
            "{count} endpoints in one request; at most {MAX_STATUS_BATCH} are allowed"
        ));
    }
    // Opening sealed passwords costs a key agreement each: done before the lock is taken.
    let seen: Vec<_> = body
        .endpoints
        .iter()
        .map(|e| secrets::inspect(e.credential.as_ref(), state.private_key.as_ref()))
        .collect();
    let mut statuses = Vec::with_capacity(count);
    let mut listener_fault = None;
    {
        let mut rooms = state.rooms.lock();
        for (entry, seen) in body.endpoints.iter().zip(seen) {
            let id = entry.endpoint.id.clone().unwrap_or_default();
            let address = match check_endpoint(&state, &entry.endpoint) {
                Ok(address) => address,
                Err(f) => {
                    statuses.push(json!({ "endpointId": id, "failure": f }));
                    continue;
                }
            };
            let room = rooms.get(address);
            room.saw_credential(seen);
            match room.fault() {
                // A room system that ignores commands still reports its state.
                None | Some(Fault::Ignore) => {
                    statuses.push(json!({ "endpointId": id, "state": room.state() }));
                }
                Some(fault) => match fault.effect("status", &entry.endpoint) {
                    Effect::Fail(f) => statuses.push(json!({ "endpointId": id, "failure": f })),
                    _ => {
                        listener_fault.get_or_insert((fault, &entry.endpoint));
                    }
                },
            }
        }
    }
    tracing::info!(endpoints = count, "status answered");
    match listener_fault {
        // A broken listener breaks the whole request, as it would in real life.
        Some((fault, endpoint)) => answer(fault.effect("status", endpoint)).await,
        None => HttpResponse::Ok().json(json!({ "statuses": statuses })),
    }
}

/// Carries out a fault's effect.
async fn answer(effect: Effect) -> HttpResponse {
    match effect {
        Effect::Fail(f) => failure(&f),
        // Never answers; the connection stays open until the client gives up.
        Effect::Hang => futures::future::pending().await,
        Effect::Garbage => HttpResponse::Ok()
            .content_type(ContentType::html())
            .body("<html><body>502 Bad Gateway: upstream sent an invalid response</body></html>"),
        Effect::Reset => reset(),
    }
}

/// A response whose body fails before its first byte. actix-http then drops the connection
/// with the head still unsent (h1 dispatcher: body error before the write buffer is flushed),
/// so the client sees the connection close without any answer.
fn reset() -> HttpResponse {
    let failing = futures::stream::once(async {
        Err::<Bytes, _>(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "simulated listener_reset",
        ))
    });
    HttpResponse::Ok().streaming(failing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SimConfig, version::Version};

    fn state(version: &str) -> SimState {
        SimState::new(SimConfig {
            version: version.parse().unwrap(),
            control_protocols: Some(vec!["TANDBERG_SSH".into()]),
            ..SimConfig::default()
        })
    }

    #[test]
    fn gating_follows_the_version() {
        let old = state("1.3.0");
        assert!(old.has_command("join") && old.has_command("hangup"));
        for missing in ["senddtmf", "mutemicrophone", "unmutemicrophone", "status"] {
            assert!(!old.has_command(missing), "{missing}");
        }
        let new = state("2.25.0");
        assert!(new.has_command("status") && new.has_command("senddtmf"));
        assert_eq!(new.version, Version::new(2, 25, 0));
    }

    #[test]
    fn endpoints_need_an_address_and_a_supported_protocol() {
        let s = state("2.25.0");
        let mut endpoint = WireEndpoint {
            ip_address: Some("127.77.0.1".into()),
            control_protocol: Some("TANDBERG_SSH".into()),
            ..WireEndpoint::default()
        };
        assert_eq!(check_endpoint(&s, &endpoint).unwrap(), "127.77.0.1");
        endpoint.control_protocol = Some("MESH".into());
        assert_eq!(
            check_endpoint(&s, &endpoint).unwrap_err().failure,
            "unsupported_protocol"
        );
        endpoint.ip_address = Some(" ".into());
        assert_eq!(
            check_endpoint(&s, &endpoint).unwrap_err().failure,
            "misprovisioned"
        );
    }
}
