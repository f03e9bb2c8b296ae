//! The fleet's schemas: a room's inventory record (what it says about itself, its
//! peripherals), the rooms' health, and the ticket of their live updates.

use crate::openapi::primitives::{
    boolean, enumeration, epoch_ms, integer, object, prop, reference, string, text,
};
use roomlink_domain::health::{HealthState, REASON_CODES};
use roomlink_domain::inventory::{MAX_ITEMS, PeripheralKind};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};

/// A live-update ticket (`roomlink_domain::live::LiveTicket::encode`): enterprise id, token
/// id, expiry, signature.
pub(crate) const TICKET_PATTERN: &str =
    "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[0-9]+\\.[A-Za-z0-9_~-]+$";

/// A device-reported text: absent when the device did not say.
fn reported() -> ObjectBuilder {
    string().max_length(Some(roomlink_domain::inventory::MAX_TEXT))
}

/// `schema`, or null.
fn or_null(schema: RefOr<Schema>) -> RefOr<Schema> {
    OneOfBuilder::new()
        .item(schema)
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .into()
}

fn list_of(schema: RefOr<Schema>) -> ArrayBuilder {
    ArrayBuilder::new().items(schema).max_items(Some(MAX_ITEMS))
}

pub(super) fn inventory_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let peripheral = object(
        "A device connected to the room system, as the room system sees it.",
        vec![
            prop(
                "kind",
                enumeration(&PeripheralKind::ALL.map(PeripheralKind::as_str), false),
                true,
            ),
            prop("id", reported(), false),
            prop("name", reported(), false),
            prop("model", reported(), false),
            prop("serialNumber", reported(), false),
            prop("softwareVersion", reported(), false),
            prop(
                "connected",
                boolean().description(Some("Whether the room system sees it now.")),
                true,
            ),
        ],
    );
    let address = object(
        "A network address of the room system.",
        vec![
            prop("kind", enumeration(&["ipv4", "ipv6", "mac"], false), true),
            prop("value", reported(), true),
        ],
    );
    let inventory = object(
        "What the room system said about itself. A field it did not report is absent; \
         `notReported` names the fields its driver cannot read from that kind of device.",
        vec![
            prop("vendor", reported(), false),
            prop("product", reported(), false),
            prop("model", reported(), false),
            prop("serialNumber", reported(), false),
            prop("softwareVersion", reported(), false),
            prop(
                "softwareReleaseDate",
                reported().description(Some("As the device gives it (Cisco: `YYYY-MM-DD`).")),
                false,
            ),
            prop("uptimeSeconds", integer(false).minimum(Some(0)), false),
            prop("addresses", list_of(RefOr::T(address)), true),
            prop("peripherals", list_of(RefOr::T(peripheral)), true),
            prop("notReported", list_of(RefOr::T(reported().into())), true),
        ],
    );
    let failure = object(
        "Why the last read failed: the catalog error's name and message.",
        vec![
            prop("errorName", string(), true),
            prop("errorMessage", string(), true),
        ],
    );
    let nullable_ms = || integer(true).description(Some("Milliseconds since the Unix epoch."));
    let counts = || {
        object(
            "How many rooms are in each state.",
            ["ok", "degraded", "offline"]
                .into_iter()
                .map(|s| prop(s, integer(false).minimum(Some(0)), true))
                .collect(),
        )
    };
    let states = HealthState::ALL.map(HealthState::as_str);
    let reason = || {
        object(
            "Why the room is not ok.",
            vec![
                prop("code", enumeration(&REASON_CODES, false), true),
                prop("message", string(), true),
            ],
        )
    };
    let room_health = object(
        "One room's health.",
        vec![
            prop("endpointId", string(), true),
            prop("name", string(), true),
            prop("listenerServiceId", text(true), true),
            prop("state", enumeration(&states, false), true),
            prop(
                "since",
                nullable_ms().description(Some(
                    "The observation that shows the state (the last status of a room that \
                     stopped answering, the inventory read that found a peripheral missing); \
                     null when there is none.",
                )),
                true,
            ),
            prop(
                "reasons",
                ArrayBuilder::new().items(RefOr::T(reason())),
                true,
            ),
        ],
    );
    let listener_counts = object(
        "One listener service's rooms.",
        vec![
            prop("listenerServiceId", string(), true),
            prop("name", string(), true),
            prop(
                "health",
                enumeration(&["online", "offline", "unknown"], false),
                true,
            ),
            prop("counts", RefOr::T(counts()), true),
        ],
    );
    vec![
        (
            "RoomHealthReport",
            object(
                "Every room's health (`GET /api/health/rooms`).",
                vec![
                    prop(
                        "at",
                        epoch_ms().description(Some("When it was computed.")),
                        true,
                    ),
                    prop("counts", RefOr::T(counts()), true),
                    prop(
                        "listeners",
                        ArrayBuilder::new().items(RefOr::T(listener_counts)),
                        true,
                    ),
                    prop(
                        "rooms",
                        ArrayBuilder::new()
                            .items(RefOr::T(room_health))
                            .description(Some(
                                "Offline rooms first, then degraded, then ok; by name within each.",
                            )),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "HealthChange",
            object(
                "One change of a room's health, as the health watch recorded it.",
                vec![
                    prop(
                        "at",
                        epoch_ms().description(Some("When it was recorded.")),
                        true,
                    ),
                    prop("state", enumeration(&states, false), true),
                    prop(
                        "previousState",
                        enumeration(&states, true)
                            .description(Some("`null`: the room was ok, or not seen before.")),
                        true,
                    ),
                    prop(
                        "reasons",
                        ArrayBuilder::new().items(RefOr::T(reason())),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        (
            "LiveTicket",
            object(
                "Opens `GET /api/live/events?ticket=` for a minute (a credential: keep it out of \
                 logs).",
                vec![
                    prop("ticket", string().pattern(Some(TICKET_PATTERN)), true),
                    prop(
                        "expiresAt",
                        epoch_ms().description(Some("Until when it opens a stream.")),
                        true,
                    ),
                ],
            )
            .into(),
        ),
        ("Inventory", inventory.into()),
        (
            "EndpointInventory",
            object(
                "One room's inventory record: the last good read and the last attempt.",
                vec![
                    prop("endpointId", string(), true),
                    prop("listenerServiceId", text(true), true),
                    prop(
                        "readAt",
                        nullable_ms().description(Some(
                            "When `inventory` was read; null while no read succeeded.",
                        )),
                        true,
                    ),
                    prop(
                        "attemptedAt",
                        nullable_ms()
                            .description(Some("When a read was last tried; null while none was.")),
                        true,
                    ),
                    prop("inventory", or_null(reference("Inventory")), true),
                    prop("lastFailure", or_null(RefOr::T(failure)), true),
                ],
            )
            .into(),
        ),
    ]
}
