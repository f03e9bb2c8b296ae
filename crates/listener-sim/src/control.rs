//! The simulator's own control surface (operator contract, `roomlink-listener-sim`). It needs
//! no secret: it exists for tests and demos on the operator's machine.
//!
//! Besides the room's view, faults and counters: `PUT|DELETE
//! /sim/endpoints/{ipAddress}/peripherals/{id}/disconnected` loses or restores a peripheral
//! of the room's inventory, `PUT /sim/endpoints/{ipAddress}/software` `{"version": …,
//! "releaseDate": "YYYY-MM-DD"}` sets the software it reports (`DELETE`: its own again).

use crate::SimState;
use crate::fault::{self, Fault};
use crate::inventory::{self, Software};
use actix_web::web::{self, Bytes};
use actix_web::{HttpResponse, http::StatusCode};
use serde::Deserialize;
use serde_json::json;
use std::sync::atomic::Ordering;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/sim/endpoints/{ipAddress}", web::get().to(endpoint))
        .route("/sim/endpoints/{ipAddress}/fault", web::put().to(set_fault))
        .route(
            "/sim/endpoints/{ipAddress}/fault",
            web::delete().to(clear_fault),
        )
        .route(
            "/sim/endpoints/{ipAddress}/peripherals/{id}/disconnected",
            web::put().to(lose_peripheral),
        )
        .route(
            "/sim/endpoints/{ipAddress}/peripherals/{id}/disconnected",
            web::delete().to(restore_peripheral),
        )
        .route(
            "/sim/endpoints/{ipAddress}/software",
            web::put().to(set_software),
        )
        .route(
            "/sim/endpoints/{ipAddress}/software",
            web::delete().to(reset_software),
        )
        .route("/sim/stats", web::get().to(stats));
}

fn peripheral(state: &SimState, address: &str, id: &str, disconnected: bool) -> HttpResponse {
    if !inventory::has_peripheral(address, id) {
        return HttpResponse::build(StatusCode::NOT_FOUND).json(json!({
            "error": "unknown_peripheral",
            "message": format!("no peripheral {:?} (Poly: microphones, camera, remotecontrol; Cisco: the ids readinventory lists)",
                id.chars().take(64).collect::<String>()),
        }));
    }
    tracing::info!(%address, peripheral = %id, disconnected, "peripheral changed");
    let view = state.rooms.with(address, |room| {
        room.set_disconnected(id, disconnected);
        room.sim_view(address)
    });
    HttpResponse::Ok().json(view)
}

async fn lose_peripheral(
    state: web::Data<SimState>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    peripheral(&state, &path.0, &path.1, true)
}

async fn restore_peripheral(
    state: web::Data<SimState>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    peripheral(&state, &path.0, &path.1, false)
}

async fn set_software(
    state: web::Data<SimState>,
    address: web::Path<String>,
    body: Bytes,
) -> HttpResponse {
    let software = serde_json::from_slice::<Software>(&body)
        .map_err(|e| format!("expected {{\"version\": …, \"releaseDate\": \"YYYY-MM-DD\"}}: {e}"))
        .and_then(|s| s.check().map(|()| s));
    match software {
        Ok(software) => {
            tracing::info!(address = %address, version = %software.version, "software set");
            let view = state.rooms.with(&address, |room| {
                room.set_software(Some(software));
                room.sim_view(&address)
            });
            HttpResponse::Ok().json(view)
        }
        Err(message) => HttpResponse::build(StatusCode::BAD_REQUEST)
            .json(json!({"error": "bad_body", "message": message})),
    }
}

async fn reset_software(state: web::Data<SimState>, address: web::Path<String>) -> HttpResponse {
    tracing::info!(address = %address, "software reset");
    let view = state.rooms.with(&address, |room| {
        room.set_software(None);
        room.sim_view(&address)
    });
    HttpResponse::Ok().json(view)
}

async fn endpoint(state: web::Data<SimState>, address: web::Path<String>) -> HttpResponse {
    let view = state.rooms.with(&address, |room| room.sim_view(&address));
    HttpResponse::Ok().json(view)
}

#[derive(Deserialize)]
struct FaultBody {
    fault: String,
}

/// The fault named by a `PUT .../fault` body; `Err` is the message of the 400 answer.
pub fn parse_fault_body(body: &[u8]) -> Result<Fault, String> {
    let body: FaultBody =
        serde_json::from_slice(body).map_err(|e| format!("expected {{\"fault\": NAME}}: {e}"))?;
    Fault::parse(&body.fault).ok_or_else(|| {
        format!(
            "unknown fault '{}'; expected one of {}",
            body.fault.chars().take(64).collect::<String>(),
            fault::names()
        )
    })
}

async fn set_fault(
    state: web::Data<SimState>,
    address: web::Path<String>,
    body: Bytes,
) -> HttpResponse {
    match parse_fault_body(&body) {
        Ok(fault) => {
            tracing::info!(address = %address, %fault, "fault set");
            let view = state.rooms.with(&address, |room| {
                room.set_fault(Some(fault));
                room.sim_view(&address)
            });
            HttpResponse::Ok().json(view)
        }
        Err(message) => HttpResponse::build(StatusCode::BAD_REQUEST).json(json!({
            "error": "unknown_fault",
            "message": message,
        })),
    }
}

async fn clear_fault(state: web::Data<SimState>, address: web::Path<String>) -> HttpResponse {
    tracing::info!(address = %address, "fault cleared");
    let view = state.rooms.with(&address, |room| {
        room.set_fault(None);
        room.sim_view(&address)
    });
    HttpResponse::Ok().json(view)
}

async fn stats(state: web::Data<SimState>) -> HttpResponse {
    let s = &state.stats;
    HttpResponse::Ok().json(json!({
        "infoRequests": s.info.load(Ordering::Relaxed),
        "commandRequests": s.commands.load(Ordering::Relaxed),
        "statusRequests": s.status.load(Ordering::Relaxed),
        "statusEndpoints": s.status_endpoints.load(Ordering::Relaxed),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_bodies_name_a_known_fault() {
        assert_eq!(
            parse_fault_body(br#"{"fault": "listener_hang"}"#),
            Ok(Fault::ListenerHang)
        );
        assert_eq!(
            parse_fault_body(br#"{"fault":"ignore"}"#),
            Ok(Fault::Ignore)
        );
        let unknown = parse_fault_body(br#"{"fault": "meltdown"}"#).unwrap_err();
        assert!(unknown.contains("meltdown") && unknown.contains("bad_credentials"));
        for bad in [&b""[..], b"{}", b"[]", br#"{"fault": 3}"#, b"not json"] {
            assert!(parse_fault_body(bad).is_err());
        }
    }
}
