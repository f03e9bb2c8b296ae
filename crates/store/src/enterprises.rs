//! EnterpriseStore and UserStore.

use crate::DbStore;
use crate::error::{DbError, is_unique_violation};
use crate::models::{EnterpriseRow, UserRow};
use crate::schema::{
    access_tokens, audit_log, calendar_accounts, endpoint_statuses, endpoints, enterprises,
    failures, listener_links, listener_services, paired_statuses, pairing_codes, service_users,
};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::enterprise::{Enterprise, EnterpriseUsage, ServiceUser};
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::{EnterpriseStore, UserStore};
use roomlink_domain::token::TokenHash;
use roomlink_domain::{Error, Result};

#[async_trait]
impl EnterpriseStore for DbStore {
    async fn create_enterprise(&self, enterprise: &Enterprise) -> Result<()> {
        let row = EnterpriseRow::new(enterprise);
        db_run!(self, |c| {
            diesel::insert_into(enterprises::table)
                .values(&row)
                .execute(c)
                .await
                .map_err(|e| {
                    if is_unique_violation(&e, "enterprises_name_key", "enterprises", "name") {
                        DbError::Domain(Error::invalid(format!(
                            "enterprise name: '{}' is taken",
                            enterprise.name
                        )))
                    } else {
                        e.into()
                    }
                })?;
            Ok(())
        })
    }

    async fn enterprise(&self, id: &EnterpriseId) -> Result<Option<Enterprise>> {
        db_run!(self, |c| {
            let row: Option<EnterpriseRow> = enterprises::table
                .find(id.as_str())
                .select(EnterpriseRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(EnterpriseRow::into_domain).transpose()?)
        })
    }

    async fn enterprise_by_name(&self, name: &str) -> Result<Option<Enterprise>> {
        db_run!(self, |c| {
            let row: Option<EnterpriseRow> = enterprises::table
                .filter(enterprises::name.eq(name))
                .select(EnterpriseRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(EnterpriseRow::into_domain).transpose()?)
        })
    }

    async fn enterprise_ids(&self) -> Result<Vec<EnterpriseId>> {
        db_run!(self, |c| {
            let ids: Vec<String> = enterprises::table
                .select(enterprises::id)
                .order(enterprises::id)
                .load(c)
                .await?;
            Ok(ids.into_iter().map(EnterpriseId::from_trusted).collect())
        })
    }

    async fn set_public_key(
        &self,
        id: &EnterpriseId,
        public_key: Option<String>,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let n = diesel::update(enterprises::table.find(id.as_str()))
                .set(enterprises::public_key.eq(&public_key))
                .execute(c)
                .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }

    async fn list_enterprises(&self) -> Result<Vec<Enterprise>> {
        db_run!(self, |c| {
            let rows: Vec<EnterpriseRow> = enterprises::table
                .order(enterprises::name)
                .select(EnterpriseRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(EnterpriseRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn enterprise_usage(&self, id: &EnterpriseId) -> Result<EnterpriseUsage> {
        let id = id.as_str();
        db_run!(self, |c| {
            let endpoints: i64 = endpoints::table
                .filter(endpoints::enterprise_id.eq(id))
                .count()
                .get_result(c)
                .await?;
            let listeners: i64 = listener_services::table
                .filter(listener_services::enterprise_id.eq(id))
                .count()
                .get_result(c)
                .await?;
            let users: i64 = service_users::table
                .filter(service_users::enterprise_id.eq(id))
                .count()
                .get_result(c)
                .await?;
            let tokens: i64 = access_tokens::table
                .filter(access_tokens::enterprise_id.eq(id))
                .count()
                .get_result(c)
                .await?;
            let n = |v: i64| u64::try_from(v).unwrap_or(0);
            Ok(EnterpriseUsage {
                endpoints: n(endpoints),
                listeners: n(listeners),
                users: n(users),
                tokens: n(tokens),
            })
        })
    }

    async fn set_endpoint_limit(&self, id: &EnterpriseId, limit: u32) -> Result<bool> {
        db_run!(self, |c| {
            let n = diesel::update(enterprises::table.find(id.as_str()))
                .set(enterprises::endpoint_limit.eq(i64::from(limit)))
                .execute(c)
                .await?;
            Ok(n > 0)
        })
    }

    async fn delete_enterprise(&self, id: &EnterpriseId) -> Result<Option<Vec<TokenHash>>> {
        let id = id.as_str();
        // Every table by name rather than by ON DELETE CASCADE: paired statuses have no
        // foreign key, and the order (dependents first) satisfies every constraint.
        db_tx!(self, |c| {
            diesel::delete(
                endpoint_statuses::table.filter(endpoint_statuses::enterprise_id.eq(id)),
            )
            .execute(c)
            .await?;
            diesel::delete(paired_statuses::table.filter(paired_statuses::enterprise_id.eq(id)))
                .execute(c)
                .await?;
            diesel::delete(pairing_codes::table.filter(pairing_codes::enterprise_id.eq(id)))
                .execute(c)
                .await?;
            diesel::delete(
                calendar_accounts::table.filter(calendar_accounts::enterprise_id.eq(id)),
            )
            .execute(c)
            .await?;
            diesel::delete(endpoints::table.filter(endpoints::enterprise_id.eq(id)))
                .execute(c)
                .await?;
            diesel::delete(
                listener_links::table.filter(
                    listener_links::listener_id.eq_any(
                        listener_services::table
                            .filter(listener_services::enterprise_id.eq(id))
                            .select(listener_services::id),
                    ),
                ),
            )
            .execute(c)
            .await?;
            diesel::delete(
                listener_services::table.filter(listener_services::enterprise_id.eq(id)),
            )
            .execute(c)
            .await?;
            let tokens: Vec<String> =
                diesel::delete(access_tokens::table.filter(access_tokens::enterprise_id.eq(id)))
                    .returning(access_tokens::token_hash)
                    .get_results(c)
                    .await?;
            diesel::delete(service_users::table.filter(service_users::enterprise_id.eq(id)))
                .execute(c)
                .await?;
            diesel::delete(failures::table.filter(failures::enterprise_id.eq(id)))
                .execute(c)
                .await?;
            diesel::delete(audit_log::table.filter(audit_log::enterprise_id.eq(id)))
                .execute(c)
                .await?;
            let n = diesel::delete(enterprises::table.find(id))
                .execute(c)
                .await?;
            Ok((n > 0).then(|| tokens.into_iter().map(TokenHash::from_stored).collect()))
        })
    }
}

#[async_trait]
impl UserStore for DbStore {
    async fn create_user(&self, user: &ServiceUser) -> Result<()> {
        let row = UserRow::new(user);
        db_run!(self, |c| {
            diesel::insert_into(service_users::table)
                .values(&row)
                .execute(c)
                .await
                .map_err(|e| {
                    if is_unique_violation(
                        &e,
                        "service_users_username_key",
                        "service_users",
                        "username",
                    ) {
                        DbError::Domain(Error::invalid(format!(
                            "username: '{}' is taken",
                            user.username
                        )))
                    } else {
                        e.into()
                    }
                })?;
            Ok(())
        })
    }

    async fn user_by_username(&self, username: &str) -> Result<Option<ServiceUser>> {
        db_run!(self, |c| {
            let row: Option<UserRow> = service_users::table
                .filter(service_users::username.eq(username))
                .select(UserRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(UserRow::into_domain).transpose()?)
        })
    }

    async fn list_users(&self, enterprise: &EnterpriseId) -> Result<Vec<ServiceUser>> {
        db_run!(self, |c| {
            let rows: Vec<UserRow> = service_users::table
                .filter(service_users::enterprise_id.eq(enterprise.as_str()))
                .order(service_users::username)
                .select(UserRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(UserRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn set_user_disabled(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        disabled: bool,
    ) -> Result<bool> {
        db_run!(self, |c| {
            let n = diesel::update(
                service_users::table
                    .filter(service_users::enterprise_id.eq(enterprise.as_str()))
                    .filter(service_users::username.eq(username)),
            )
            .set(service_users::disabled.eq(disabled))
            .execute(c)
            .await?;
            Ok(n > 0)
        })
    }

    async fn set_user_password(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        password_hash: &str,
    ) -> Result<bool> {
        db_run!(self, |c| {
            let n = diesel::update(
                service_users::table
                    .filter(service_users::enterprise_id.eq(enterprise.as_str()))
                    .filter(service_users::username.eq(username)),
            )
            .set(service_users::password_hash.eq(password_hash))
            .execute(c)
            .await?;
            Ok(n > 0)
        })
    }

    async fn delete_user(&self, enterprise: &EnterpriseId, username: &str) -> Result<bool> {
        db_run!(self, |c| {
            let n = diesel::delete(
                service_users::table
                    .filter(service_users::enterprise_id.eq(enterprise.as_str()))
                    .filter(service_users::username.eq(username)),
            )
            .execute(c)
            .await?;
            Ok(n > 0)
        })
    }
}
