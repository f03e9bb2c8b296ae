//! Path, query and header parameters: what each means and the values it takes, from the
//! domain's limits and value lists.

use super::primitives::{enumeration, integer, string};
use crate::table::Param;
use roomlink_domain::endpoint::page::MAX_PAGE_SIZE;
use roomlink_domain::enums::{ClientDeviceType, Cluster, MeetingType};
use roomlink_domain::rules::dtmf::MAX_TONES;
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
             Zero Touch token.",
            string().into(),
        ),
        "duration" => (
            "The token's lifetime: a whole number with an optional unit `s` (the default), \
             `m`, `h`, `d` or `w`; 1 minute to 365 days (Zero Touch: at most 1 day). Default: \
             two weeks (Zero Touch: one day).",
            pattern("^[0-9]{1,9}[smhdw]?$", 10),
        ),
        "clientName" => (
            "Recorded on the token: at most 255 printable characters.",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(255))
                .into(),
        ),
        "clientDeviceType" => (
            "Recorded on Zero Touch tokens and their PairedStatus.",
            enumeration(ClientDeviceType::NAMES, false).into(),
        ),
        "limit" => (
            "Answer one page of at most this many items (the audit log: 100 by default).",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(MAX_PAGE_SIZE as f64))
                .into(),
        ),
        "cursor" => (
            "Continue after the page that gave this cursor (`X-Next-Cursor`).",
            string().into(),
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
            "Only entries at or after this time (milliseconds since the epoch).",
            integer(false).minimum(Some(0.0)).into(),
        ),
        "to" => (
            "Only entries at or before this time (milliseconds since the epoch).",
            integer(false).minimum(Some(0.0)).into(),
        ),
        "meetingid" => (
            "The numeric meeting id; omit it to dial the IVR.",
            pattern("^[0-9]{1,20}$", 20),
        ),
        "passcode" => (
            "The meeting's passcode; needs `meetingid`. Omit it for a meeting without one \
             or for the IVR.",
            pattern("^[A-Za-z0-9]{1,32}$", 32),
        ),
        "cluster" => ("Default PROD.", enumeration(Cluster::NAMES, false).into()),
        "meetingtype" => (
            "Needs `meetingid`. Default: guessed from `meetingid`.",
            enumeration(MeetingType::NAMES, false).into(),
        ),
        "dtmfString" => (
            "The tones: digits, `#` and `*`.",
            pattern(&format!("^[0-9#*]{{1,{MAX_TONES}}}$"), MAX_TONES),
        ),
        _ => return None,
    })
}
