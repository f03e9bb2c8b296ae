//! The schemas of the other records: probes, access tokens, statuses, pairing, failures and
//! the enterprise.

use crate::openapi::primitives::{
    anchored, boolean, enumeration, epoch_ms, integer, object, prop, reference, string, text,
};
use roomlink_domain::access::Role;
use roomlink_domain::enums::{ClientDeviceType, EndpointCapability};
use roomlink_domain::usage::UsageGrouping;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Schema, Type};

/// 32 bytes in canonical padded base64: 42 characters, one whose low bits are zero, `=`.
pub(crate) const PUBLIC_KEY: &str = "[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=";

/// Minutes to a tenth.
fn minutes() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Number)
        .minimum(Some(0.0))
        .description(Some("Minutes, to a tenth."))
}

pub(super) fn record_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let nullable_text = || text(true);
    let roles = || ArrayBuilder::new().items(enumeration(&Role::ALL.map(|r| r.as_str()), false));
    vec![
        (
            "Health",
            object(
                "A probe's answer.",
                vec![prop("status", enumeration(&["ok", "ready"], false), true)],
            )
            .into(),
        ),
        (
            "AccessToken",
            object(
                "An access token. Zero Touch tokens carry the pairing properties too.",
                vec![
                    prop(
                        "accessToken",
                        text(true).description(Some(
                            "The value: in the creation response only, null elsewhere.",
                        )),
                        true,
                    ),
                    prop("id", string(), true),
                    prop("enterpriseName", string(), true),
                    prop("creationDate", epoch_ms(), true),
                    prop("expirationDate", epoch_ms(), true),
                    prop("roles", roles(), true),
                    prop("clientName", nullable_text(), true),
                    prop("creator", nullable_text(), true),
                    prop("firstName", nullable_text(), true),
                    prop("lastName", nullable_text(), true),
                    prop(
                        "username",
                        text(true).description(Some(
                            "The predecessor's name for `creator`, kept for its clients: the \
                             service user's or the platform user's username.",
                        )),
                        true,
                    ),
                    prop(
                        "seamId",
                        text(true).description(Some(
                            "The predecessor's id of the enterprise on the meeting platform, \
                             kept for its clients; roomlink does not know it: always null.",
                        )),
                        true,
                    ),
                    prop("platformId", integer(false), false),
                    prop("pairingCodeId", string(), false),
                    prop("pairingCodeEndpointId", string(), false),
                    prop(
                        "clientDeviceType",
                        enumeration(ClientDeviceType::NAMES, true),
                        false,
                    ),
                ],
            )
            .into(),
        ),
        (
            "EndpointStatus",
            object(
                "An endpoint's state as last observed.",
                vec![
                    prop("endpointId", string(), true),
                    prop("callActive", boolean(), true),
                    prop("reserved", boolean(), true),
                    prop("dialing", boolean(), true),
                    prop("microphoneMuted", boolean(), true),
                    prop("lastDialTimestampMillis", integer(true), true),
                    prop(
                        "timestamp",
                        epoch_ms()
                            .description(Some("When it was observed (epoch ms); 0 when never.")),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "CurrentPairingCode",
            object(
                "An endpoint's current pairing code.",
                vec![prop("id", string(), true), prop("code", string(), true)],
            )
            .into(),
        ),
        (
            "PairingCode",
            object(
                "A pairing code, its endpoint and what the endpoint can do.",
                vec![
                    prop("id", string(), true),
                    prop("code", string(), true),
                    prop("endpoint", reference("Endpoint"), true),
                    prop(
                        "endpointCapabilities",
                        ArrayBuilder::new().items(enumeration(EndpointCapability::NAMES, false)),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "PairedStatus",
            object(
                "A user paired to an endpoint through a Zero Touch token.",
                vec![
                    prop("endpointId", string(), true),
                    prop("username", nullable_text(), true),
                    prop("firstName", nullable_text(), true),
                    prop("lastName", nullable_text(), true),
                    prop(
                        "clientDeviceType",
                        enumeration(ClientDeviceType::NAMES, true),
                        true,
                    ),
                    prop("creationDate", epoch_ms(), true),
                    prop("heartbeatDate", epoch_ms(), true),
                ],
            )
            .into(),
        ),
        (
            "Failure",
            object(
                "A control failure, as the caller got it: `subjectClass` ListenerService for a \
                 listener or room system that failed a command or a poll, Endpoint for an \
                 auto-join that failed (`errorDetails.autoJoin` names the meeting).",
                vec![
                    prop("id", string(), true),
                    prop("subjectClass", string(), true),
                    prop("subjectId", string(), true),
                    prop("errorDate", epoch_ms(), true),
                    prop("errorCode", integer(false), true),
                    prop("errorName", string(), true),
                    prop("errorMessage", string(), true),
                    prop(
                        "errorDetails",
                        ObjectBuilder::new().schema_type(Type::Object),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "CsvPlan",
            object(
                "What a CSV upload would do, row by row; nothing is written.",
                vec![
                    prop("created", integer(false), true),
                    prop("updated", integer(false), true),
                    prop("skipped", integer(false), true),
                    prop(
                        "rows",
                        ArrayBuilder::new().items(RefOr::T(object(
                            "One row: `line` of the file (the header is line 1; an endpoint \
                             updated by several rows shows the last), `action`, the endpoint's \
                             `id` (an update, or a skipped row's id cell) and `name`, and why \
                             a row is skipped.",
                            vec![
                                prop("line", integer(false), true),
                                prop(
                                    "action",
                                    enumeration(&["create", "update", "skip"], false),
                                    true,
                                ),
                                prop("id", text(true), true),
                                prop("name", text(true), true),
                                prop("reason", text(true), true),
                            ],
                        ))),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "AuditEntry",
            object(
                "One audited action: who, when, what and how it ended. Never a secret.",
                vec![
                    prop(
                        "id",
                        string().description(Some(
                            "The entry's place in the trail; as `cursor`, continues after it.",
                        )),
                        true,
                    ),
                    prop("at", epoch_ms(), true),
                    prop(
                        "actor",
                        object(
                            "Who acted: a service or platform user by username, a token by id \
                             (with the user who created it), or roomlink's scheduler by job \
                             (`auto-join`).",
                            vec![
                                prop(
                                    "kind",
                                    enumeration(
                                        &["serviceUser", "platformUser", "token", "scheduler"],
                                        false,
                                    ),
                                    true,
                                ),
                                prop("id", string(), true),
                                prop("username", nullable_text(), true),
                                prop("roles", roles(), true),
                            ],
                        ),
                        true,
                    ),
                    prop(
                        "operation",
                        string().description(Some(
                            "An operation id of this document (`endpoints.update`, ...) or \
                             `auth.createAccessToken`.",
                        )),
                        true,
                    ),
                    prop("targetId", nullable_text(), true),
                    prop(
                        "outcome",
                        string().description(Some(
                            "`ok`, or the `errorName` the request was answered with.",
                        )),
                        true,
                    ),
                    prop("detail", nullable_text(), true),
                ],
            )
            .into(),
        ),
        (
            "Usage",
            object(
                "Room usage over a period (`GET /api/analytics/usage`).",
                vec![
                    prop("from", epoch_ms(), true),
                    prop("to", epoch_ms(), true),
                    prop("groupBy", enumeration(&UsageGrouping::NAMES, false), true),
                    prop(
                        "at",
                        epoch_ms().description(Some(
                            "When the figures were summed: a call still going counts up to here.",
                        )),
                        true,
                    ),
                    prop("calls", integer(false).minimum(Some(0)), true),
                    prop("minutesInCall", minutes(), true),
                    prop(
                        "groups",
                        ArrayBuilder::new().items(RefOr::T(object(
                            "One group: rooms by id, days oldest first, hours 0 to 23, weekdays \
                             Monday to Sunday. Groups without a call are left out.",
                            vec![
                                prop(
                                    "key",
                                    string().description(Some(
                                        "The room's endpoint id, the day (`2026-11-30`), the \
                                         hour (`0`-`23`) or the weekday (`monday`-`sunday`).",
                                    )),
                                    true,
                                ),
                                prop("calls", integer(false).minimum(Some(0)), true),
                                prop("minutesInCall", minutes(), true),
                                prop(
                                    "daysUsed",
                                    integer(false).minimum(Some(0)).description(Some(
                                        "Distinct UTC days on which a counted call started.",
                                    )),
                                    true,
                                ),
                            ],
                        ))),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "Enterprise",
            object(
                "The caller's enterprise.",
                vec![
                    prop("id", string(), true),
                    prop("name", string(), true),
                    prop("endpointLimit", integer(false), true),
                    prop(
                        "publicKey",
                        text(true)
                            .pattern(Some(anchored(PUBLIC_KEY, false)))
                            .description(Some(
                                "Base64 of a 32-byte X25519 key endpoint passwords are sealed to.",
                            )),
                        true,
                    ),
                    prop(
                        "password",
                        ObjectBuilder::new().schema_type(Type::Null),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "EnterpriseUpdate",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some(
                    "Only `publicKey` is read; other properties (those of `Enterprise`, so that \
                     a GET can be PUT back) are ignored.",
                ))
                .property(
                    "publicKey",
                    text(true)
                        .pattern(Some(anchored(PUBLIC_KEY, true)))
                        .description(Some(
                            "Base64 (standard alphabet, padded) of a 32-byte X25519 public key. \
                             null, \"\" or omitted removes the key.",
                        )),
                )
                .additional_properties(Some(AdditionalProperties::FreeForm(true)))
                .into(),
        ),
    ]
}
