//! TemplateAssignmentStore: which template each room is assigned, one row per assigned
//! endpoint (its key), with the last drift check kept as the JSON text of
//! `DriftRecord::to_json`. Rows go with their endpoint or template by ON DELETE CASCADE.
//! Assigning is one upsert per chunk of ids, so two instances assigning the same rooms at once
//! cannot collide on the key: the later one moves them, or finds them assigned already.

use crate::DbStore;
use crate::dialect::{Dialect, IN_CHUNK};
use crate::error::corrupt;
use crate::pool::SqliteConn;
use crate::schema::{endpoints as e, template_assignments as a};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::ids::{EndpointId, EnterpriseId, TemplateId};
use roomlink_domain::ports::TemplateAssignmentStore;
use roomlink_domain::template::drift::{Assignment, DriftRecord};
use roomlink_domain::webhook::Event;

/// How a read keeps the template it found until the transaction ends. PostgreSQL: KEY SHARE,
/// so that a template deleted meanwhile waits (and then takes the new rows with it) instead of
/// failing the insert on its foreign key; edits of the template are not held up. SQLite: its
/// IMMEDIATE transactions hold the write lock already.
trait KeepRow {
    const KEEP_ROW: &'static str;
}

impl KeepRow for AsyncPgConnection {
    const KEEP_ROW: &'static str = " FOR KEY SHARE";
}

impl KeepRow for SqliteConn {
    const KEEP_ROW: &'static str = "";
}

fn keep_row<C: KeepRow>(_: &C) -> &'static str {
    C::KEEP_ROW
}

/// The template row a read found (only that it did).
#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = Text)]
    #[allow(dead_code)]
    id: String,
}

/// endpoint id, endpoint name, template id, assigned, drift record.
type Row = (String, Option<String>, String, i64, Option<String>);

macro_rules! assignment_columns {
    () => {
        (
            a::endpoint_id,
            e::name,
            a::template_id,
            a::assigned_ms,
            a::drift,
        )
    };
}

fn assignment(row: Row) -> Result<Assignment> {
    let (endpoint, name, template, assigned, drift) = row;
    let drift = drift
        .map(|text| {
            let json = serde_json::from_str(&text).map_err(|e| {
                corrupt(format!(
                    "the drift record of endpoint {endpoint} is not JSON: {e}"
                ))
            })?;
            DriftRecord::from_json(&json)
                .map_err(|e| corrupt(format!("the drift record of endpoint {endpoint}: {e}")))
        })
        .transpose()?;
    Ok(Assignment {
        endpoint_id: EndpointId::from_trusted(endpoint),
        // As `Endpoint::name` shows a nameless endpoint.
        name: name.unwrap_or_default(),
        template_id: TemplateId::from_trusted(template),
        assigned_at: assigned,
        drift,
    })
}

/// The upsert assigning a template to `ids` endpoints, of the enterprise's only (a row comes
/// from its endpoint). Parameters: 1 template, 2 at, 3 enterprise, 4… the ids. A room
/// assigned another template moves and loses its record; one assigned this template is left
/// as it is, and not counted: the statement's count is the rooms assigned or moved.
fn assign_sql(ids: usize, param: impl Fn(usize) -> String) -> String {
    let list: Vec<String> = (4..4 + ids).map(&param).collect();
    format!(
        "INSERT INTO template_assignments (endpoint_id, enterprise_id, template_id, \
         assigned_ms) SELECT id, enterprise_id, {}, {} FROM endpoints \
         WHERE enterprise_id = {} AND id IN ({}) \
         ON CONFLICT (endpoint_id) DO UPDATE SET template_id = excluded.template_id, \
         assigned_ms = excluded.assigned_ms, checked_ms = NULL, drift = NULL \
         WHERE template_assignments.template_id <> excluded.template_id",
        param(1),
        param(2),
        param(3),
        list.join(", ")
    )
}

fn sorted(mut rows: Vec<Assignment>) -> Vec<Assignment> {
    // Byte order, whatever the database's collation (as the in-memory store sorts).
    rows.sort_by(|x, y| (&x.name, &x.endpoint_id).cmp(&(&y.name, &y.endpoint_id)));
    rows
}

#[async_trait]
impl TemplateAssignmentStore for DbStore {
    async fn assign_template(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
        endpoints: &[EndpointId],
        at: i64,
        audit: &AuditEntry,
    ) -> Result<usize> {
        let ids: Vec<&str> = endpoints.iter().map(EndpointId::as_str).collect();
        db_tx!(self, |c| {
            let sql = format!(
                "SELECT id FROM templates WHERE id = {} AND enterprise_id = {}{}",
                c.param(1),
                c.param(2),
                keep_row(&*c)
            );
            let found: Vec<Found> = diesel::sql_query(sql)
                .bind::<Text, _>(template.as_str())
                .bind::<Text, _>(enterprise.as_str())
                .load(c)
                .await?;
            if found.is_empty() {
                return Err(template.not_found().into());
            }
            let mut n = 0;
            for chunk in ids.chunks(IN_CHUNK) {
                let sql = assign_sql(chunk.len(), |n| Dialect::param(&*c, n));
                let mut upsert = diesel::sql_query(sql)
                    .into_boxed()
                    .bind::<Text, _>(template.as_str())
                    .bind::<BigInt, _>(at)
                    .bind::<Text, _>(enterprise.as_str());
                for id in chunk {
                    upsert = upsert.bind::<Text, _>(*id);
                }
                n += upsert.execute(c).await?;
            }
            append_audit!(c, audit)?;
            Ok(n)
        })
    }

    async fn unassign_template(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
        endpoints: &[EndpointId],
        audit: &AuditEntry,
    ) -> Result<usize> {
        let ids: Vec<&str> = endpoints.iter().map(EndpointId::as_str).collect();
        db_tx!(self, |c| {
            let mut n = 0;
            for chunk in ids.chunks(IN_CHUNK) {
                n += diesel::delete(
                    a::table
                        .filter(a::enterprise_id.eq(enterprise.as_str()))
                        .filter(a::template_id.eq(template.as_str()))
                        .filter(a::endpoint_id.eq_any(chunk)),
                )
                .execute(c)
                .await?;
            }
            append_audit!(c, audit)?;
            Ok(n)
        })
    }

    async fn assignments(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
    ) -> Result<Vec<Assignment>> {
        let rows: Vec<Row> = db_run!(self, |c| {
            Ok(a::table
                .inner_join(e::table)
                .filter(a::enterprise_id.eq(enterprise.as_str()))
                .filter(a::template_id.eq(template.as_str()))
                .select(assignment_columns!())
                .load(c)
                .await?)
        })?;
        let rows = rows.into_iter().map(assignment).collect::<Result<_>>()?;
        Ok(sorted(rows))
    }

    async fn assignments_of(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<Assignment>> {
        let ids: Vec<&str> = endpoints.iter().map(EndpointId::as_str).collect();
        let rows: Vec<Row> = db_run!(self, |c| {
            let mut rows = Vec::new();
            for chunk in ids.chunks(IN_CHUNK) {
                let part: Vec<Row> = a::table
                    .inner_join(e::table)
                    .filter(a::enterprise_id.eq(enterprise.as_str()))
                    .filter(a::endpoint_id.eq_any(chunk))
                    .select(assignment_columns!())
                    .load(c)
                    .await?;
                rows.extend(part);
            }
            Ok(rows)
        })?;
        rows.into_iter().map(assignment).collect()
    }

    async fn save_drift<'a>(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        template: &TemplateId,
        record: &DriftRecord,
        event: Option<&'a Event>,
    ) -> Result<bool> {
        let drift = record.to_json().to_string();
        db_tx!(self, |c| {
            // Conditional: a room unassigned or moved since its check began keeps what it has.
            let n = diesel::update(
                a::table
                    .filter(a::enterprise_id.eq(enterprise.as_str()))
                    .filter(a::endpoint_id.eq(endpoint.as_str()))
                    .filter(a::template_id.eq(template.as_str())),
            )
            .set((
                a::checked_ms.eq(Some(record.checked_at)),
                a::drift.eq(Some(&drift)),
            ))
            .execute(c)
            .await?;
            if n == 0 {
                return Ok(false);
            }
            if let Some(event) = event {
                emit_event!(&mut *c, enterprise.as_str(), event, None)?;
            }
            Ok(true)
        })
    }
}
