//! A plan as its rows: what each line of an upload will do, for a client to show before
//! anything is written (`POST /api/endpoints/csv/plan`). Never a password.

use super::plan::CsvPlan;

/// What the upload does with a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanAction {
    Create,
    Update,
    Skip,
}

impl PlanAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanAction::Create => "create",
            PlanAction::Update => "update",
            PlanAction::Skip => "skip",
        }
    }
}

/// One line of the plan: a created endpoint's name, an updated endpoint's id and name, or a
/// skipped row's id cell and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRow {
    /// The line of the file (the header is line 1); for an endpoint updated by several rows,
    /// the last of them.
    pub line: u64,
    pub action: PlanAction,
    pub id: Option<String>,
    pub name: Option<String>,
    pub reason: Option<String>,
}

impl CsvPlan {
    /// The plan's rows in file order.
    pub fn rows(&self) -> Vec<PlanRow> {
        let creates = self.creates.iter().map(|c| PlanRow {
            line: c.line,
            action: PlanAction::Create,
            id: None,
            name: c.profile.name().map(|n| n.as_str().to_owned()),
            reason: None,
        });
        let updates = self.updates.iter().map(|u| PlanRow {
            line: u.line,
            action: PlanAction::Update,
            id: Some(u.id.as_str().to_owned()),
            name: u.profile.name().map(|n| n.as_str().to_owned()),
            reason: None,
        });
        let skips = self.skipped.iter().map(|s| PlanRow {
            line: s.line,
            action: PlanAction::Skip,
            id: s.id.clone(),
            name: None,
            reason: Some(s.reason.to_string()),
        });
        let mut rows: Vec<PlanRow> = creates.chain(updates).chain(skips).collect();
        rows.sort_by_key(|r| r.line);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::csv::{CsvContext, CsvUpload};

    #[test]
    fn rows_in_file_order_with_reasons() {
        let csv = b"id,name,password\n,Alpha,pw\nnope,Beta,\n,Gamma,\n";
        let upload = CsvUpload::parse(csv).unwrap();
        let ctx = CsvContext {
            capacity: 10,
            ..CsvContext::default()
        };
        let rows = upload.plan(&ctx).rows();
        let actions: Vec<(u64, PlanAction)> = rows.iter().map(|r| (r.line, r.action)).collect();
        assert_eq!(
            actions,
            vec![
                (2, PlanAction::Create),
                (3, PlanAction::Skip),
                (4, PlanAction::Skip)
            ]
        );
        assert_eq!(rows[0].name.as_deref(), Some("Alpha"));
        assert_eq!(rows[1].id.as_deref(), Some("nope"));
        assert!(rows[1].reason.as_deref().unwrap().contains("no endpoint"));
        assert!(rows[2].reason.as_deref().unwrap().contains("password"));
    }
}
