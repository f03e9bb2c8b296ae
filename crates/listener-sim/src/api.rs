//! The listener protocol, version 1. [`answer`] is the one request handling; the HTTP routes
//! (after the secret check) and the outbound WebSocket ([`Handler`]) both call it.
//!
//! Listener faults over the WebSocket: `listener_hang` never answers that request (others on
//! the socket still are), `listener_garbage` answers status 200 with the HTML text as a JSON
//! string body (not the protocol's object), `listener_reset` drops the connection without a
//! close frame (the listener then reconnects).

use crate::SimState;
use crate::fault::{Effect, Fault};
use crate::inventory::Vendor;
use crate::rooms::RoomCommand;
use crate::secrets;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use roomlink_domain::ports::Clock;
use roomlink_domain::system::SystemClock;
use roomlink_listener_protocol::configuration::{ConfigurationRequest, answer_of};
use roomlink_listener_protocol::dial_home::Handler;
use roomlink_listener_protocol::server::{
    Answer, MAX_STATUS_BATCH, Route, info_body, no_handler, refuse_secret,
};
use roomlink_listener_protocol::wire::{
    CommandBody, Failure, InventoryAnswer, StatusBody, WireEndpoint,
};
use serde_json::json;
use std::future::Future;
use std::sync::atomic::Ordering;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/info", web::get().to(http))
        .route("/v1/commands/{command}", web::post().to(http))
        .route("/v1/status", web::post().to(http));
}

/// The HTTP side: counted, the secret checked, then [`answer`].
async fn http(state: web::Data<SimState>, req: HttpRequest, body: Bytes) -> HttpResponse {
    let Some(route) = Route::of(req.method().as_str(), req.path()) else {
        return Answer::failure(&no_handler(req.method().as_str(), req.path())).into_http();
    };
    count(&state, route);
    if let Some(refusal) = refuse_secret(state.secret.as_ref(), &req) {
        return refusal;
    }
    answer(&state, route, &body).await.into_http()
}

/// The socket side: counted, then the same answers.
impl Handler for SimState {
    fn handle(&self, route: Route<'_>, body: &[u8]) -> impl Future<Output = Answer> + Send {
        count(self, route);
        answer(self, route, body)
    }
}

/// Requests are counted before the secret check (`GET /sim/stats`).
fn count(state: &SimState, route: Route<'_>) {
    let counter = match route {
        Route::Info => &state.stats.info,
        Route::Command(_) => &state.stats.commands,
        Route::Status => &state.stats.status,
    };
    counter.fetch_add(1, Ordering::Relaxed);
}

/// The answer to one request; a `listener_hang` fault never answers.
pub async fn answer(state: &SimState, route: Route<'_>, body: &[u8]) -> Answer {
    match route {
        Route::Info => Answer::ok(info_body(
            state.version,
            &state.commands,
            &state.control_protocols,
        )),
        Route::Command(name) => command(state, name, body).await,
        Route::Status => status(state, body).await,
    }
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

async fn command(state: &SimState, name: &str, body: &[u8]) -> Answer {
    if name == "status" || !state.has_command(name) {
        return Answer::failure(&Failure::listener(
            404,
            "no_such_command",
            format!("listener {} has no command {name}", state.version),
        ));
    }
    if name == "readcalendar" {
        // Simulated rooms have no calendar system behind them.
        return Answer::failure(&Failure::calendar_not_configured(
            "the simulator reads no calendars",
        ));
    }
    let body: CommandBody = match serde_json::from_slice(body) {
        Ok(body) => body,
        Err(e) => return Answer::bad_request(format!("the body is not a {name} command: {e}")),
    };
    if name == "readinventory" {
        return read_inventory(state, &body).await;
    }
    if name == "readconfiguration" || name == "writeconfiguration" {
        return configuration(state, name, body).await;
    }
    let command = match RoomCommand::parse(name, body.params.unwrap_or_default()) {
        Ok(command) => command,
        Err(problem) => return Answer::bad_request(problem),
    };
    let address = match check_endpoint(state, &body.endpoint) {
        Ok(address) => address,
        Err(f) => return Answer::failure(&f),
    };
    let seen = secrets::inspect(body.credential.as_ref(), state.private_key.as_ref());
    let now = SystemClock.now_ms();
    let outcome = state.rooms.with(address, |room| {
        room.count_command(name);
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
            Answer::ok(json!({ "state": room_state }))
        }
        Err(fault) => {
            tracing::info!(command = %name, address, %fault, "command met a fault");
            carry_out(fault.effect(name, &body.endpoint)).await
        }
    }
}

/// `readinventory`: the room's simulated inventory; the room's fault applies as to a command
/// (except `ignore`: a read has nothing to ignore).
async fn read_inventory(state: &SimState, body: &CommandBody) -> Answer {
    let address = match check_endpoint(state, &body.endpoint) {
        Ok(address) => address,
        Err(f) => return Answer::failure(&f),
    };
    let protocol = body
        .endpoint
        .control_protocol
        .as_deref()
        .unwrap_or_default();
    let Some(vendor) = Vendor::of(protocol) else {
        return Answer::failure(&Failure::listener(
            404,
            "no_such_command",
            format!("no readinventory for controlProtocol {protocol}"),
        ));
    };
    let seen = secrets::inspect(body.credential.as_ref(), state.private_key.as_ref());
    let outcome = state.rooms.with(address, |room| {
        room.count_command("readinventory");
        room.saw_credential(seen);
        match room.fault() {
            None | Some(Fault::Ignore) => Ok(room.inventory(address, vendor)),
            Some(fault) => Err(fault),
        }
    });
    match outcome {
        Ok(inventory) => {
            tracing::info!(command = "readinventory", address, "inventory read");
            match serde_json::to_value(InventoryAnswer { inventory }) {
                Ok(body) => Answer::ok(body),
                Err(e) => Answer::failure(&Failure::listener(500, "internal", e.to_string())),
            }
        }
        Err(fault) => {
            tracing::info!(command = "readinventory", address, %fault, "readinventory met a fault");
            carry_out(fault.effect("readinventory", &body.endpoint)).await
        }
    }
}

/// `readconfiguration`, `writeconfiguration`: the room's stored template settings; the room's
/// fault applies as to a command (except `ignore`).
async fn configuration(state: &SimState, name: &str, body: CommandBody) -> Answer {
    let request = match ConfigurationRequest::of(name, body.params.unwrap_or_default()) {
        Ok(request) => request,
        Err(problem) => return Answer::bad_request(problem),
    };
    let address = match check_endpoint(state, &body.endpoint) {
        Ok(address) => address,
        Err(f) => return Answer::failure(&f),
    };
    let protocol = body
        .endpoint
        .control_protocol
        .as_deref()
        .unwrap_or_default();
    let seen = secrets::inspect(body.credential.as_ref(), state.private_key.as_ref());
    let outcome = state.rooms.with(address, |room| {
        room.count_command(name);
        room.saw_credential(seen);
        match room.fault() {
            None | Some(Fault::Ignore) => Ok(match &request {
                ConfigurationRequest::Read(keys) => {
                    room.configuration.read(protocol, address, keys)
                }
                ConfigurationRequest::Write(settings) => {
                    room.configuration.write(protocol, settings)
                }
            }),
            Some(fault) => Err(fault),
        }
    });
    match outcome {
        Ok(outcomes) => {
            tracing::info!(command = %name, address, "configuration done");
            match serde_json::to_value(answer_of(outcomes)) {
                Ok(body) => Answer::ok(body),
                Err(e) => Answer::failure(&Failure::listener(500, "internal", e.to_string())),
            }
        }
        Err(fault) => {
            tracing::info!(command = %name, address, %fault, "configuration met a fault");
            carry_out(fault.effect(name, &body.endpoint)).await
        }
    }
}

async fn status(state: &SimState, body: &[u8]) -> Answer {
    if !state.has_command("status") {
        return Answer::failure(&Failure::listener(
            404,
            "no_such_command",
            format!("listener {} has no batched status", state.version),
        ));
    }
    let body: StatusBody = match serde_json::from_slice(body) {
        Ok(body) => body,
        Err(e) => return Answer::bad_request(format!("the body is not a status request: {e}")),
    };
    let count = body.endpoints.len();
    state
        .stats
        .status_endpoints
        .fetch_add(count as u64, Ordering::Relaxed);
    if count > MAX_STATUS_BATCH {
        return Answer::bad_request(format!(
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
            let address = match check_endpoint(state, &entry.endpoint) {
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
        Some((fault, endpoint)) => carry_out(fault.effect("status", endpoint)).await,
        None => Answer::ok(json!({ "statuses": statuses })),
    }
}

/// Carries out a fault's effect.
async fn carry_out(effect: Effect) -> Answer {
    match effect {
        Effect::Fail(f) => Answer::failure(&f),
        // Never answers; the connection (or the socket's request) stays open until the client
        // gives up.
        Effect::Hang => futures::future::pending().await,
        Effect::Garbage => Answer::NotProtocol(
            "<html><body>502 Bad Gateway: upstream sent an invalid response</body></html>".into(),
        ),
        Effect::Reset => Answer::Reset,
    }
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
