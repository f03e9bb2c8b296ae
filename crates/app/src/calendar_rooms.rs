//! The walk that auto-join and calendar push rounds share: an enterprise's endpoints a page
//! at a time, the rooms a round is switched on for, and each calendar type's account opened
//! once for the whole walk.

use super::calendars::{CalendarService, OpenAccount};
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::enums::{CalendarType, MeetingPrivacyMode, Toggle};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::inventory::ReadFailure;
use roomlink_domain::ports::EndpointStore;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

/// Endpoints read per page.
const PAGE: usize = 1000;

/// A room a calendar round looks at.
pub struct CalendarRoom {
    pub id: EndpointId,
    pub name: String,
    pub listener_service_id: Option<String>,
    pub calendar_id: String,
    pub calendar_type: CalendarType,
    /// Whether its meetings' titles may be shown (`calendar::upcoming::as_shown`).
    pub privacy: Option<MeetingPrivacyMode>,
}

/// Which rooms a round is for: the endpoint's toggle of that round.
pub type RoundToggle = fn(&Endpoint) -> Option<&Toggle>;

impl CalendarRoom {
    /// The room when `toggle` is on for it and it has a calendar.
    fn of(endpoint: &Endpoint, toggle: RoundToggle) -> Option<CalendarRoom> {
        if toggle(endpoint) != Some(&Toggle::Enabled) {
            return None;
        }
        let profile = endpoint.profile();
        Some(CalendarRoom {
            id: endpoint.id().clone(),
            name: endpoint.name().to_owned(),
            listener_service_id: profile.listener_service_id().map(|l| l.as_str().to_owned()),
            calendar_id: profile.calendar_id()?.as_str().to_owned(),
            calendar_type: *profile.calendar_type()?,
            privacy: profile.meeting_privacy_mode().copied(),
        })
    }
}

/// One page of a walk.
pub struct RoomPage {
    /// The rooms switched on whose calendar type's account is open, with it.
    pub ready: Vec<(CalendarRoom, Arc<OpenAccount>)>,
    /// Why a calendar type's account cannot be used: once per type and walk, against the
    /// first room of that type. Its other rooms are left out.
    pub unreadable: Vec<(EndpointId, Error)>,
    /// The rooms left out because their type's account cannot be used, with why.
    pub left_out: Vec<(CalendarRoom, ReadFailure)>,
    /// Every room the round is switched on for on this page (also those left out).
    pub selected: Vec<EndpointId>,
}

/// An enterprise's rooms for one round, a page at a time ([`RoomWalk::next_page`]).
pub struct RoomWalk<'a> {
    calendars: &'a CalendarService,
    endpoints: &'a dyn EndpointStore,
    enterprise: &'a EnterpriseId,
    toggle: RoundToggle,
    /// Each type's account, or why it cannot be used this walk.
    accounts: HashMap<CalendarType, std::result::Result<Arc<OpenAccount>, ReadFailure>>,
    after: Option<ListPosition>,
    done: bool,
}

impl<'a> RoomWalk<'a> {
    pub fn new(
        calendars: &'a CalendarService,
        endpoints: &'a dyn EndpointStore,
        enterprise: &'a EnterpriseId,
        toggle: RoundToggle,
    ) -> Self {
        RoomWalk {
            calendars,
            endpoints,
            enterprise,
            toggle,
            accounts: HashMap::new(),
            after: None,
            done: false,
        }
    }

    /// The next page, or `None` after the last one.
    pub async fn next_page(&mut self) -> Result<Option<RoomPage>> {
        if self.done {
            return Ok(None);
        }
        let page = self
            .endpoints
            .endpoint_page(self.enterprise, self.after.take(), PAGE)
            .await?;
        self.after = page.next;
        self.done = self.after.is_none();
        let mut found = RoomPage {
            ready: Vec::new(),
            unreadable: Vec::new(),
            left_out: Vec::new(),
            selected: Vec::new(),
        };
        for endpoint in &page.endpoints {
            let Some(room) = CalendarRoom::of(endpoint, self.toggle) else {
                continue;
            };
            found.selected.push(room.id.clone());
            let account = match self.accounts.entry(room.calendar_type) {
                Entry::Occupied(known) => known.get().clone(),
                Entry::Vacant(vacant) => {
                    let opened = self
                        .calendars
                        .reading_account(self.enterprise, room.calendar_type)
                        .await
                        .map(Arc::new)
                        .map_err(|e| {
                            let why = ReadFailure::of(&e);
                            found.unreadable.push((room.id.clone(), e));
                            why
                        });
                    vacant.insert(opened).clone()
                }
            };
            match account {
                Ok(account) => found.ready.push((room, account)),
                Err(why) => found.left_out.push((room, why)),
            }
        }
        Ok(Some(found))
    }
}
