//! Calendar accounts (set, list, remove) and a room's upcoming meetings, read from its
//! calendar through the account of its calendar type, by way of the instance's
//! [`CalendarMirror`] (the rules of when a calendar is asked again are there).

use super::audit::Auditor;
use super::auth::Principal;
use crate::access::{Operation, Target};
use crate::calendar::CalendarEvent;
use crate::calendar::account::{
    AllowedHosts, CalendarAccountRecord, CalendarAccountView, PasswordChange, decode_account,
    readable_type, uses_token_url,
};
use crate::calendar::meeting::MeetingRules;
use crate::calendar::mirror::{
    CalendarMirror, MirrorKey, Mirrored, MirroredRead, in_window, mirror_window,
};
use crate::calendar::upcoming::{MeetingWindow, UpcomingMeeting, upcoming};
use crate::enums::CalendarType;
use crate::error::{Error, Result};
use crate::ids::{EndpointId, EnterpriseId};
use crate::ports::{
    CalendarAccount, CalendarAccountStore, CalendarRead, CalendarReader, Clock, EndpointStore,
    SecretSealer,
};
use serde_json::{Map, Value};
use std::sync::Arc;

pub struct CalendarService {
    pub accounts: Arc<dyn CalendarAccountStore>,
    pub endpoints: Arc<dyn EndpointStore>,
    pub reader: Arc<dyn CalendarReader>,
    pub sealer: Arc<dyn SecretSealer>,
    pub clock: Arc<dyn Clock>,
    pub audit: Arc<Auditor>,
    pub rules: MeetingRules,
    pub hosts: AllowedHosts,
    pub mirror: CalendarMirror,
}

/// An enterprise's calendar account, opened for reading.
pub struct OpenAccount {
    pub enterprise_id: EnterpriseId,
    /// The account's version (when it was last set): copies read with another are not used.
    pub stamp: i64,
    pub account: CalendarAccount,
}

impl CalendarService {
    pub async fn accounts(&self, principal: &Principal) -> Result<Vec<CalendarAccountView>> {
        principal.authorize(Operation::ListCalendarAccounts, Target::Enterprise)?;
        let accounts = self
            .accounts
            .calendar_accounts(&principal.enterprise_id)
            .await?;
        Ok(accounts.iter().map(CalendarAccountRecord::view).collect())
    }

    /// Sets the enterprise's account of `calendar_type` (the path's text).
    pub async fn put_account(
        &self,
        principal: &Principal,
        calendar_type: &str,
        body: &Map<String, Value>,
    ) -> Result<CalendarAccountView> {
        let audit = self.audit.op(
            principal,
            Operation::PutCalendarAccount,
            Some(calendar_type),
        );
        let result = async {
            principal.authorize(Operation::PutCalendarAccount, Target::Enterprise)?;
            let calendar_type = readable_type(calendar_type)?;
            let input = decode_account(body)?;
            self.hosts.check("baseUrl", &input.base_url)?;
            match (&input.token_url, uses_token_url(calendar_type)) {
                (Some(url), true) => self.hosts.check("tokenUrl", url)?,
                (None, true) => {
                    return Err(Error::invalid(format!(
                        "tokenUrl: is required for {} accounts (where access tokens are asked for)",
                        calendar_type.as_str()
                    )));
                }
                (Some(_), false) => {
                    return Err(Error::invalid(format!(
                        "tokenUrl: {} accounts have none",
                        calendar_type.as_str()
                    )));
                }
                (None, false) => {}
            }
            let enterprise = &principal.enterprise_id;
            let password = match input.password {
                PasswordChange::Keep => self
                    .accounts
                    .calendar_account(enterprise, calendar_type)
                    .await?
                    .and_then(|a| a.password),
                PasswordChange::Clear => None,
                // Always the service key: roomlink itself presents it to the calendar system.
                PasswordChange::Set(secret) => Some(self.sealer.seal(&secret, None)?),
            };
            let account = CalendarAccountRecord {
                enterprise_id: enterprise.clone(),
                calendar_type,
                base_url: input.base_url,
                username: input.username,
                password,
                updated_at_ms: self.clock.now_ms(),
                token_url: input.token_url,
            };
            self.accounts.put_calendar_account(&account, &audit).await?;
            Ok(account.view())
        }
        .await;
        self.audit.settle(audit, result).await
    }

    pub async fn delete_account(&self, principal: &Principal, calendar_type: &str) -> Result<()> {
        let audit = self.audit.op(
            principal,
            Operation::DeleteCalendarAccount,
            Some(calendar_type),
        );
        let result = async {
            principal.authorize(Operation::DeleteCalendarAccount, Target::Enterprise)?;
            let parsed = CalendarType::parse(calendar_type)?;
            let deleted = self
                .accounts
                .delete_calendar_account(&principal.enterprise_id, parsed, &audit)
                .await?;
            if deleted {
                Ok(())
            } else {
                Err(Error::not_found("CalendarAccount", parsed.as_str()))
            }
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// The endpoint's meetings in the window of the query's `from` and `to` (see
    /// [`MeetingWindow::from_query`]), read from its calendar now.
    pub async fn meetings(
        &self,
        principal: &Principal,
        id: &EndpointId,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<Vec<UpcomingMeeting>> {
        principal.authorize(Operation::ListMeetings, Target::Endpoint(id))?;
        let window = MeetingWindow::from_query(from, to, self.clock.now_ms())?;
        let enterprise = &principal.enterprise_id;
        let endpoint = self
            .endpoints
            .endpoint(enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())?;
        let profile = endpoint.profile();
        let calendar_id = profile.calendar_id().ok_or_else(|| {
            Error::invalid(format!("endpoint {id} has no calendarId, so no calendar"))
        })?;
        let calendar_type = profile.calendar_type().copied().ok_or_else(|| {
            Error::invalid(format!(
                "endpoint {id} has a calendarId but no calendarType; set one (CALDAV, ...)"
            ))
        })?;
        let account = self.reading_account(enterprise, calendar_type).await?;
        // Asked now: a kept copy is used only once the calendar system confirms it.
        self.read(&account, calendar_id.as_str(), window, 0).await
    }

    /// The enterprise's account of `calendar_type` as a reader is to use it (its password
    /// opened); `Invalid` when there is none or its host is no longer allowed.
    pub async fn reading_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
    ) -> Result<OpenAccount> {
        let account = self
            .accounts
            .calendar_account(enterprise, calendar_type)
            .await?
            .ok_or_else(|| {
                Error::invalid(format!(
                    "the enterprise has no {} calendar account; PUT /api/calendaraccounts/{} first",
                    calendar_type.as_str(),
                    calendar_type.as_str()
                ))
            })?;
        // Checked again: the allowed hosts may have narrowed since the account was set.
        self.hosts
            .check("the calendar account's baseUrl", &account.base_url)?;
        if let Some(url) = &account.token_url {
            self.hosts.check("the calendar account's tokenUrl", url)?;
        }
        let secret = match &account.password {
            Some(sealed) => Some(self.sealer.open(sealed)?.ok_or_else(|| {
                Error::internal("a calendar account password was sealed to a public key")
            })?),
            None => None,
        };
        Ok(OpenAccount {
            enterprise_id: enterprise.clone(),
            stamp: account.updated_at_ms,
            account: CalendarAccount {
                calendar_type,
                token_url: account.token_url,
                base_url: account.base_url,
                username: account.username,
                secret,
            },
        })
    }

    /// The meetings of the calendar `calendar_id` in `window`: from the mirror's copy when it
    /// was confirmed less than `max_age_ms` ago, else read (or confirmed unchanged) now.
    pub async fn read(
        &self,
        account: &OpenAccount,
        calendar_id: &str,
        window: MeetingWindow,
        max_age_ms: i64,
    ) -> Result<Vec<UpcomingMeeting>> {
        let events = self
            .events(account, calendar_id, window, max_age_ms)
            .await?;
        Ok(upcoming(events, &self.rules))
    }

    async fn events(
        &self,
        open: &OpenAccount,
        calendar_id: &str,
        window: MeetingWindow,
        max_age_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        let now = self.clock.now_ms();
        let mirrored = mirror_window(now);
        if !mirrored.covers(&window) {
            // Further out than rooms look ahead: read as asked, keep nothing.
            return self
                .reader
                .events(&open.account, calendar_id, window.from_ms, window.to_ms)
                .await;
        }
        let key = MirrorKey {
            enterprise_id: open.enterprise_id.clone(),
            calendar_type: open.account.calendar_type,
            calendar_id: calendar_id.to_owned(),
        };
        let since = match self
            .mirror
            .lookup(&key, open.stamp, &mirrored, &window, now, max_age_ms)
        {
            Mirrored::Fresh(events) => return Ok(events),
            Mirrored::Stale { mark } => Some(mark),
            Mirrored::Missing => None,
        };
        let read = self
            .reader
            .events_since(
                &open.account,
                calendar_id,
                mirrored.from_ms,
                mirrored.to_ms,
                since,
            )
            .await?;
        let (events, mark) = match read {
            CalendarRead::Events { events, mark } => (events, mark),
            unchanged => {
                let newer_mark = match unchanged {
                    CalendarRead::Confirmed { mark } => Some(mark),
                    _ => None,
                };
                if let Some(events) = self
                    .mirror
                    .confirm(&key, &window, now, max_age_ms, newer_mark)
                {
                    return Ok(events);
                }
                // The copy went while the calendar system was asked: read it in full.
                let events = self
                    .reader
                    .events(&open.account, calendar_id, mirrored.from_ms, mirrored.to_ms)
                    .await?;
                (events, None)
            }
        };
        let asked = in_window(&events, &window);
        self.mirror.keep(
            key,
            open.stamp,
            mirrored,
            MirroredRead {
                events,
                mark,
                max_age_ms,
            },
            now,
        );
        Ok(asked)
    }
}
