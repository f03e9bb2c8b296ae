//! `GET /api/listenerservices/{id}/connect`: an outbound listener opens its WebSocket
//! (docs/listener-protocol.md, "Transport: outbound WebSocket").

use crate::AppState;
use crate::caller::{address, throttled};
use crate::error::ApiResult;
use crate::limits::Attempt;
use crate::links::SUBPROTOCOL;
use crate::links::socket::{self, Ended, MAX_FRAME_BYTES};
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::Error;
use roomlink_domain::ErrorKind as E;

pub(super) const CONNECT: Operation = Operation {
    method: Method::Get,
    path: "/api/listenerservices/{id}/connect",
    handler: |route| route.to(connect),
    access: Access::ListenerSecret,
    doc: Doc::Described(Description {
        id: "listenerServices.connect",
        tag: Tag::ListenerServices,
        summary: "Connect an outbound listener",
        description: "A WebSocket upgrade (subprotocol `roomlink-listener.v1`) by the listener \
            itself, authenticated with its shared secret in `Authorization: Bearer`. roomlink \
            then sends the listener protocol's requests down the socket. Only for listeners \
            registered with `\"connection\": \"outbound\"`; see docs/listener-protocol.md.",
        params: &[Param::Id("The listener service's id.")],
        body: Body::None,
        success: Success::Upgrade,
        errors: &[E::Invalid],
    }),
};

/// `X-Listener-Version`, when it looks like a version (it is shown to API callers).
fn listener_version(req: &HttpRequest) -> Option<String> {
    let text = req
        .headers()
        .get("x-listener-version")?
        .to_str()
        .ok()?
        .trim();
    let plausible = !text.is_empty()
        && text.len() <= 32
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-+".contains(&b));
    plausible.then(|| text.to_owned())
}

fn bearer(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, secret) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| secret.trim())
        .filter(|s| !s.is_empty())
}

async fn connect(
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let services = &state.services;
    let verify = services.listeners.authenticate_link(&id, bearer(&req));
    let attempt = Attempt::ListenerSecret { listener: &id };
    let listener = throttled(&state, address(&req), attempt, verify).await?;
    let (response, session, stream) = actix_ws::handle_with_protocols(&req, body, &[SUBPROTOCOL])
        .map_err(|e| {
        Error::invalid(format!(
            "this is a WebSocket endpoint for outbound listeners: {e}"
        ))
    })?;
    let registry = state.links.clone();
    let presence = services
        .listeners
        .link_up(&listener.id, registry.instance(), listener_version(&req))
        .await?;
    let stream = stream
        .max_frame_size(MAX_FRAME_BYTES)
        .aggregate_continuations()
        .max_continuation_size(MAX_FRAME_BYTES);
    let services = services.clone();
    tracing::info!(
        listener = %listener.id, version = presence.version.as_deref().unwrap_or("-"),
        "listener connected"
    );
    actix_web::rt::spawn(async move {
        let ended = socket::serve(registry, listener.id.clone(), session, stream).await;
        if let Ended::Broken(_) = ended {
            tracing::warn!(listener = %listener.id, reason = %ended, "listener disconnected");
        } else {
            tracing::info!(listener = %listener.id, reason = %ended, "listener disconnected");
        }
        if let Err(e) = services.listeners.link_down(&presence).await {
            tracing::warn!(listener = %listener.id, error = %e, "cannot record the disconnection");
        }
    });
    Ok(response)
}
