//! The dry run of a CSV upload: the same plan the upload would apply, computed by the same
//! rule inside the same store transaction (the enterprise locked, the same context read), then
//! rolled back. Nothing is written and nothing is audited: it changes nothing.

use super::auth::Principal;
use super::endpoints::EndpointService;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::rules::csv::{CsvUpload, PlanRow};
use std::sync::{Arc, Mutex};

/// What an upload would do, row by row, with its totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvPreview {
    pub created: usize,
    pub updated: usize,
    pub skipped: usize,
    pub rows: Vec<PlanRow>,
}

/// The message of the error that rolls a dry run back; never shown (the preview is answered).
const ROLLED_BACK: &str = "CSV dry run: rolled back by design";

impl EndpointService {
    /// Plans `csv` as [`EndpointService::bulk_put`] would apply it, writing nothing. Same
    /// role (ROLE_READWRITE), same parse errors.
    pub async fn plan_csv(&self, principal: &Principal, csv: &[u8]) -> Result<CsvPreview> {
        principal.authorize(Operation::BulkPutEndpoints, Target::Enterprise)?;
        let upload = CsvUpload::parse(csv)?;
        let enterprise = principal.enterprise_id.clone();
        let planned: Arc<Mutex<Option<CsvPreview>>> = Arc::default();
        let keep = planned.clone();
        // The store writes this entry only with a committed write, and a dry run never commits.
        let audit = self.audit.op(principal, Operation::BulkPutEndpoints, None);
        let ids = upload.ids();
        let outcome = self
            .endpoints
            .bulk_put(
                &enterprise,
                ids,
                Box::new(move |ctx| {
                    let plan = upload.plan(ctx);
                    let preview = CsvPreview {
                        created: plan.creates.len(),
                        updated: plan.updates.len(),
                        skipped: plan.skipped.len(),
                        rows: plan.rows(),
                    };
                    if let Ok(mut slot) = keep.lock() {
                        *slot = Some(preview);
                    }
                    Err(Error::internal(ROLLED_BACK))
                }),
                &audit,
            )
            .await;
        let preview = planned.lock().ok().and_then(|mut slot| slot.take());
        match (preview, outcome) {
            (Some(preview), _) => Ok(preview),
            (None, Err(error)) => Err(error),
            (None, Ok(_)) => Err(Error::internal(
                "the CSV dry run wrote instead of rolling back",
            )),
        }
    }
}
