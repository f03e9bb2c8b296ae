//! TokenStore. Tokens are found by the SHA-256 of their value; the value is never stored.

use crate::DbStore;
use crate::models::TokenRow;
use crate::schema::{access_tokens, paired_statuses};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::ids::{EnterpriseId, TokenId};
use roomlink_domain::ports::TokenStore;
use roomlink_domain::token::{AccessToken, TokenHash};

#[async_trait]
impl TokenStore for DbStore {
    async fn insert_token(&self, token: &AccessToken, audit: &AuditEntry) -> Result<()> {
        let row = TokenRow::new(token);
        db_tx!(self, |c| {
            diesel::insert_into(access_tokens::table)
                .values(&row)
                .execute(c)
                .await?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn token_by_hash(&self, hash: &TokenHash, now: i64) -> Result<Option<AccessToken>> {
        db_run!(self, |c| {
            let row: Option<TokenRow> = access_tokens::table
                .filter(access_tokens::token_hash.eq(hash.as_str()))
                .filter(access_tokens::expiration_date.gt(now))
                .select(TokenRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(TokenRow::into_domain).transpose()?)
        })
    }

    async fn token_by_id(
        &self,
        enterprise: &EnterpriseId,
        id: &TokenId,
        now: i64,
    ) -> Result<Option<AccessToken>> {
        db_run!(self, |c| {
            let row: Option<TokenRow> = access_tokens::table
                .filter(access_tokens::enterprise_id.eq(enterprise.as_str()))
                .filter(access_tokens::id.eq(id.as_str()))
                .filter(access_tokens::expiration_date.gt(now))
                .select(TokenRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(TokenRow::into_domain).transpose()?)
        })
    }

    async fn list_tokens(&self, enterprise: &EnterpriseId, now: i64) -> Result<Vec<AccessToken>> {
        db_run!(self, |c| {
            let rows: Vec<TokenRow> = access_tokens::table
                .filter(access_tokens::enterprise_id.eq(enterprise.as_str()))
                .filter(access_tokens::expiration_date.gt(now))
                .order(access_tokens::seq)
                .select(TokenRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(TokenRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn delete_token(
        &self,
        enterprise: &EnterpriseId,
        id: &TokenId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let deleted = diesel::delete(
                access_tokens::table
                    .filter(access_tokens::enterprise_id.eq(enterprise.as_str()))
                    .filter(access_tokens::id.eq(id.as_str())),
            )
            .execute(c)
            .await?;
            if deleted > 0 {
                diesel::delete(paired_statuses::table.find(id.as_str()))
                    .execute(c)
                    .await?;
                append_audit!(c, audit)?;
            }
            Ok(deleted > 0)
        })
    }

    async fn purge_expired_tokens(&self, now: i64) -> Result<u64> {
        db_run!(self, |c| {
            let n =
                diesel::delete(access_tokens::table.filter(access_tokens::expiration_date.le(now)))
                    .execute(c)
                    .await?;
            Ok(n as u64)
        })
    }

    async fn delete_user_tokens(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
    ) -> Result<Vec<TokenHash>> {
        db_tx!(self, |c| {
            let gone: Vec<(String, String)> = diesel::delete(
                access_tokens::table
                    .filter(access_tokens::enterprise_id.eq(enterprise.as_str()))
                    .filter(access_tokens::creator.eq(username))
                    .filter(access_tokens::platform_id.is_null()),
            )
            .returning((access_tokens::id, access_tokens::token_hash))
            .get_results(c)
            .await?;
            let (ids, hashes): (Vec<String>, Vec<String>) = gone.into_iter().unzip();
            // Paired statuses have no foreign key (see the migration): removed by token id.
            for chunk in ids.chunks(crate::dialect::IN_CHUNK) {
                diesel::delete(
                    paired_statuses::table.filter(paired_statuses::token_id.eq_any(chunk)),
                )
                .execute(c)
                .await?;
            }
            Ok(hashes.into_iter().map(TokenHash::from_stored).collect())
        })
    }
}
