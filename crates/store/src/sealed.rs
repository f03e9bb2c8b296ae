//! SealedSecretStore: the sealed endpoint passwords, listener secrets, calendar-account
//! passwords and webhook signing secrets, for re-sealing
//! after a key rotation.

use crate::DbStore;
use crate::schema::{calendar_accounts, endpoints, listener_services, webhook_subscriptions};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::ports::{SealedKind, SealedSecretStore, StoredSecret};
use roomlink_domain::secret::SealedSecret;

#[async_trait]
impl SealedSecretStore for DbStore {
    async fn sealed_not_under(
        &self,
        kind: SealedKind,
        key_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<StoredSecret>> {
        let after = after.unwrap_or("");
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        db_run!(self, |c| {
            let rows: Vec<(String, String, Vec<u8>)> = match kind {
                SealedKind::EndpointPassword => {
                    let rows: Vec<(String, Option<String>, Option<Vec<u8>>)> = endpoints::table
                        .filter(endpoints::password_key_id.is_not_null())
                        .filter(endpoints::password_key_id.ne(key_id))
                        .filter(endpoints::id.gt(after))
                        .order(endpoints::id)
                        .limit(limit)
                        .select((
                            endpoints::id,
                            endpoints::password_key_id,
                            endpoints::password_ciphertext,
                        ))
                        .load(c)
                        .await?;
                    rows.into_iter()
                        .filter_map(|(id, key, text)| Some((id, key?, text?)))
                        .collect()
                }
                SealedKind::ListenerSecret => {
                    listener_services::table
                        .filter(listener_services::secret_key_id.ne(key_id))
                        .filter(listener_services::id.gt(after))
                        .order(listener_services::id)
                        .limit(limit)
                        .select((
                            listener_services::id,
                            listener_services::secret_key_id,
                            listener_services::secret_ciphertext,
                        ))
                        .load(c)
                        .await?
                }
                SealedKind::CalendarPassword => {
                    let holder = calendar_accounts::enterprise_id
                        .concat("/")
                        .concat(calendar_accounts::calendar_type);
                    let rows: Vec<(String, Option<String>, Option<Vec<u8>>)> =
                        calendar_accounts::table
                            .filter(calendar_accounts::password_key_id.is_not_null())
                            .filter(calendar_accounts::password_key_id.ne(key_id))
                            .filter(holder.gt(after))
                            .order(holder)
                            .limit(limit)
                            .select((
                                holder,
                                calendar_accounts::password_key_id,
                                calendar_accounts::password_ciphertext,
                            ))
                            .load(c)
                            .await?;
                    rows.into_iter()
                        .filter_map(|(id, key, text)| Some((id, key?, text?)))
                        .collect()
                }
                SealedKind::WebhookSecret => {
                    webhook_subscriptions::table
                        .filter(webhook_subscriptions::secret_key_id.ne(key_id))
                        .filter(webhook_subscriptions::id.gt(after))
                        .order(webhook_subscriptions::id)
                        .limit(limit)
                        .select((
                            webhook_subscriptions::id,
                            webhook_subscriptions::secret_key_id,
                            webhook_subscriptions::secret_ciphertext,
                        ))
                        .load(c)
                        .await?
                }
            };
            Ok(rows
                .into_iter()
                .map(|(id, key_id, ciphertext)| StoredSecret {
                    id,
                    sealed: SealedSecret { key_id, ciphertext },
                })
                .collect())
        })
    }

    async fn replace_sealed(
        &self,
        kind: SealedKind,
        id: &str,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> Result<bool> {
        // One conditional UPDATE: a value changed since it was read is left alone.
        db_run!(self, |c| {
            let changed = match kind {
                SealedKind::EndpointPassword => {
                    diesel::update(
                        endpoints::table
                            .filter(endpoints::id.eq(id))
                            .filter(endpoints::password_key_id.eq(&old.key_id))
                            .filter(endpoints::password_ciphertext.eq(&old.ciphertext)),
                    )
                    .set((
                        endpoints::password_key_id.eq(&new.key_id),
                        endpoints::password_ciphertext.eq(&new.ciphertext),
                    ))
                    .execute(c)
                    .await?
                }
                SealedKind::ListenerSecret => {
                    diesel::update(
                        listener_services::table
                            .filter(listener_services::id.eq(id))
                            .filter(listener_services::secret_key_id.eq(&old.key_id))
                            .filter(listener_services::secret_ciphertext.eq(&old.ciphertext)),
                    )
                    .set((
                        listener_services::secret_key_id.eq(&new.key_id),
                        listener_services::secret_ciphertext.eq(&new.ciphertext),
                    ))
                    .execute(c)
                    .await?
                }
                SealedKind::CalendarPassword => {
                    let (enterprise, calendar_type) = id.split_once('/').unwrap_or((id, ""));
                    diesel::update(
                        calendar_accounts::table
                            .find((enterprise, calendar_type))
                            .filter(calendar_accounts::password_key_id.eq(&old.key_id))
                            .filter(calendar_accounts::password_ciphertext.eq(&old.ciphertext)),
                    )
                    .set((
                        calendar_accounts::password_key_id.eq(&new.key_id),
                        calendar_accounts::password_ciphertext.eq(&new.ciphertext),
                    ))
                    .execute(c)
                    .await?
                }
                SealedKind::WebhookSecret => {
                    diesel::update(
                        webhook_subscriptions::table
                            .filter(webhook_subscriptions::id.eq(id))
                            .filter(webhook_subscriptions::secret_key_id.eq(&old.key_id))
                            .filter(webhook_subscriptions::secret_ciphertext.eq(&old.ciphertext)),
                    )
                    .set((
                        webhook_subscriptions::secret_key_id.eq(&new.key_id),
                        webhook_subscriptions::secret_ciphertext.eq(&new.ciphertext),
                    ))
                    .execute(c)
                    .await?
                }
            };
            Ok(changed == 1)
        })
    }
}
