//! Endpoint status as last observed, and recorded control failures.

use crate::error::Error;
use crate::ids::{EndpointId, EnterpriseId, FailureId};
use serde::Serialize;
use serde_json::{Map, Value};

/// The observed state of a room system; `timestamp` is when it was observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointStatus {
    pub endpoint_id: EndpointId,
    pub call_active: bool,
    pub reserved: bool,
    pub dialing: bool,
    pub microphone_muted: bool,
    pub last_dial_timestamp_millis: Option<i64>,
    pub timestamp: i64,
}

/// A control failure kept for monitoring (`GET /api/failures`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub id: FailureId,
    #[serde(skip)]
    pub enterprise_id: EnterpriseId,
    pub subject_class: String,
    pub subject_id: String,
    pub error_date: i64,
    pub error_code: i64,
    pub error_name: String,
    pub error_message: String,
    pub error_details: Map<String, Value>,
}

impl Failure {
    /// Records `error` against a subject, e.g. ("ListenerService", id).
    pub fn from_error(
        id: FailureId,
        enterprise_id: EnterpriseId,
        subject_class: &str,
        subject_id: &str,
        error: &Error,
        now: i64,
    ) -> Failure {
        Failure {
            id,
            enterprise_id,
            subject_class: subject_class.to_owned(),
            subject_id: subject_id.to_owned(),
            error_date: now,
            error_code: error.kind().code(),
            error_name: error.kind().name().to_owned(),
            error_message: error.message().to_owned(),
            error_details: error.details().clone(),
        }
    }
}
