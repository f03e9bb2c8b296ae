//! Meeting detection: from one calendar event, the meeting a room system should dial.
//!
//! Invitations are free text written by several vendors' add-ins, so detection is a handful of
//! small scanners. Operators read the outcome in `GET /meetings`, so every decision is listed
//! here. The result is built through [`JoinRequest::from_params`]: the meeting-id and passcode
//! rules stay in one place.
//!
//! **Where to look**
//! - A cancelled event is [`Detection::Nothing`]. The title is never read.
//! - Sources in order: `conference_uris` (one text), `location`, `description`. The description
//!   is reduced to its words and links (`html::strip_html`; plain text comes out unchanged,
//!   Outlook's `text<https://…>` included). Microsoft Safe Links are unwrapped.
//! - The first source holding a dialable meeting wins. If none does, the first not-dialable
//!   finding (source order, then text order) is reported, else `Nothing`.
//! - Within one source, this platform's meeting beats other vendors' (no interop hop);
//!   otherwise the first one in the text wins.
//!
//! **What counts as a meeting**
//! - Hosts match exactly or as a subdomain, case-insensitively, in links with or without a
//!   scheme. Numbers outside links and labels (dial-in phone numbers, PINs, "Phone Conference
//!   ID", "Video Conference ID") are never read.
//! - This platform: link path `/<id>[/<passcode>]` (the id is the first path segment; the next
//!   segment is a passcode only if it has a digit, so `/webrtc` is a view); else the query
//!   (`meetingid`, `meeting_id`, `meeting`, `id`; `passcode`, `pin`, `pc`); else the fragment read
//!   as a path (`#/…`) or a query. SIP: `<id>[.<passcode>]@<sip domain>` (`*` also separates),
//!   with or without `sip:`. Its links without an id (downloads, dial-in lists) are ignored.
//! - Teams: `/meet/<id>?p=<passcode>` links; `/l/meetup-join/…` links carry no id. Zoom:
//!   `/j|w|s|join|wc/<id>`; its `pwd=` value is an encrypted token and is never used. Webex:
//!   links carry no number (`j.php?MTID=` is a hash). `<id>@<vendor host>` addresses count as
//!   that vendor's links (Webex's `25541234567@acme.webex.com`, Zoom's `…@zoomcrc.com`).
//! - Labels "Meeting ID", "Meeting number", "Access code", "Webinar ID", then an optional
//!   `(…)`, an optional `:`, then 1 to 20 digits in groups split by spaces or dashes (on the
//!   same line, or on the next after a `:`). A labelled id belongs to the nearest known host
//!   mentioned before it in its source, else the first one after it, else the first one of an
//!   earlier source. With no known host anywhere the label is ignored: a bare "Meeting ID" does
//!   not say whose meeting it is.
//!
//! **Passcodes**
//! - "Passcode:" and "Password:" labels (the `:` is required: "password protected" is prose),
//!   also "Participant/Meeting …", but not a moderator's, host's, leader's, chairperson's,
//!   organizer's, presenter's or panelist's. A passcode belongs to the labelled id before it.
//! - A meeting found without a passcode takes one from a label of the same id in any source
//!   (its own first); when its source labels no id at all, from that source's first passcode.
//! - Zoom prefers a numeric passcode (what room systems key in). Webex takes only a numeric one
//!   (`Password: 12345678`, or `(12345678 from phones and video systems)`), never the
//!   alphanumeric "Meeting password", which is for the apps. Others take the first one.
//! - A passcode that is not 1 to 32 letters or digits, or a word like "none", is dropped and the
//!   meeting is dialled without one: the bridge then asks for it and DTMF can answer, which
//!   beats not joining at all.
//!
//! **Not dialable**: Google Meet links; a vendor link without an id ("a Teams link without a
//! meeting ID"); a `sip:` URI at any other domain (join takes meeting ids only). A plain
//! `user@domain` at an unknown domain is an e-mail address and is ignored.
//!
//! Never panics: the scanners cut text only at ASCII bytes (always char boundaries), bound every
//! look-ahead, and stay near-linear on hostile input.

use super::CalendarEvent;
use crate::enums::{MeetingType, shorten};
use crate::rules::join::{JoinParams, JoinRequest};
use html::{normalize, strip_html};
use labels::scan_labels;
use links::scan_hosts;

/// Where the dialled meeting was found, for operators reading GET /meetings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FoundIn {
    Conference,
    Location,
    Description,
}

/// Serialized as the join's parameters with `foundIn` beside them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MeetingToDial {
    #[serde(flatten)]
    pub join: JoinRequest,
    pub found_in: FoundIn,
}

/// What detection concluded about one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detection {
    Dial(MeetingToDial),
    /// a meeting link of a kind rooms cannot dial (e.g. Google Meet), said in words
    NotDialable(String),
    /// nothing that looks like a meeting
    Nothing,
}

/// The configurable part: hosts of this platform's meeting links and the SIP domains, and per
/// other vendor the link hosts. Every list matches a host exactly or as a subdomain (`*.` and
/// a leading `.` are accepted and mean the same). Read from a `[calendar.meetings]` table; an
/// omitted key keeps its built-in value, an unknown key is an error (a typo must not silently
/// disable detection). Each list is an array or one comma-separated string (as an environment
/// variable gives it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeetingRules {
    /// This platform's meeting links (default `bluejeans.com`).
    #[serde(deserialize_with = "host_list")]
    pub hosts: Vec<String>,
    /// This platform's SIP domains, `<id>[.<passcode>]@domain` (default `bjn.vc`, `sip.bjn.vc`).
    #[serde(deserialize_with = "host_list")]
    pub sip_domains: Vec<String>,
    /// Teams links (default `teams.microsoft.com`, `teams.live.com`).
    #[serde(deserialize_with = "host_list")]
    pub teams_hosts: Vec<String>,
    /// Zoom links and SIP domains (default `zoom.us`, `zoomgov.com`, `zoomcrc.com`).
    #[serde(deserialize_with = "host_list")]
    pub zoom_hosts: Vec<String>,
    /// Webex links and SIP domains (default `webex.com`).
    #[serde(deserialize_with = "host_list")]
    pub webex_hosts: Vec<String>,
    /// Google Meet links, which rooms cannot dial (default `meet.google.com`).
    #[serde(deserialize_with = "host_list")]
    pub meet_hosts: Vec<String>,
}

/// A list of hosts: an array of strings, or one string of comma-separated hosts.
fn host_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Hosts {
        List(Vec<String>),
        Text(String),
    }
    Ok(match serde::Deserialize::deserialize(deserializer)? {
        Hosts::List(hosts) => hosts,
        Hosts::Text(text) => text
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_owned)
            .collect(),
    })
}

impl Default for MeetingRules {
    fn default() -> Self {
        let list = |hosts: &[&str]| hosts.iter().map(|h| (*h).to_owned()).collect();
        MeetingRules {
            hosts: list(&["bluejeans.com"]),
            sip_domains: list(&["bjn.vc", "sip.bjn.vc"]),
            teams_hosts: list(&["teams.microsoft.com", "teams.live.com"]),
            zoom_hosts: list(&["zoom.us", "zoomgov.com", "zoomcrc.com"]),
            webex_hosts: list(&["webex.com"]),
            meet_hosts: list(&["meet.google.com"]),
        }
    }
}

/// The meeting `event` asks its room to dial (see the module doc for the rules).
pub fn detect(event: &CalendarEvent, rules: &MeetingRules) -> Detection {
    if event.cancelled {
        return Detection::Nothing;
    }
    let sources = [
        (
            FoundIn::Conference,
            normalize(&event.conference_uris.join("\n")),
        ),
        (
            FoundIn::Location,
            event.location.as_deref().map(normalize).unwrap_or_default(),
        ),
        (
            FoundIn::Description,
            event
                .description
                .as_deref()
                .map(strip_html)
                .unwrap_or_default(),
        ),
    ];
    let scans: Vec<Scan> = sources.iter().map(|(_, text)| scan(text, rules)).collect();
    let mut not_dialable = None;
    for (i, (found_in, _)) in sources.iter().enumerate() {
        if let Some(join) = pick(&scans, i) {
            let found_in = *found_in;
            return Detection::Dial(MeetingToDial { join, found_in });
        }
        if not_dialable.is_none() {
            not_dialable = scans[i].hits.iter().find_map(|(_, hit)| hit.reason());
        }
    }
    not_dialable.map_or(Detection::Nothing, Detection::NotDialable)
}

/// Whose meeting a host belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Platform,
    Teams,
    Zoom,
    Webex,
    Meet,
}

impl Kind {
    fn meeting_type(self) -> Option<MeetingType> {
        match self {
            Kind::Platform => Some(MeetingType::MeetMe),
            Kind::Teams => Some(MeetingType::Teams),
            Kind::Zoom => Some(MeetingType::Zoom),
            Kind::Webex => Some(MeetingType::Webex),
            Kind::Meet => None,
        }
    }
}

/// A link or SIP address found in a text.
#[derive(Debug)]
enum Hit {
    Meeting {
        kind: Kind,
        id: String,
        passcode: Option<String>,
    },
    NoId(Kind),
    ForeignSip(String),
}

impl Hit {
    fn reason(&self) -> Option<String> {
        let words = match self {
            Hit::Meeting { .. } | Hit::NoId(Kind::Platform) => return None,
            Hit::NoId(Kind::Teams) => "a Teams link without a meeting ID",
            Hit::NoId(Kind::Zoom) => "a Zoom link without a meeting ID",
            Hit::NoId(Kind::Webex) => "a Webex link without a meeting number",
            Hit::NoId(Kind::Meet) => "a Google Meet link (rooms cannot dial Google Meet)",
            Hit::ForeignSip(domain) => {
                let domain = shorten(domain);
                return Some(format!(
                    "a SIP address at {domain} (rooms join by meeting ID only)"
                ));
            }
        };
        Some(words.to_owned())
    }
}

/// A passcode label's value: as written (if usable) and its numeric form (if any).
#[derive(Debug)]
struct Passcode {
    value: Option<String>,
    numeric: Option<String>,
}

#[derive(Debug)]
struct IdLabel {
    pos: usize,
    id: String,
    passcodes: Vec<Passcode>,
}

/// What one source's text holds.
#[derive(Debug, Default)]
struct Scan {
    /// Hosts of dialable kinds, in text order: what labelled ids are attributed to.
    mentions: Vec<(usize, Kind)>,
    hits: Vec<(usize, Hit)>,
    ids: Vec<IdLabel>,
    /// Passcode labels before any id label.
    loose: Vec<Passcode>,
}

fn scan(text: &str, rules: &MeetingRules) -> Scan {
    let mut out = Scan::default();
    scan_hosts(text, rules, None, &mut out);
    scan_labels(text, &mut out);
    out
}

/// The meeting source `i` holds, as a join request.
fn pick(scans: &[Scan], i: usize) -> Option<JoinRequest> {
    let scan = &scans[i];
    let from_hits = scan.hits.iter().filter_map(|(pos, hit)| match hit {
        Hit::Meeting { kind, id, passcode } => {
            Some((*pos, *kind, id.as_str(), passcode.as_deref()))
        }
        _ => None,
    });
    let from_labels = scan
        .ids
        .iter()
        .filter_map(|l| Some((l.pos, label_kind(scans, i, l.pos)?, l.id.as_str(), None)));
    let (_, kind, id, passcode) = from_hits
        .chain(from_labels)
        .min_by_key(|(pos, kind, _, _)| (*kind != Kind::Platform, *pos))?;
    let passcode = passcode
        .map(str::to_owned)
        .or_else(|| labelled_passcode(scans, i, kind, id));
    let params = JoinParams {
        meeting_id: Some(id),
        passcode: passcode.as_deref(),
        cluster: None,
        meeting_type: Some(kind.meeting_type()?.as_str()),
    };
    JoinRequest::from_params(&params)
        .or_else(|_| {
            JoinRequest::from_params(&JoinParams {
                passcode: None,
                ..params
            })
        })
        .ok()
}

/// The kind of the host nearest before `pos` in source `i`, else after it, else the first of
/// an earlier source.
fn label_kind(scans: &[Scan], i: usize, pos: usize) -> Option<Kind> {
    let mentions = &scans[i].mentions;
    let k = mentions.partition_point(|(p, _)| *p < pos);
    k.checked_sub(1)
        .and_then(|before| mentions.get(before))
        .or_else(|| mentions.get(k))
        .or_else(|| scans[..i].iter().find_map(|s| s.mentions.first()))
        .map(|(_, kind)| *kind)
}

fn labelled_passcode(scans: &[Scan], i: usize, kind: Kind, id: &str) -> Option<String> {
    let order = std::iter::once(i).chain((0..scans.len()).filter(|j| *j != i));
    let mut found: Vec<&Passcode> = order
        .flat_map(|j| scans[j].ids.iter())
        .filter(|label| label.id == id)
        .flat_map(|label| &label.passcodes)
        .collect();
    if found.is_empty() && scans[i].ids.is_empty() {
        found = scans[i].loose.iter().take(1).collect();
    }
    let numeric = || found.iter().find_map(|p| p.numeric.clone());
    let value = || found.iter().find_map(|p| p.value.clone());
    match kind {
        Kind::Webex => numeric(),
        Kind::Zoom => numeric().or_else(value),
        _ => value(),
    }
}

mod html;
mod labels;
mod links;

#[cfg(test)]
mod tests;
