//! Calendar accounts (set, list, remove) and a room's upcoming meetings, read from its
//! calendar through the account of its calendar type, by way of the instance's
//! [`CalendarMirror`] (the rules of when a calendar is asked again are there).
//!
//! EXCHANGE calendars have no account here: the room's listener reads them (its own Exchange
//! account stays inside the customer's network) and roomlink asks it through the
//! [`ListenerTransport`] (`readcalendar`), with the same mirror rules.

use super::audit::Auditor;
use super::auth::Principal;
use super::control::{Routed, listener_secret, routed};
use crate::calendar_mirror::{
    CalendarMirror, MirrorKey, Mirrored, MirroredRead, in_window, mirror_window,
};
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::calendar::account::{
    AllowedHosts, CalendarAccountRecord, CalendarAccountView, PasswordChange, decode_account,
    readable_type, uses_token_url,
};
use roomlink_domain::calendar::meeting::MeetingRules;
use roomlink_domain::calendar::upcoming::{MeetingWindow, UpcomingMeeting, as_shown, upcoming};
use roomlink_domain::enums::CalendarType;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::{
    CalendarAccount, CalendarAccountStore, CalendarRead, CalendarReader, Clock, CommandTarget,
    EndpointCredential, EndpointStore, ListenerTransport, SecretSealer,
};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Whether calendars of `calendar_type` are read by each room's listener rather than by
/// roomlink with an enterprise account (EXCHANGE: on-premises, inside the customer's network).
pub fn through_listener(calendar_type: CalendarType) -> bool {
    calendar_type == CalendarType::Exchange
}

/// The calendar being read and the room it belongs to.
struct Room<'a> {
    endpoint: &'a EndpointId,
    calendar_id: &'a str,
}

pub struct CalendarService {
    pub accounts: Arc<dyn CalendarAccountStore>,
    pub endpoints: Arc<dyn EndpointStore>,
    pub reader: Arc<dyn CalendarReader>,
    /// EXCHANGE calendars are read by each room's listener (`readcalendar`).
    pub transport: Arc<dyn ListenerTransport>,
    pub sealer: Arc<dyn SecretSealer>,
    pub clock: Arc<dyn Clock>,
    pub audit: Arc<Auditor>,
    pub rules: MeetingRules,
    pub hosts: AllowedHosts,
    pub mirror: CalendarMirror,
}

/// An enterprise's calendars of one type, opened for reading.
pub struct OpenAccount {
    pub enterprise_id: EnterpriseId,
    pub calendar_type: CalendarType,
    /// The account's version (when it was last set): copies read with another are not used.
    pub stamp: i64,
    pub reader: AccountReader,
}

/// Who reads an enterprise's calendars.
pub enum AccountReader {
    /// roomlink, with the enterprise's account (its password opened).
    Roomlink(CalendarAccount),
    /// Each room's listener, with its own account: no enterprise account exists.
    Listener,
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
        let meetings = self
            .read(&account, id, calendar_id.as_str(), window, 0)
            .await?;
        Ok(as_shown(meetings, profile.meeting_privacy_mode()))
    }

    /// The enterprise's account of `calendar_type` as a reader is to use it (its password
    /// opened), or the rooms' listeners for a type they read; `Invalid` when there is no
    /// account or its host is no longer allowed.
    pub async fn reading_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
    ) -> Result<OpenAccount> {
        if through_listener(calendar_type) {
            // No account: each room's listener reads the calendar with its own.
            return Ok(OpenAccount {
                enterprise_id: enterprise.clone(),
                calendar_type,
                stamp: 0,
                reader: AccountReader::Listener,
            });
        }
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
            calendar_type,
            stamp: account.updated_at_ms,
            reader: AccountReader::Roomlink(CalendarAccount {
                calendar_type,
                token_url: account.token_url,
                base_url: account.base_url,
                username: account.username,
                secret,
            }),
        })
    }

    /// The meetings of the calendar `calendar_id` in `window`: from the mirror's copy when it
    /// was confirmed less than `max_age_ms` ago, else read (or confirmed unchanged) now.
    /// `endpoint` is the room whose calendar it is (EXCHANGE: its listener reads it).
    pub async fn read(
        &self,
        account: &OpenAccount,
        endpoint: &EndpointId,
        calendar_id: &str,
        window: MeetingWindow,
        max_age_ms: i64,
    ) -> Result<Vec<UpcomingMeeting>> {
        let room = Room {
            endpoint,
            calendar_id,
        };
        let events = self.events(account, &room, window, max_age_ms).await?;
        Ok(upcoming(events, &self.rules))
    }

    /// The window's events from the calendar system (or the room's listener), with a
    /// change mark when the system has them.
    async fn fetch(
        &self,
        open: &OpenAccount,
        room: &Room<'_>,
        from_ms: i64,
        to_ms: i64,
        since: Option<String>,
    ) -> Result<CalendarRead> {
        if let AccountReader::Roomlink(account) = &open.reader {
            return self
                .reader
                .events_since(account, room.calendar_id, from_ms, to_ms, since)
                .await;
        }
        let target = self
            .listener_target(&open.enterprise_id, room.endpoint)
            .await?;
        let events = self
            .transport
            .read_calendar(
                &target,
                open.calendar_type,
                room.calendar_id,
                from_ms,
                to_ms,
            )
            .await?;
        Ok(CalendarRead::Events { events, mark: None })
    }

    /// Where the room's `readcalendar` goes: its listener, with the listener's secret opened.
    /// No endpoint credential travels (the listener reads the calendar with its own account).
    async fn listener_target(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<CommandTarget> {
        let Routed {
            endpoint, listener, ..
        } = routed(self.endpoints.as_ref(), enterprise, id, "readcalendar").await?;
        let listener_secret = listener_secret(self.sealer.as_ref(), &listener)?;
        Ok(CommandTarget {
            listener_id: listener.id.clone(),
            route: listener.route(),
            listener_secret,
            endpoint,
            credential: EndpointCredential::None,
        })
    }

    async fn events(
        &self,
        open: &OpenAccount,
        room: &Room<'_>,
        window: MeetingWindow,
        max_age_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        let calendar_id = room.calendar_id;
        let now = self.clock.now_ms();
        let mirrored = mirror_window(now);
        if !mirrored.covers(&window) {
            // Further out than rooms look ahead: read as asked, keep nothing.
            let read = self
                .fetch(open, room, window.from_ms, window.to_ms, None)
                .await?;
            return read.into_events(calendar_id);
        }
        let key = MirrorKey {
            enterprise_id: open.enterprise_id.clone(),
            calendar_type: open.calendar_type,
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
            .fetch(open, room, mirrored.from_ms, mirrored.to_ms, since)
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
                let read = self
                    .fetch(open, room, mirrored.from_ms, mirrored.to_ms, None)
                    .await?;
                (read.into_events(calendar_id)?, None)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Policies, Ports, Services};
    use roomlink_domain::cluster::{LocalBus, MockListenerLinks};
    use roomlink_domain::error::ErrorKind;
    use roomlink_domain::ports::{
        MockCalendarReader, MockListenerTransport, MockPasswordHasher, MockPlatformIdentity,
    };
    use roomlink_domain::rules::put::EndpointBody;
    use roomlink_domain::secret::{SealedSecret, Secret};
    use roomlink_domain::system::{ManualClock, RandomIds};
    use roomlink_memory_store::MemoryStore;
    use serde_json::json;

    /// 2027-01-15T10:00:00Z.
    const NOW: i64 = 1_800_007_200_000;

    /// Seals nothing: the "ciphertext" is the text.
    struct PlainSealer;

    impl SecretSealer for PlainSealer {
        fn seal(&self, plaintext: &Secret, _: Option<&str>) -> Result<SealedSecret> {
            Ok(SealedSecret {
                key_id: "plain".into(),
                ciphertext: plaintext.expose().as_bytes().to_vec(),
            })
        }
        fn open(&self, sealed: &SealedSecret) -> Result<Option<Secret>> {
            Ok(Some(Secret::new(
                String::from_utf8_lossy(&sealed.ciphertext).into_owned(),
            )))
        }
        fn current_key_id(&self, _: Option<&str>) -> Result<String> {
            Ok("plain".into())
        }
        fn readable(&self, _: &SealedSecret, _: Option<&str>) -> Result<bool> {
            Ok(true)
        }
    }

    fn object(value: serde_json::Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[tokio::test]
    async fn exchange_rooms_are_read_by_their_listener_not_by_a_calendar_reader() {
        let mut transport = MockListenerTransport::new();
        transport
            .expect_read_calendar()
            .withf(|target, calendar_type, calendar_id, from, to| {
                target.listener_secret.expose() == "a-listener-secret-of-some-length"
                    && target.credential == EndpointCredential::None
                    && *calendar_type == CalendarType::Exchange
                    && calendar_id == "board@corp.example"
                    && from < to
            })
            .times(1)
            .returning(|_, _, _, _, _| {
                Ok(vec![CalendarEvent {
                    uid: "review".into(),
                    title: Some("Review".into()),
                    start_ms: NOW + 3_600_000,
                    end_ms: NOW + 7_200_000,
                    location: Some("https://bluejeans.com/123456789".into()),
                    description: None,
                    conference_uris: Vec::new(),
                    cancelled: false,
                }])
            });
        let ports = Ports {
            store: Arc::new(MemoryStore::new()),
            hasher: Arc::new(MockPasswordHasher::new()),
            sealer: Arc::new(PlainSealer),
            platform: Arc::new(MockPlatformIdentity::new()),
            transport: Arc::new(transport),
            links: Arc::new(MockListenerLinks::new()),
            events: Arc::new(LocalBus::default()),
            clock: Arc::new(ManualClock::at(NOW)),
            ids: Arc::new(RandomIds),
            // No expectations: any read through an account fails the test.
            calendars: Arc::new(MockCalendarReader::new()),
            webhooks: Arc::new(roomlink_domain::ports::MockWebhookSender::new()),
            tickets: Arc::new(roomlink_domain::ports::MockTicketSigner::new()),
        };
        let services = Services::new(ports, Policies::default());
        let acme = services
            .admin
            .create_enterprise("acme", None)
            .await
            .unwrap();
        let admin = Principal::scheduler(acme.id, acme.name, "test");
        let listener = services
            .listeners
            .create(
                &admin,
                &object(json!({"name": "hq", "baseUrl": "http://127.0.0.1:9/",
                    "secret": "a-listener-secret-of-some-length"})),
            )
            .await
            .unwrap();
        let room = services
            .endpoints
            .insert(
                &admin,
                EndpointBody::from_json(&object(
                    json!({"name": "Board", "calendarId": "board@corp.example",
                    "calendarType": "EXCHANGE",
                    "listenerServiceId": listener.listener.id.as_str()}),
                )),
            )
            .await
            .unwrap();
        let meetings = services
            .calendars
            .meetings(&admin, room.id(), None, None)
            .await
            .unwrap();
        assert_eq!(meetings.len(), 1);
        let dial = serde_json::to_value(&meetings[0].dial).unwrap();
        assert_eq!(dial["meetingId"], "123456789", "{dial}");
        // Without a listener there is no one to ask (and the transport is not called again).
        let alone = services
            .endpoints
            .insert(
                &admin,
                EndpointBody::from_json(&object(
                    json!({"name": "Alone", "calendarId": "alone@corp.example",
                    "calendarType": "EXCHANGE"}),
                )),
            )
            .await
            .unwrap();
        let e = services
            .calendars
            .meetings(&admin, alone.id(), None, None)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::EndpointHasNoListenerService);
    }
}
