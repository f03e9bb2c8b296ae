//! Requests run to their end even when their client goes away.
//!
//! actix drops a request's future when its connection closes. Dropped half-way, a use case may
//! stop between two statements of a write, inside a transaction, or while it holds a pooled
//! connection, and diesel-async's SQLite wrapper has panicked on a connection abandoned that
//! way. So the handler runs in a task of its own: a closed connection drops only the wait for
//! the answer, never the work, which finishes (committed or rolled back) and releases what it
//! holds. The answer then goes nowhere, as it would have anyway.
//!
//! A panic inside the task ends there too: the caller gets the catalog's `InternalError` (500)
//! instead of a closed connection.

use crate::error::ApiError;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use roomlink_domain::Error;
use tracing::Instrument;

pub async fn run_to_completion<B: MessageBody + 'static>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, actix_web::Error> {
    // The request's span goes along, so the task's log lines keep the request id.
    let work = next.call(req).instrument(tracing::Span::current());
    match actix_web::rt::spawn(work).await {
        Ok(answer) => answer,
        Err(_) => {
            tracing::error!("the request's task panicked");
            Err(ApiError::from(Error::internal("the request failed unexpectedly")).into())
        }
    }
}
