//! Remote control (`join`, `senddtmf`, `hangup`, `mutemicrophone`, `unmutemicrophone`),
//! endpoint status and recorded failures.

use crate::AppState;
use crate::caller::{Caller, query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::EndpointId;
use roomlink_domain::ports::Command;
use roomlink_domain::rules::dtmf::Dtmf;
use roomlink_domain::rules::join::{JoinParams, JoinRequest};

/// The errors of a control command: `$extra`, and what it can meet on its way through a
/// listener service to the room system (`docs/listener-protocol.md`).
macro_rules! through_listener {
    ($($extra:expr),*) => {
        &[
            $($extra,)*
            E::NotFound,
            E::EndpointHasNoListenerService,
            E::EncryptionUpdated,
            E::ListenerOffline,
            E::CommandTimedOut,
            E::ForwardsCompatibility,
            E::NoSuchHandler,
            E::UnknownControlProtocol,
            E::ExternalSystemUnreachable,
            E::ExternalSystemTimedOut,
            E::AuthenticationFailed,
            E::IncorrectlyProvisioned,
            E::Unavailable,
            E::BadCommand,
            E::ListenerServiceException,
            E::MessagingException,
        ]
    };
}

async fn send(
    caller: Caller,
    id: &str,
    command: Command,
    state: &AppState,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(id)?;
    state
        .services
        .control
        .command(&caller.0, &id, command)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(super) const JOIN: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints/{id}/join",
    handler: |route| route.to(join),
    access: Access::Caller(Op::Join),
    doc: Doc::Described(Description {
        id: "endpoints.join",
        tag: Tag::Control,
        summary: "Dial into a meeting",
        description: "The endpoint starts dialing: the meeting `meetingid` (with `passcode`), \
            or the IVR without one.",
        params: &[
            Param::ENDPOINT_ID,
            Param::Query("meetingid"),
            Param::Query("passcode"),
            Param::Query("cluster"),
            Param::Query("meetingtype"),
        ],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(E::Invalid),
    }),
};

/// `POST /api/endpoints/{id}/join?meetingid=&passcode=&cluster=&meetingtype=`.
async fn join(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let (meeting_id, passcode, cluster, meeting_type) = (
        query_param(&req, "meetingid"),
        query_param(&req, "passcode"),
        query_param(&req, "cluster"),
        query_param(&req, "meetingtype"),
    );
    let join = JoinRequest::from_params(&JoinParams {
        meeting_id: meeting_id.as_deref(),
        passcode: passcode.as_deref(),
        cluster: cluster.as_deref(),
        meeting_type: meeting_type.as_deref(),
    })?;
    send(caller, &id, Command::Join(join), &state).await
}

pub(super) const SEND_DTMF: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints/{id}/senddtmf",
    handler: |route| route.to(send_dtmf),
    access: Access::Caller(Op::SendDtmf),
    doc: Doc::Described(Description {
        id: "endpoints.sendDtmf",
        tag: Tag::Control,
        summary: "Send DTMF tones",
        description: "Sends `dtmfString` (digits, `#` and `*`) to the endpoint's call.",
        params: &[Param::ENDPOINT_ID, Param::Query("dtmfString")],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(E::InvalidDtmf),
    }),
};

/// `POST /api/endpoints/{id}/senddtmf?dtmfString=`.
async fn send_dtmf(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let dtmf = Dtmf::parse(query_param(&req, "dtmfString").as_deref())?;
    send(caller, &id, Command::SendDtmf(dtmf), &state).await
}

pub(super) const HANG_UP: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints/{id}/hangup",
    handler: |route| route.to(hang_up),
    access: Access::Caller(Op::HangUp),
    doc: Doc::Described(Description {
        id: "endpoints.hangUp",
        tag: Tag::Control,
        summary: "Hang up",
        description: "The endpoint disconnects from any connected meeting.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(),
    }),
};

async fn hang_up(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    send(caller, &id, Command::HangUp, &state).await
}

pub(super) const MUTE: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints/{id}/mutemicrophone",
    handler: |route| route.to(mute),
    access: Access::Caller(Op::MuteMicrophone),
    doc: Doc::Described(Description {
        id: "endpoints.muteMicrophone",
        tag: Tag::Control,
        summary: "Mute the microphone",
        description: "Answers once the endpoint's microphone is muted.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(),
    }),
};

async fn mute(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    send(caller, &id, Command::MuteMicrophone, &state).await
}

pub(super) const UNMUTE: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints/{id}/unmutemicrophone",
    handler: |route| route.to(unmute),
    access: Access::Caller(Op::UnmuteMicrophone),
    doc: Doc::Described(Description {
        id: "endpoints.unmuteMicrophone",
        tag: Tag::Control,
        summary: "Unmute the microphone",
        description: "Answers once the endpoint's microphone is unmuted.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(),
    }),
};

async fn unmute(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    send(caller, &id, Command::UnmuteMicrophone, &state).await
}

pub(super) const STATUSES: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/status",
    handler: |route| route.to(statuses),
    access: Access::Caller(Op::ListStatuses),
    doc: Doc::Described(Description {
        id: "endpoints.listStatuses",
        tag: Tag::Control,
        summary: "Status of every endpoint",
        description: "From the status cache, in endpoint order; no listener is called. An \
            endpoint never observed has every flag false and `timestamp` 0.",
        params: &[],
        body: Body::None,
        success: Success::JsonList("EndpointStatus"),
        errors: &[],
    }),
};

/// `GET /api/endpoints/status`: every endpoint of the enterprise, from the status cache.
async fn statuses(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let json = state.services.control.statuses_json(&caller.0).await?;
    Ok(HttpResponse::Ok()
        .content_type(actix_web::http::header::ContentType::json())
        .body(actix_web::web::Bytes::from_owner(SharedJson(json))))
}

/// A shared serialized answer handed to the response without copying it.
struct SharedJson(std::sync::Arc<str>);

impl AsRef<[u8]> for SharedJson {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

pub(super) const STATUS: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/status",
    handler: |route| route.to(status),
    access: Access::Caller(Op::GetStatus),
    doc: Doc::Described(Description {
        id: "endpoints.status",
        tag: Tag::Control,
        summary: "Status of one endpoint",
        description: "The endpoint's last observed state (call, dialing, microphone).",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("EndpointStatus"),
        errors: &[E::NotFound],
    }),
};

async fn status(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.control.status(&caller.0, &id).await?))
}

pub(super) const FAILURES: Operation = Operation {
    method: Method::Get,
    path: "/api/failures",
    handler: |route| route.to(failures),
    access: Access::Caller(Op::ListFailures),
    doc: Doc::Described(Description {
        id: "failures.list",
        tag: Tag::Control,
        summary: "Recent control failures",
        description: "The enterprise's latest control failures (at most 1,000), newest first.",
        params: &[],
        body: Body::None,
        success: Success::JsonList("Failure"),
        errors: &[],
    }),
};

pub(super) const FAILURES_SLASH: Operation = FAILURES.also_at(
    "/api/failures/",
    "failures.listSlash",
    "Recent control failures (trailing slash)",
);

/// `GET /api/failures`: the enterprise's recent control failures, newest first.
async fn failures(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.control.failures(&caller.0).await?))
}
