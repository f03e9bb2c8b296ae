//! EnterpriseStore and UserStore.

use crate::DbStore;
use crate::error::{DbError, is_unique_violation};
use crate::models::{EnterpriseRow, UserRow};
use crate::schema::{enterprises, service_users};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::enterprise::{Enterprise, ServiceUser};
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::{EnterpriseStore, UserStore};
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

    async fn set_public_key(&self, id: &EnterpriseId, public_key: Option<String>) -> Result<bool> {
        db_run!(self, |c| {
            let n = diesel::update(enterprises::table.find(id.as_str()))
                .set(enterprises::public_key.eq(&public_key))
                .execute(c)
                .await?;
            Ok(n > 0)
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
}
