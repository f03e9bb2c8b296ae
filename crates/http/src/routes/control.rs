//! Remote control (`join`, `senddtmf`, `hangup`, `mutemicrophone`, `unmutemicrophone`),
//! endpoint status and recorded failures.

use crate::AppState;
use crate::caller::{Caller, query_param};
use crate::error::ApiResult;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ids::EndpointId;
use roomlink_domain::ports::Command;
use roomlink_domain::rules::dtmf::Dtmf;
use roomlink_domain::rules::join::{JoinParams, JoinRequest};

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

/// `POST /api/endpoints/{id}/join?meetingid=&passcode=&cluster=&meetingtype=`.
pub async fn join(
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

/// `POST /api/endpoints/{id}/senddtmf?dtmfString=`.
pub async fn send_dtmf(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let dtmf = Dtmf::parse(query_param(&req, "dtmfString").as_deref())?;
    send(caller, &id, Command::SendDtmf(dtmf), &state).await
}

pub async fn hang_up(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    send(caller, &id, Command::HangUp, &state).await
}

pub async fn mute(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    send(caller, &id, Command::MuteMicrophone, &state).await
}

pub async fn unmute(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    send(caller, &id, Command::UnmuteMicrophone, &state).await
}

/// `GET /api/endpoints/status`: every endpoint of the enterprise, from the status cache.
pub async fn statuses(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
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

pub async fn status(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.control.status(&caller.0, &id).await?))
}

/// `GET /api/failures`: the enterprise's recent control failures, newest first.
pub async fn failures(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.control.failures(&caller.0).await?))
}
