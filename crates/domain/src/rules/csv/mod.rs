//! Bulk load from CSV, and the export that the bulk load reads back unchanged.
//!
//! - [`columns`]: the header's names and the formula guard both directions share.
//! - [`parse`]: the size bound ([`MAX_BYTES`]), the header, each row's cells.
//! - [`plan`]: create, update or skip per row ([`SkipReason`]), against a [`CsvContext`] read
//!   inside the upload's transaction.
//! - [`preview`]: a plan as rows (create/update/skip with reasons), for a dry run.
//! - [`write`]: the one function that plans, decides and builds an upload's write
//!   ([`CsvUpload::apply`]), with the passwords sealed before the store's transaction.
//! - [`export`]: the endpoints as a file.
//!
//! The service applies the whole plan in one transaction and answers with the full list; the
//! plan's [`CsvReport`] goes to the logs and to `roomlinkctl csv validate`.
//!
//! Dependencies run one way: `write`, `preview` → `plan` → `parse` → `columns` ← `export`.

pub mod columns;
pub mod export;
pub mod parse;
pub mod plan;
pub mod preview;
pub mod write;

pub use columns::{STANDARD_COLUMNS, neutralize, restore};
pub use parse::{CsvUpload, MAX_BYTES, MalformedRow, record_line, too_large};
pub use plan::{
    CsvContext, CsvPlan, CsvReport, PlannedCreate, PlannedUpdate, SkipReason, SkippedRow,
};
pub use preview::{PlanAction, PlanRow};
pub use write::{CsvWrite, SealedPasswords};
