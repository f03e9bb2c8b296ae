//! `/api/auth/accesstokens`: create, list, inspect, delete.

use crate::AppState;
use crate::caller::{Caller, address, basic_credentials, query_param, throttled};
use crate::error::ApiResult;
use crate::limits::Attempt;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::tokens::{CreateOptions, TokenView};
use roomlink_domain::access::Operation as Op;
use roomlink_domain::enums::ClientDeviceType;
use roomlink_domain::secret::Secret;
use roomlink_domain::{Error, ErrorKind as E};

pub(super) const CREATE: Operation = Operation {
    method: Method::Post,
    path: "/api/auth/accesstokens",
    handler: |route| route.to(create),
    access: Access::TokenCreation,
    doc: Doc::Described(Description {
        id: "auth.createAccessToken",
        tag: Tag::AccessTokens,
        summary: "Create an access token",
        description: "From Basic credentials (a service user or a companion-platform user), or \
            from `platformaccesstoken`; with `platformaccesstoken` and `code` (an endpoint's \
            pairing code), a Zero Touch token (ROLE_PAIRINGCODE, at most one day) limited to \
            that endpoint. The token value is shown in this response only. \
            `seamaccesstoken`, the predecessor's name, is accepted for `platformaccesstoken` \
            (both with different values is `Invalid`).",
        params: &[
            Param::Query("platformaccesstoken"),
            Param::Query("seamaccesstoken"),
            Param::Query("code"),
            Param::Query("duration"),
            Param::Query("clientName"),
            Param::Query("clientDeviceType"),
        ],
        body: Body::None,
        success: Success::Json("AccessToken"),
        errors: &[E::Invalid],
    }),
};

/// `POST /api/auth/accesstokens`: from Basic credentials (service or platform user), or from
/// `platformaccesstoken` or its alias `seamaccesstoken` (plus `code` for Zero Touch). Options: `duration`, `clientName`,
/// `clientDeviceType`.
async fn create(req: HttpRequest, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let options = CreateOptions {
        duration: query_param(&req, "duration"),
        client_name: query_param(&req, "clientName"),
        client_device_type: query_param(&req, "clientDeviceType")
            .filter(|v| !v.is_empty())
            .map(|v| ClientDeviceType::parse(&v))
            .transpose()?,
    };
    let tokens = &state.services.tokens;
    let created = match platform_token(&req)? {
        Some(platform_token) => {
            let code = query_param(&req, "code");
            let platform_token = Secret::new(platform_token);
            let verify =
                tokens.create_with_platform_token(&platform_token, code.as_deref(), &options);
            throttled(&state, address(&req), Attempt::PlatformToken, verify).await?
        }
        None => match basic_credentials(&req) {
            Some(creds) => {
                let (username, password) = creds?;
                let attempt = Attempt::Password {
                    username: &username,
                };
                let verify = tokens.create_with_password(&username, password, &options);
                throttled(&state, address(&req), attempt, verify).await?
            }
            None => return Err(Error::not_authenticated().into()),
        },
    };
    Ok(HttpResponse::Ok().json(created.view()))
}

/// The platform token of the query: `platformaccesstoken`, or `seamaccesstoken`, the
/// predecessor's name for it, which its clients still send. Both with different values is
/// `Invalid` (neither value is echoed): guessing which one the client meant could issue a
/// token for the wrong user. Empty values count as absent.
fn platform_token(req: &HttpRequest) -> Result<Option<String>, Error> {
    let given = |name| query_param(req, name).filter(|t| !t.is_empty());
    match (given("platformaccesstoken"), given("seamaccesstoken")) {
        (Some(current), Some(alias)) if current != alias => Err(Error::invalid(
            "platformaccesstoken and seamaccesstoken (its former name) differ: give only one",
        )),
        (current, alias) => Ok(current.or(alias)),
    }
}

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/auth/accesstokens",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListAccessTokens),
    doc: Doc::Described(Description {
        id: "auth.listAccessTokens",
        tag: Tag::AccessTokens,
        summary: "List access tokens",
        description: "The enterprise's unexpired tokens, without their values.",
        params: &[],
        body: Body::None,
        success: Success::JsonList("AccessToken"),
        errors: &[],
    }),
};

async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let tokens = state.services.tokens.list(&caller.0).await?;
    let views: Vec<_> = tokens
        .iter()
        .map(|token| TokenView { token, value: None })
        .collect();
    Ok(HttpResponse::Ok().json(views))
}

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/auth/accesstokens/{token}",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetAccessToken),
    doc: Doc::Described(Description {
        id: "auth.getAccessToken",
        tag: Tag::AccessTokens,
        summary: "Inspect an access token",
        description: "One token of the enterprise, by value or by id, without its value.",
        params: &[Param::Token],
        body: Body::None,
        success: Success::Json("AccessToken"),
        errors: &[E::NotFound],
    }),
};

/// `GET /api/auth/accesstokens/{token}`: `{token}` is a token value or a token id.
async fn get(
    caller: Caller,
    key: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let token = state.services.tokens.get(&caller.0, &key).await?;
    Ok(HttpResponse::Ok().json(TokenView {
        token: &token,
        value: None,
    }))
}

pub(super) const DELETE: Operation = Operation {
    method: Method::Delete,
    path: "/api/auth/accesstokens/{token}",
    handler: |route| route.to(delete),
    access: Access::Caller(Op::DeleteAccessToken),
    doc: Doc::Described(Description {
        id: "auth.deleteAccessToken",
        tag: Tag::AccessTokens,
        summary: "Delete an access token",
        description: "Any caller may delete its own token (a Zero Touch token unpairs so); \
            deleting another's needs ROLE_READWRITE.",
        params: &[Param::Token],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::NotFound],
    }),
};

async fn delete(
    caller: Caller,
    key: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    state.services.tokens.delete(&caller.0, &key).await?;
    Ok(HttpResponse::NoContent().finish())
}
