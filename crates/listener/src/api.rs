//! Listener protocol v1 toward roomlink: `/v1/info`, `/v1/commands/{command}`, `/v1/status`.
//! [`answer`] is the one request handling; the HTTP routes (after the secret check) and the
//! outbound WebSocket ([`Handler`]) both call it.

mod configuration;

use crate::calendar::Calendars;
use crate::control::Control;
use crate::driver::Capability;
use crate::drivers::Drivers;
use crate::request;
use crate::settings::Settings;
use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use futures::StreamExt;
use roomlink_listener_protocol::dial_home::Handler;
use roomlink_listener_protocol::failure::{FailureKind, room_failure};
use roomlink_listener_protocol::secrets::SharedSecret;
use roomlink_listener_protocol::server::{
    Answer, MAX_STATUS_BATCH, Route, info_body_for, no_handler, refuse_secret,
};
use roomlink_listener_protocol::version::{Version, commands_of};
use roomlink_listener_protocol::wire::{
    CalendarAnswer, CalendarQuery, CommandBody, Failure, InventoryAnswer, StatusBody, StatusEntry,
};
use serde_json::{Value, json};
use std::future::Future;

/// What every handler reaches.
pub struct ListenerState {
    pub version: Version,
    /// The secret roomlink must present over HTTP; `None` in outbound mode, where roomlink
    /// checked the listener's secret when the socket opened.
    pub secret: Option<SharedSecret>,
    pub private_key: Option<crypto_box::SecretKey>,
    pub drivers: Drivers,
    pub control: Control,
    /// `readcalendar`'s calendar systems.
    pub calendars: Calendars,
    pub settings: Settings,
}

impl ListenerState {
    fn commands(&self) -> Vec<String> {
        commands_of(self.version)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/info", web::get().to(http))
        .route("/v1/commands/{command}", web::post().to(http))
        .route("/v1/status", web::post().to(http));
}

/// The HTTP side: the secret check, then [`answer`].
async fn http(state: web::Data<ListenerState>, req: HttpRequest, body: Bytes) -> HttpResponse {
    if let Some(refusal) = refuse_secret(state.secret.as_ref(), &req) {
        return refusal;
    }
    match Route::of(req.method().as_str(), req.path()) {
        Some(route) => answer(&state, route, &body).await.into_http(),
        None => Answer::failure(&no_handler(req.method().as_str(), req.path())).into_http(),
    }
}

/// The socket side: the same answers.
impl Handler for ListenerState {
    fn handle(&self, route: Route<'_>, body: &[u8]) -> impl Future<Output = Answer> + Send {
        answer(self, route, body)
    }
}

/// The answer to one request: status and JSON body.
pub async fn answer(state: &ListenerState, route: Route<'_>, body: &[u8]) -> Answer {
    match route {
        Route::Info => Answer::ok(info_body_for(
            state.version,
            &state.commands(),
            &state.drivers.protocols(),
            &state.drivers.push_protocols(),
        )),
        Route::Command(name) => command(state, name, body).await,
        Route::Status => status(state, body).await,
    }
}

fn unsupported(protocol: Option<&str>) -> Failure {
    room_failure(
        FailureKind::UnsupportedProtocol,
        format!(
            "this listener has no driver for controlProtocol {}",
            protocol.unwrap_or("(none)")
        ),
        vec![],
        None,
        None,
    )
}

async fn command(state: &ListenerState, name: &str, body: &[u8]) -> Answer {
    if name == "status" || !commands_of(state.version).contains(&name) {
        return Answer::failure(&Failure::listener(
            404,
            "no_such_command",
            format!("listener {} has no command {name}", state.version),
        ));
    }
    if name == "readcalendar" {
        return read_calendar(state, body).await;
    }
    if name == "readinventory" {
        return read_inventory(state, body).await;
    }
    if name == "readconfiguration" || name == "writeconfiguration" {
        return configuration::configuration(state, name, body).await;
    }
    let body: CommandBody = match serde_json::from_slice(body) {
        Ok(body) => body,
        Err(e) => return Answer::bad_request(format!("the body is not a {name} command: {e}")),
    };
    let protocol = body.endpoint.control_protocol.as_deref();
    let Some(driver) = protocol.and_then(|p| state.drivers.get(p)) else {
        return Answer::failure(&unsupported(protocol));
    };
    if name == "pushcalendar" && !driver.capabilities().contains(&Capability::CalendarPush) {
        // `/v1/info` does not report CALENDAR_PUSH for this protocol either.
        return Answer::failure(&Failure::listener(
            404,
            "no_such_command",
            format!(
                "no pushcalendar for controlProtocol {}",
                protocol.unwrap_or_default()
            ),
        ));
    }
    let params = body.params.unwrap_or_default();
    let prepared =
        request::action(name, &params, &body.endpoint, &state.settings).and_then(|action| {
            request::device(
                &body.endpoint,
                body.credential.as_ref(),
                state.private_key.as_ref(),
            )
            .map(|device| (device, action))
        });
    let (device, action) = match prepared {
        Ok(prepared) => prepared,
        Err(f) => return Answer::failure(&f),
    };
    let address = device.address.clone();
    match state.control.command(driver, device, action).await {
        Ok(room_state) => {
            tracing::info!(command = %name, %address, "command carried out");
            Answer::ok(json!({ "state": room_state }))
        }
        Err(f) => {
            tracing::info!(command = %name, %address, failure = f.kind.name(),
                message = %f.message, "command failed");
            Answer::failure(&f.into_wire())
        }
    }
}

/// `readcalendar`: a room calendar's events; no room system is involved.
async fn read_calendar(state: &ListenerState, body: &[u8]) -> Answer {
    let query: CalendarQuery = match serde_json::from_slice(body) {
        Ok(query) => query,
        Err(e) => {
            return Answer::bad_request(format!("the body is not a readcalendar request: {e}"));
        }
    };
    if let Err(problem) = query.check() {
        return Answer::bad_request(problem);
    }
    let started = std::time::Instant::now();
    match state.calendars.read(&query).await {
        Ok(calendar) => {
            tracing::info!(calendar = %query.calendar_id, events = calendar.events.len(),
                elapsed_ms = started.elapsed().as_millis() as u64, "calendar read");
            match serde_json::to_value(CalendarAnswer { calendar }) {
                Ok(body) => Answer::ok(body),
                Err(e) => Answer::failure(&Failure::listener(500, "internal", e.to_string())),
            }
        }
        Err(f) => {
            tracing::info!(calendar = %query.calendar_id, failure = f.failure,
                message = %f.message, "calendar read failed");
            Answer::failure(&f)
        }
    }
}

/// `readinventory`: what the room system says about itself, read in the device's turn.
async fn read_inventory(state: &ListenerState, body: &[u8]) -> Answer {
    let body: CommandBody = match serde_json::from_slice(body) {
        Ok(body) => body,
        Err(e) => {
            return Answer::bad_request(format!("the body is not a readinventory command: {e}"));
        }
    };
    let protocol = body.endpoint.control_protocol.as_deref();
    let Some(driver) = protocol.and_then(|p| state.drivers.get(p)) else {
        return Answer::failure(&unsupported(protocol));
    };
    if !driver.capabilities().contains(&Capability::Inventory) {
        return Answer::failure(&Failure::listener(
            404,
            "no_such_command",
            format!(
                "no readinventory for controlProtocol {}",
                protocol.unwrap_or_default()
            ),
        ));
    }
    let device = match request::device(
        &body.endpoint,
        body.credential.as_ref(),
        state.private_key.as_ref(),
    ) {
        Ok(device) => device,
        Err(f) => return Answer::failure(&f),
    };
    let started = std::time::Instant::now();
    match state.control.inventory(driver.as_ref(), &device).await {
        Ok(inventory) => {
            tracing::info!(command = "readinventory", address = %device.address,
                peripherals = inventory.peripherals.len(),
                not_reported = ?inventory.not_reported,
                elapsed_ms = started.elapsed().as_millis() as u64, "inventory read");
            match serde_json::to_value(InventoryAnswer { inventory }) {
                Ok(body) => Answer::ok(body),
                Err(e) => Answer::failure(&Failure::listener(500, "internal", e.to_string())),
            }
        }
        Err(f) => {
            tracing::info!(command = "readinventory", address = %device.address,
                failure = f.kind.name(), message = %f.message, "inventory read failed");
            Answer::failure(&f.into_wire())
        }
    }
}

/// One endpoint's entry of a status answer.
async fn status_of(state: &ListenerState, entry: &StatusEntry) -> Value {
    let id = entry.endpoint.id.clone().unwrap_or_default();
    let protocol = entry.endpoint.control_protocol.as_deref();
    let Some(driver) = protocol.and_then(|p| state.drivers.get(p)) else {
        return json!({ "endpointId": id, "failure": unsupported(protocol) });
    };
    let device = match request::device(
        &entry.endpoint,
        entry.credential.as_ref(),
        state.private_key.as_ref(),
    ) {
        Ok(device) => device,
        Err(f) => return json!({ "endpointId": id, "failure": f }),
    };
    match state.control.status(driver.as_ref(), &device).await {
        Ok(room_state) => json!({ "endpointId": id, "state": room_state }),
        Err(f) => json!({ "endpointId": id, "failure": f.into_wire() }),
    }
}

async fn status(state: &ListenerState, body: &[u8]) -> Answer {
    let body: StatusBody = match serde_json::from_slice(body) {
        Ok(body) => body,
        Err(e) => return Answer::bad_request(format!("the body is not a status request: {e}")),
    };
    let count = body.endpoints.len();
    if count > MAX_STATUS_BATCH {
        return Answer::bad_request(format!(
            "{count} endpoints in one request; at most {MAX_STATUS_BATCH} are allowed"
        ));
    }
    let started = std::time::Instant::now();
    let concurrency = state.settings.commands.status_concurrency;
    // In request order, at most `concurrency` devices at a time.
    // Entries are moved into their futures: borrowed ones make the future not provably Send
    // (a higher-ranked lifetime limitation), which the WebSocket transport needs.
    let statuses: Vec<Value> = futures::stream::iter(body.endpoints)
        .map(|entry| async move { status_of(state, &entry).await })
        .buffered(concurrency)
        .collect()
        .await;
    tracing::info!(
        endpoints = count,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "status answered"
    );
    Answer::ok(json!({ "statuses": statuses }))
}
