//! Room calendars: the accounts they are read with, auto-join claims, and the readers.

use crate::audit::AuditEntry;
use crate::calendar::CalendarEvent;
use crate::calendar::account::CalendarAccountRecord;
use crate::calendar::auto_join::{JoinOutcome, Occurrence};
use crate::enums::CalendarType;
use crate::error::Result;
use crate::ids::{EndpointId, EnterpriseId};
use crate::secret::Secret;
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// Where an enterprise's room calendars of one calendar type are read, and as whom.
#[derive(Debug, Clone)]
pub struct CalendarAccount {
    pub calendar_type: CalendarType,
    /// CalDAV: the URL under which each room's calendar collection is `{calendarId}/`.
    /// Microsoft Graph and Google: the API's root (an override, for tests and sovereign clouds).
    pub base_url: String,
    /// CalDAV: the Basic-auth user. Microsoft Graph: the application (client) id. Google: the
    /// service account's email.
    pub username: Option<String>,
    /// Where OAuth access tokens are asked for (Microsoft Graph and Google); unused by CalDAV.
    pub token_url: Option<String>,
    /// CalDAV: the password. Microsoft Graph: the client secret. Google: the service account's
    /// private key (PKCS#8 PEM). Opened only to be sent to, or sign for, the calendar system.
    pub secret: Option<Secret>,
}

/// Calendar accounts, one per enterprise and calendar type.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait CalendarAccountStore: Send + Sync {
    /// The enterprise's accounts, in calendar-type order.
    async fn calendar_accounts(
        &self,
        enterprise: &EnterpriseId,
    ) -> Result<Vec<CalendarAccountRecord>>;
    async fn calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
    ) -> Result<Option<CalendarAccountRecord>>;
    /// Inserts or replaces the account of its enterprise and type, with its audit entry,
    /// atomically.
    async fn put_calendar_account(
        &self,
        account: &CalendarAccountRecord,
        audit: &AuditEntry,
    ) -> Result<()>;
    /// `false` (and no audit entry) if there was none.
    async fn delete_calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
        audit: &AuditEntry,
    ) -> Result<bool>;
}

/// Claims on auto-joins: each occurrence of a meeting is joined by one instance, once.
///
/// A claim is a row keyed by the endpoint and the occurrence. An instance claims it before it
/// sends the join, holding it until `lease_until_ms`, and settles it with the outcome after.
/// A claim whose holder died unsettled can be taken once its lease has lapsed; a settled one
/// never again. See docs/calendars.md, "Auto-join".
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait AutoJoinStore: Send + Sync {
    /// Whether `holder` now holds the claim: `true` when there was none, or an unsettled one
    /// whose lease ended before `now_ms` (then taken over); `false` otherwise. Atomic: of
    /// several instances claiming at once, exactly one gets `true`.
    async fn claim_auto_join(&self, claim: &AutoJoinClaim, now_ms: i64) -> Result<bool>;
    /// Records how the claimed join ended; the claim is then never taken again.
    async fn settle_auto_join(
        &self,
        endpoint: &EndpointId,
        occurrence: &Occurrence,
        outcome: JoinOutcome,
        now_ms: i64,
    ) -> Result<()>;
    /// Deletes claims on occurrences that started before `before_ms`; returns how many.
    async fn purge_auto_joins(&self, before_ms: i64) -> Result<u64>;
}

/// An instance's claim on joining one occurrence of a meeting in one room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoJoinClaim {
    pub enterprise_id: EnterpriseId,
    pub endpoint_id: EndpointId,
    pub occurrence: Occurrence,
    /// The claiming instance (for operators reading the table).
    pub holder: String,
    pub lease_until_ms: i64,
}

/// A calendar system's events, read on behalf of one enterprise.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait CalendarReader: Send + Sync {
    /// The room's events that overlap `[from_ms, to_ms)`, recurring ones expanded into their
    /// occurrences, in start order. `CalendarServerException` (with this calendarId) when the
    /// calendar system cannot be reached, refuses the account or answers something unreadable.
    async fn events(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>>;

    /// [`events`](Self::events), unless the calendar is unchanged since `since` (a mark an
    /// earlier answer of this method gave for the same calendar): then `Unchanged`, at the cost
    /// of one small request. A system without change marks reads in full and gives no mark.
    async fn events_since(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
        since: Option<String>,
    ) -> Result<CalendarRead> {
        let _ = since;
        let events = self.events(account, calendar_id, from_ms, to_ms).await?;
        Ok(CalendarRead::Events { events, mark: None })
    }
}

/// What [`CalendarReader::events_since`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CalendarRead {
    /// The calendar has not changed since the mark given.
    Unchanged,
    /// Not changed either, and `mark` is to be kept instead of the one given: the same state
    /// under a newer token (Microsoft Graph hands out a new delta link with every round).
    Confirmed { mark: String },
    /// The window's events, and the calendar's change mark as it was before they were read
    /// (so a change made during the read shows at the next one), when the system has marks.
    Events {
        events: Vec<CalendarEvent>,
        mark: Option<String>,
    },
}

impl CalendarRead {
    /// The events of a read asked without a mark: only `Events` can answer one, anything
    /// else is the calendar system's fault (`CalendarServerException` naming the calendar).
    pub fn into_events(self, calendar_id: &str) -> Result<Vec<CalendarEvent>> {
        match self {
            CalendarRead::Events { events, .. } => Ok(events),
            CalendarRead::Unchanged | CalendarRead::Confirmed { .. } => {
                Err(crate::error::Error::calendar_server(
                    calendar_id,
                    "the calendar system answered unchanged to a read without a mark",
                ))
            }
        }
    }
}
