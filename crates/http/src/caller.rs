//! Who is calling: credentials from the request, turned into a `Principal` by the domain.
//!
//! A token comes from the `X-Access-Token` header or the `accesstoken` query parameter; Basic
//! credentials from `Authorization: Basic`. When both are present the token is used.
//!
//! Every check of credentials goes through [`throttled`], which applies the failed-authentication
//! throttle per credential ([`Attempt`]): it is applied here rather than before routing because
//! which credential a request presents decides whose allowance it spends.

use crate::AppState;
use crate::error::ApiError;
use crate::limits::{Attempt, Limit, too_many_requests};
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use base64::Engine;
use roomlink_app::auth::{Credentials, Principal};
use roomlink_domain::secret::Secret;
use roomlink_domain::{Error, ErrorKind};
use std::future::Future;
use std::pin::Pin;

/// The authenticated caller of a request.
pub struct Caller(pub Principal);

/// The value of one query parameter (percent-decoded), without parsing the rest.
pub fn query_param(req: &HttpRequest, name: &str) -> Option<String> {
    form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A paging parameter given at most once: `Invalid` naming it when repeated, since a second,
/// malformed value would otherwise pass unread (`query_param` reads the first).
pub fn single_query_param(req: &HttpRequest, name: &str) -> Result<Option<String>, Error> {
    let mut values = form_urlencoded::parse(req.query_string().as_bytes())
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned());
    let first = values.next();
    if values.next().is_some() {
        return Err(Error::invalid(format!(
            "{name}: given more than once; give it once"
        )));
    }
    Ok(first)
}

/// `Authorization: Basic` as username and password; `BadCredentialsException` if malformed.
pub fn basic_credentials(req: &HttpRequest) -> Option<Result<(String, Secret), Error>> {
    let value = req.headers().get(header::AUTHORIZATION)?;
    let parsed = (|| {
        let text = value.to_str().ok()?;
        let (scheme, encoded) = text.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (user, password) = decoded.split_once(':')?;
        Some((user.to_owned(), Secret::new(password)))
    })();
    Some(parsed.ok_or_else(Error::bad_credentials))
}

/// The access token the request carries, if any (for rate limits; never log it).
pub fn token_text(req: &HttpRequest) -> Option<String> {
    req.headers()
        .get("x-access-token")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query_param(req, "accesstoken"))
        .filter(|t| !t.is_empty())
}

fn token(req: &HttpRequest) -> Option<Secret> {
    token_text(req).map(Secret::new)
}

fn credentials(req: &HttpRequest) -> Result<Option<Credentials>, Error> {
    if let Some(t) = token(req) {
        return Ok(Some(Credentials::Token(t)));
    }
    match basic_credentials(req) {
        Some(Ok((username, password))) => Ok(Some(Credentials::Basic { username, password })),
        Some(Err(e)) => Err(e),
        None => Ok(None),
    }
}

/// Verifies credentials under the failed-authentication throttle: `verify` is not run for an
/// attempt refused unverified ([`Attempt::Password`], [`Attempt::ListenerSecret`]), and a
/// `BadCredentialsException` from it is counted, or answered `TooManyRequests` once the
/// attempt's allowance from this address is spent. Other outcomes pass as they are: only wrong
/// credentials count (missing ones guess nothing).
///
/// In a cluster the shared allowance decides (every instance's failures count in it) and this
/// instance's memory counts along; when the database cannot be asked, the memory decides
/// ([`Limiter::shared_unreachable`] says so in the log).
pub(crate) async fn throttled<T>(
    state: &AppState,
    address: Option<std::net::IpAddr>,
    attempt: Attempt<'_>,
    verify: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let limiter = &state.limiter;
    let local = limiter.attempt(address, attempt);
    // The cluster-wide allowance's key (an HMAC), computed only when it is asked: before
    // verifying a named account, or after a failure; a token that passes never needs it.
    let shared = state.services.auth_failures.as_ref().zip(address);
    let key = |failures: &roomlink_app::auth_failures::AuthFailures, address| {
        failures.key(address, attempt.guessed())
    };
    let refused = |retry_after| {
        state.metrics.record_limited(Limit::AuthFailures.name());
        too_many_requests(Limit::AuthFailures, retry_after)
    };
    limiter.before_verifying(&local).map_err(refused)?;
    if let Some((failures, address)) = shared
        && local.refuses_unverified()
    {
        match failures.refused(&key(failures, address)).await {
            Ok(Some(retry_after)) => return Err(refused(retry_after)),
            Ok(None) => {}
            Err(e) => limiter.shared_unreachable(&e),
        }
    }
    match verify.await {
        Err(e) if e.kind() == ErrorKind::BadCredentialsException => {
            let counted_here = limiter.verifying_failed(&local);
            let shared_says = match shared {
                Some((failures, address)) => failures
                    .failed(&key(failures, address))
                    .await
                    .map_err(|e| limiter.shared_unreachable(&e))
                    .ok(),
                None => None,
            };
            match shared_says {
                Some(Some(retry_after)) => Err(refused(retry_after)),
                Some(None) => Err(e),
                None => counted_here.map_err(refused).and(Err(e)),
            }
        }
        outcome => outcome,
    }
}

/// The request's client address, as the limits key it.
pub(crate) fn address(req: &HttpRequest) -> Option<std::net::IpAddr> {
    req.peer_addr().map(|a| a.ip())
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let creds = credentials(req);
        let address = address(req);
        Box::pin(async move {
            let state = state.ok_or_else(|| Error::internal("application state missing"))?;
            let auth = &state.services.auth;
            let principal = match creds? {
                Some(Credentials::Basic { username, password }) => {
                    let attempt = Attempt::Password {
                        username: &username,
                    };
                    let verify = auth.by_password(&username, password);
                    throttled(&state, address, attempt, verify).await?
                }
                Some(token @ Credentials::Token(_)) => {
                    let verify = auth.authenticate(Some(token));
                    throttled(&state, address, Attempt::AccessToken, verify).await?
                }
                None => auth.authenticate(None).await?,
            };
            Ok(Caller(principal))
        })
    }
}
