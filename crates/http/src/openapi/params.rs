//! Path, query and header parameters: what each means and the values it takes, from the
//! domain's limits and value lists.

use super::primitives::{NO_CONTROL_PATTERN, digits_in_range, enumeration, integer, string};
use crate::table::Param;
use roomlink_domain::calendar::account::READABLE;
use roomlink_domain::endpoint::page::MAX_PAGE_SIZE;
use roomlink_domain::enums::{CalendarType, ClientDeviceType, Cluster, MeetingType};
use roomlink_domain::rules::dtmf::MAX_TONES;
use roomlink_domain::token::{
    DAY_MS, HOUR_MS, MAX_LIFETIME_MS, MIN_LIFETIME_MS, MINUTE_MS, SECOND_MS,
};
use roomlink_domain::usage::UsageGrouping;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::{RefOr, Required};

pub(super) fn parameter(param: Param) -> Parameter {
    let (name, location, required, description, schema): (_, _, _, String, RefOr<Schema>) =
        match param {
            Param::Id(what) => (
                "id",
                ParameterIn::Path,
                true,
                format!("{what} An id that is malformed or unknown is `NotFound`."),
                string().into(),
            ),
            Param::Token => (
                "token",
                ParameterIn::Path,
                true,
                "A token value or a token id.".to_owned(),
                string().into(),
            ),
            Param::CalendarType => (
                "calendarType",
                ParameterIn::Path,
                true,
                "The calendar system, as the endpoints' `calendarType`: one roomlink reads \
                 itself (CALDAV so far); the other calendar types are `Invalid`."
                    .to_owned(),
                enumeration(&READABLE.map(CalendarType::as_str), false).into(),
            ),
            Param::MethodOverride => (
                "X-HTTP-Method-Override",
                ParameterIn::Header,
                false,
                "`PATCH` makes this request a PATCH; any other value but `PUT` is \
                 `MethodNotAllowed`."
                    .to_owned(),
                enumeration(&["PATCH", "PUT"], false).into(),
            ),
            Param::Query(name) => {
                let (description, schema) = query(name).unwrap_or(("", string().into()));
                (
                    name,
                    ParameterIn::Query,
                    name == "dtmfString",
                    description.to_owned(),
                    schema,
                )
            }
        };
    ParameterBuilder::new()
        .name(name)
        .parameter_in(location)
        .required(if required {
            Required::True
        } else {
            Required::False
        })
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

/// One of `values`, or "": the handlers count an empty value as an omitted one.
fn or_empty(values: &[&str]) -> RefOr<Schema> {
    let mut all = values.to_vec();
    all.push("");
    enumeration(&all, false).into()
}

/// A time bound of the audit log: what an i64 holds, from 0.
fn epoch_bound() -> RefOr<Schema> {
    integer(false)
        .minimum(Some(0))
        .maximum(Some(i64::MAX as isize))
        .into()
}

/// `token::lifetime_ms`: an amount in whole units, each unit with its own bounds (1 minute
/// to 365 days), or "" for the default.
fn duration_pattern() -> String {
    let units = [
        ("[sS]?", SECOND_MS),
        ("[mM]", MINUTE_MS),
        ("[hH]", HOUR_MS),
        ("[dD]", DAY_MS),
        ("[wW]", 7 * DAY_MS),
    ];
    let amounts: Vec<String> = units
        .iter()
        .filter_map(|(unit, ms)| {
            let min = (MIN_LIFETIME_MS + ms - 1) / ms;
            let max = MAX_LIFETIME_MS / ms;
            (min <= max).then(|| format!("{}{unit}", digits_in_range(min as u64, max as u64)))
        })
        .collect();
    format!("^(?:{})?$", amounts.join("|"))
}

/// An entity id ([`roomlink_domain::ids::is_well_formed`]).
const ID_PATTERN: &str = "^[A-Za-z0-9_-]+$";

/// The query parameters the handlers read; `None` for a name not described here (a test
/// checks that the route table names none).
pub(super) fn query(name: &str) -> Option<(&'static str, RefOr<Schema>)> {
    let pattern = |p: &str, max: usize| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(p))
            .max_length(Some(max))
            .into()
    };
    Some(match name {
        "platformaccesstoken" => (
            "A token of the companion meeting platform, instead of Basic credentials.",
            string().into(),
        ),
        "seamaccesstoken" => (
            "The predecessor's name for `platformaccesstoken`, accepted for its clients; both \
             with different values is `Invalid`.",
            string().into(),
        ),
        "code" => (
            "With `platformaccesstoken` (or `seamaccesstoken`): an endpoint's pairing code, for a \
             Zero Touch token. Given empty with a platform token it is `Invalid` (a code lost \
             on the way is not a request for the platform user's own token); Basic \
             credentials ignore it.",
            string().into(),
        ),
        "duration" => (
            "The token's lifetime: a whole number with an optional unit `s` (the default), \
             `m`, `h`, `d` or `w` (any case); 1 minute to 365 days (Zero Touch: at most 1 day). \
             Default (also when empty): two weeks (Zero Touch: one day).",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(duration_pattern()))
                .into(),
        ),
        "clientName" => (
            "Recorded on the token: at most 255 printable characters.",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(255))
                .pattern(Some(NO_CONTROL_PATTERN))
                .into(),
        ),
        "clientDeviceType" => (
            "Recorded on Zero Touch tokens and their PairedStatus; empty counts as omitted.",
            or_empty(ClientDeviceType::NAMES),
        ),
        "limit" => (
            "Answer one page of at most this many items (the audit log: 100 by default).",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(MAX_PAGE_SIZE as f64))
                .into(),
        ),
        "ticket" => (
            "A ticket from `POST /api/live/tickets`, in place of other credentials (for a \
             browser's `EventSource`, which cannot send headers).",
            pattern(super::schemas::TICKET_PATTERN, 512),
        ),
        "lastEventId" => (
            "Where to resume: the `id:` of the last event received, as `Last-Event-ID` sends it \
             (for clients that cannot set that header).",
            pattern("^[0-9a-f]{1,16}\\.[0-9]{1,20}$", 40),
        ),
        "cursor" => (
            "Continue after the page that gave this cursor (`X-Next-Cursor`).",
            // `ListPosition::to_cursor`: a non-negative i64 in lower-case hex.
            pattern("^(?:[0-9a-f]{1,15}|[0-7][0-9a-f]{15})$", 16),
        ),
        "targetId" => (
            "Only entries about this endpoint, listener or token id.",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(256))
                .into(),
        ),
        "actor" => (
            "Only entries by this username or token id (a token's creator matches too).",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(256))
                .into(),
        ),
        "from" => (
            "Milliseconds since the epoch. The audit log: only entries at or after this time. \
             A room's meetings: the window's start (default: now). Analytics: the period's \
             start (default: 30 days before `to`).",
            epoch_bound(),
        ),
        "to" => (
            "Milliseconds since the epoch. The audit log: only entries at or before this time. \
             A room's meetings: the window's end, after `from` and at most 31 days after it \
             (default: a day after `from`). Analytics: the period's end, after `from` and at \
             most 366 days after it (default: now).",
            epoch_bound(),
        ),
        "after" => (
            "The fleet inventory: continue after this endpoint id (the previous page's \
             `X-Next-Cursor`).",
            pattern(ID_PATTERN, roomlink_domain::ids::MAX_CHARS),
        ),
        "include" => (
            "`inventory`: add read-only `inventory.*` columns with what each room reported at \
             its last inventory read.",
            enumeration(&["inventory"], false).into(),
        ),
        "softwareVersion" => (
            "Only rooms whose last read reported exactly this software version.",
            string().into(),
        ),
        "model" => (
            "Only rooms whose last read reported exactly this model (the platform, else the \
             product name).",
            string().into(),
        ),
        "listenerServiceId" => (
            "Only rooms of this listener service.",
            pattern(ID_PATTERN, roomlink_domain::ids::MAX_CHARS),
        ),
        "groupBy" => (
            "What the figures are summed by: `room` (the default), `day`, `hour` (of the day, \
             0-23) or `weekday` (`monday`-`sunday`); times in UTC.",
            enumeration(&UsageGrouping::NAMES, false).into(),
        ),
        "meetingid" => (
            "The numeric meeting id; omit it (or leave it empty) to dial the IVR.",
            pattern("^(?:[0-9]{1,20})?$", 20),
        ),
        "passcode" => (
            "The meeting's passcode; needs `meetingid`. Omit it for a meeting without one \
             or for the IVR.",
            pattern("^(?:[A-Za-z0-9]{1,32})?$", 32),
        ),
        "cluster" => ("Default (also when empty): PROD.", or_empty(Cluster::NAMES)),
        "meetingtype" => (
            "Needs `meetingid`. Default (also when empty): guessed from `meetingid`.",
            or_empty(MeetingType::NAMES),
        ),
        "dtmfString" => (
            "The tones: digits, `#` and `*`.",
            pattern(&format!("^[0-9#*]{{1,{MAX_TONES}}}$"), MAX_TONES),
        ),
        _ => return None,
    })
}
