//! Live updates: `POST /api/live/tickets` (a ticket for a browser's `EventSource`) and
//! `GET /api/live/events` (the server-sent event stream, see [`crate::live`]).

use crate::AppState;
use crate::caller::{Caller, address, query_param, throttled};
use crate::error::ApiResult;
use crate::limits::Attempt;
use crate::live::CredentialCheck;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use roomlink_app::auth::Subject;
use roomlink_domain::access::{Operation as Op, Target};
use serde::Serialize;
use std::convert::Infallible;

pub(super) const TICKET: Operation = Operation {
    method: Method::Post,
    path: "/api/live/tickets",
    handler: |route| route.to(ticket),
    access: Access::Caller(Op::LiveTicket),
    doc: Doc::Described(Description {
        id: "live.ticket",
        tag: Tag::Fleet,
        summary: "A ticket to open the live event stream from a browser",
        description: "A browser's `EventSource` cannot send headers, and an access token in a \
            URL ends up in logs: this ticket stands in for the caller's access token in \
            `GET /api/live/events?ticket=` for 60 seconds, reconnects included. It opens a \
            stream only while that token is live; revoking the token ends the streams opened \
            with it. Callers with Basic credentials send them with the stream request instead \
            (`Forbidden` here).",
        params: &[],
        body: Body::None,
        success: Success::Json("LiveTicket"),
        errors: &[],
    }),
};

pub(super) const EVENTS: Operation = Operation {
    method: Method::Get,
    path: "/api/live/events",
    handler: |route| route.to(events),
    access: Access::Caller(Op::LiveEvents),
    doc: Doc::Described(Description {
        id: "live.events",
        tag: Tag::Fleet,
        summary: "What changed, as it changes (server-sent events)",
        description: "A `text/event-stream` that names what changed for the enterprise, on any \
            instance: `statuses` (a room's call state or the endpoint records), `health`, \
            `inventory`, `listeners`; the data is `{\"topic\": ...}` and the client reads that \
            part again. It opens with `retry:` and `ready` (or `resync`: read everything \
            again), sends `: keep-alive` comments every 20 s, and ends with `closing` and a \
            reason (`tokenRevoked`, `credentialsRevoked`: a service user's Basic credentials no \
            longer hold, checked every `security.stream_recheck_ms`; `shuttingDown`). Each change has an `id:`; a client that \
            reconnects with it (`Last-Event-ID`, or `lastEventId`) gets what it missed, or \
            `resync` when this instance cannot tell. Authenticate as usual, or with `ticket` \
            from `POST /api/live/tickets`.",
        params: &[Param::Query("ticket"), Param::Query("lastEventId")],
        body: Body::None,
        success: Success::Other("text/event-stream"),
        errors: &[],
    }),
};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TicketView {
    ticket: String,
    expires_at: i64,
}

async fn ticket(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let issued = state.services.live_tickets.issue(&caller.0)?;
    Ok(HttpResponse::Ok()
        // A credential: no cache keeps it.
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(TicketView {
            ticket: issued.ticket,
            expires_at: issued.expires_ms,
        }))
}

async fn events(req: HttpRequest, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let principal = match query_param(&req, "ticket") {
        Some(ticket) => {
            let open = state.services.live_tickets.open(&ticket);
            throttled(&state, address(&req), Attempt::AccessToken, open).await?
        }
        None => Caller::from_request(&req, &mut Payload::None).await?.0,
    };
    principal.authorize(Op::LiveEvents, Target::Enterprise)?;
    let last_event_id = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query_param(&req, "lastEventId"));
    // A service user's Basic credentials are checked again from time to time: nothing else
    // tells this stream that the user was disabled or given a new password.
    let check: Option<CredentialCheck> = matches!(principal.subject, Subject::ServiceUser { .. })
        .then(|| {
            let (state, principal) = (state.clone(), principal.clone());
            Box::new(move || {
                let (state, principal) = (state.clone(), principal.clone());
                Box::pin(async move {
                    match state.services.auth.still_valid(&principal).await {
                        Ok(still) => still,
                        // Storage trouble is not a revocation: the next check decides.
                        Err(error) => {
                            tracing::warn!(%error, "live stream: credentials not checked");
                            true
                        }
                    }
                }) as futures::future::BoxFuture<'static, bool>
            }) as CredentialCheck
        });
    let stream = state.live.follow(
        principal.enterprise_id.clone(),
        principal.token().map(|t| t.hash().clone()),
        last_event_id.as_deref(),
        check,
    );
    let body = futures::stream::unfold(stream, |mut stream| async move {
        let chunk = stream.next_chunk().await?;
        Some((Ok::<Bytes, Infallible>(chunk), stream))
    });
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/event-stream"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        // nginx buffers responses by default, which would hold events back.
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body))
}
