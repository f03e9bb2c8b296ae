//! The OpenAPI 3.1 description of the HTTP interface, built from code with utoipa's builders.
//!
//! What can drift is generated: the endpoint schemas come from the domain's field table
//! (`endpoint::Field::ALL` and each field's `shape()`), the enumerations from the domain's value
//! lists, and every error response from the catalog (`ErrorKind`: status, code, name). What is
//! written here is the operation table [`OPERATIONS`]; `tests/openapi.rs` checks it against
//! the route table and `docs/openapi.json` against [`document_json`].

use roomlink_domain::ErrorKind;
use roomlink_domain::access::Role;
use roomlink_domain::endpoint::page::MAX_PAGE_SIZE;
use roomlink_domain::endpoint::value::Shape;
use roomlink_domain::endpoint::value::{FieldValue, HttpUrl};
use roomlink_domain::endpoint::{EmailText, Field, LongText, ShortText};
use roomlink_domain::enums::{ClientDeviceType, Cluster, EndpointCapability, MeetingType};
use roomlink_domain::listener::{SECRET_MAX_CHARS, SECRET_MIN_CHARS};
use roomlink_domain::rules::PASSWORD_MAX_CHARS;
use roomlink_domain::rules::dtmf::MAX_TONES;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{
    AdditionalProperties, AllOfBuilder, AnyOfBuilder, ArrayBuilder, ObjectBuilder, Schema,
    SchemaType, Type,
};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, Paths, Ref, RefOr,
    Required, ResponseBuilder, ResponsesBuilder,
};

/// Where the document is served (no authentication), and the browsable reference.
pub const DOCUMENT_PATH: &str = "/api/openapi.json";
pub const REFERENCE_PATH: &str = "/api/docs/";

/// How an operation authenticates.
#[derive(Clone, Copy, PartialEq)]
enum Auth {
    /// No credentials.
    Public,
    /// An access token (header or query) or Basic credentials.
    Caller,
    /// Token creation: Basic credentials, or a platform token in the query.
    TokenCreation,
}

#[derive(Clone, Copy)]
enum Body {
    None,
    /// A JSON body of this component schema.
    Json(&'static str),
    /// The bulk-load CSV file.
    Csv,
}

#[derive(Clone, Copy)]
enum Success {
    /// 204 without a body.
    NoContent,
    /// 200 with a JSON body of this component schema.
    Json(&'static str),
    /// 200 with a JSON array of this component schema.
    JsonList(&'static str),
    /// 200 with another content type, described in words.
    Other(&'static str),
}

#[derive(Clone, Copy)]
enum Param {
    /// Path `{id}`: what it identifies.
    Id(&'static str),
    /// Path `{token}`.
    Token,
    Query(&'static str),
    MethodOverride,
}

/// One operation: a method on a path of the route table.
struct Op {
    method: HttpMethod,
    path: &'static str,
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    description: &'static str,
    auth: Auth,
    params: &'static [Param],
    body: Body,
    success: Success,
    /// The catalog errors particular to the operation; those of its authentication and body
    /// kind, and those any request can meet, are added by [`errors_of`].
    errors: &'static [ErrorKind],
}

use ErrorKind as E;

/// The errors of a control command: `$extra`, and what it can meet on its way through a
/// listener service to the room system (`docs/listener-protocol.md`).
macro_rules! through_listener {
    ($($extra:expr),*) => {
        &[
            $($extra,)*
            E::NotFound,
            E::EndpointHasNoListenerService,
            E::EncryptionUpdated,
            E::ListenerOffline,
            E::CommandTimedOut,
            E::ForwardsCompatibility,
            E::NoSuchHandler,
            E::UnknownControlProtocol,
            E::ExternalSystemUnreachable,
            E::ExternalSystemTimedOut,
            E::AuthenticationFailed,
            E::IncorrectlyProvisioned,
            E::Unavailable,
            E::BadCommand,
            E::ListenerServiceException,
            E::MessagingException,
        ]
    };
}

const ENDPOINT_ID: Param = Param::Id("The endpoint's id.");
const LISTENER_ID: Param = Param::Id("The listener service's id.");

const INSERT_ENDPOINT: &str = "Creates an endpoint. `name` is required; the service assigns \
    the `id` (a body with an `id` is `Invalid`). Fails with `LimitReached` once the \
    enterprise's endpoint limit is reached.";
const LIST_ENDPOINTS: &str = "Every endpoint of the enterprise, as one JSON array. With \
    `limit` and/or `cursor`, one page in a stable order; the next page's cursor is in the \
    `X-Next-Cursor` and `Link` headers, absent on the last page.";
const BULK_PUT: &str = "Bulk load from CSV: a header row (any endpoint field, any case and \
    order; `id` and `password` included), then one row per endpoint. A blank `id` creates (a \
    password is required), a filled `id` updates (a blank password keeps the stored one). \
    Rows that cannot be applied are skipped; endpoints absent from the file are untouched. The \
    upload is one transaction; the answer is the full list, as `GET /api/endpoints`. At most \
    1 MiB.";
const FAILURES: &str = "The enterprise's latest control failures (at most 1,000), newest first.";

/// The operations, in route-table order. Each path and method here is a route of
/// `routes::configure` and each route is here (`tests/openapi.rs`).
const OPERATIONS: &[Op] = &[
    Op {
        method: HttpMethod::Get,
        path: "/healthz",
        id: "healthz",
        tag: "Operations",
        summary: "Liveness probe",
        description: "The process is up. Needs no database.",
        auth: Auth::Public,
        params: &[],
        body: Body::None,
        success: Success::Json("Health"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/readyz",
        id: "readyz",
        tag: "Operations",
        summary: "Readiness probe",
        description: "The process can serve: its database answers.",
        auth: Auth::Public,
        params: &[],
        body: Body::None,
        success: Success::Json("Health"),
        errors: &[E::StorageUnavailable],
    },
    Op {
        method: HttpMethod::Get,
        path: "/metrics",
        id: "metrics",
        tag: "Operations",
        summary: "Prometheus metrics",
        description: "Request counts and latencies by route pattern, listener command outcomes, \
            rate-limit refusals and database pool use, in the Prometheus text format.",
        auth: Auth::Public,
        params: &[],
        body: Body::None,
        success: Success::Other("text/plain"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: DOCUMENT_PATH,
        id: "openApiDocument",
        tag: "Operations",
        summary: "This OpenAPI document",
        description: "The OpenAPI 3.1 description of this interface. A browsable reference is \
            served at `/api/docs/`.",
        auth: Auth::Public,
        params: &[],
        body: Body::None,
        success: Success::Other("application/json"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/auth/accesstokens",
        id: "auth.createAccessToken",
        tag: "Access tokens",
        summary: "Create an access token",
        description: "From Basic credentials (a service user or a companion-platform user), or \
            from `platformaccesstoken`; with `platformaccesstoken` and `code` (an endpoint's \
            pairing code), a Zero Touch token (ROLE_PAIRINGCODE, at most one day) limited to \
            that endpoint. The token value is shown in this response only.",
        auth: Auth::TokenCreation,
        params: &[
            Param::Query("platformaccesstoken"),
            Param::Query("code"),
            Param::Query("duration"),
            Param::Query("clientName"),
            Param::Query("clientDeviceType"),
        ],
        body: Body::None,
        success: Success::Json("AccessToken"),
        errors: &[E::Invalid],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/auth/accesstokens",
        id: "auth.listAccessTokens",
        tag: "Access tokens",
        summary: "List access tokens",
        description: "The enterprise's unexpired tokens, without their values.",
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::JsonList("AccessToken"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/auth/accesstokens/{token}",
        id: "auth.getAccessToken",
        tag: "Access tokens",
        summary: "Inspect an access token",
        description: "One token of the enterprise, by value or by id, without its value.",
        auth: Auth::Caller,
        params: &[Param::Token],
        body: Body::None,
        success: Success::Json("AccessToken"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Delete,
        path: "/api/auth/accesstokens/{token}",
        id: "auth.deleteAccessToken",
        tag: "Access tokens",
        summary: "Delete an access token",
        description: "Any caller may delete its own token (a Zero Touch token unpairs so); \
            deleting another's needs ROLE_READWRITE.",
        auth: Auth::Caller,
        params: &[Param::Token],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints",
        id: "endpoints.list",
        tag: "Endpoints",
        summary: "List endpoints",
        description: LIST_ENDPOINTS,
        auth: Auth::Caller,
        params: &[Param::Query("limit"), Param::Query("cursor")],
        body: Body::None,
        success: Success::JsonList("Endpoint"),
        errors: &[E::Invalid],
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints",
        id: "endpoints.insert",
        tag: "Endpoints",
        summary: "Create an endpoint",
        description: INSERT_ENDPOINT,
        auth: Auth::Caller,
        params: &[],
        body: Body::Json("EndpointInput"),
        success: Success::Json("Endpoint"),
        errors: &[E::LimitReached, E::DuplicateCalendarId],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/",
        id: "endpoints.listSlash",
        tag: "Endpoints",
        summary: "List endpoints (trailing slash)",
        description: LIST_ENDPOINTS,
        auth: Auth::Caller,
        params: &[Param::Query("limit"), Param::Query("cursor")],
        body: Body::None,
        success: Success::JsonList("Endpoint"),
        errors: &[E::Invalid],
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/",
        id: "endpoints.insertSlash",
        tag: "Endpoints",
        summary: "Create an endpoint (the specification's path)",
        description: INSERT_ENDPOINT,
        auth: Auth::Caller,
        params: &[],
        body: Body::Json("EndpointInput"),
        success: Success::Json("Endpoint"),
        errors: &[E::LimitReached, E::DuplicateCalendarId],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/status",
        id: "endpoints.listStatuses",
        tag: "Control",
        summary: "Status of every endpoint",
        description: "From the status cache, in endpoint order; no listener is called. An \
            endpoint never observed has every flag false and `timestamp` 0.",
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::JsonList("EndpointStatus"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/csv",
        id: "endpoints.exportCsv",
        tag: "Endpoints",
        summary: "Export endpoints as CSV",
        description: "Every endpoint as a CSV attachment that `PUT /api/endpoints/csv` reads \
            back unchanged (passwords blank). Cells a spreadsheet would run as a formula get a \
            leading apostrophe.",
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::Other("text/csv"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Put,
        path: "/api/endpoints/csv",
        id: "endpoints.bulkPut",
        tag: "Endpoints",
        summary: "Bulk load endpoints from CSV",
        description: BULK_PUT,
        auth: Auth::Caller,
        params: &[],
        body: Body::Csv,
        success: Success::JsonList("Endpoint"),
        errors: &[E::Invalid],
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/csv",
        id: "endpoints.bulkPost",
        tag: "Endpoints",
        summary: "Bulk load endpoints from CSV (POST)",
        description: BULK_PUT,
        auth: Auth::Caller,
        params: &[],
        body: Body::Csv,
        success: Success::JsonList("Endpoint"),
        errors: &[E::Invalid],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/{id}",
        id: "endpoints.get",
        tag: "Endpoints",
        summary: "Get an endpoint",
        description: "One endpoint; `password` is always null.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("Endpoint"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Put,
        path: "/api/endpoints/{id}",
        id: "endpoints.update",
        tag: "Endpoints",
        summary: "Replace an endpoint",
        description: "Every field is set to the body's value: omitted or null becomes null, \
            the password included. A body `id` other than the path's is `Unmodifiable`, as is \
            changing the dial style of an ANNEX_O endpoint. With `X-HTTP-Method-Override: \
            PATCH` this is a PATCH (and the body is a PATCH body).",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID, Param::MethodOverride],
        body: Body::Json("EndpointInput"),
        success: Success::Json("Endpoint"),
        errors: &[
            E::NotFound,
            E::Unmodifiable,
            E::MethodNotAllowed,
            E::DuplicateCalendarId,
        ],
    },
    Op {
        method: HttpMethod::Patch,
        path: "/api/endpoints/{id}",
        id: "endpoints.patch",
        tag: "Endpoints",
        summary: "Patch an endpoint",
        description: "Sets the fields named in `modifiedFields` (or in the body itself); the \
            others stay. Answers the whole endpoint.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::Json("EndpointPatch"),
        success: Success::Json("Endpoint"),
        errors: &[E::NotFound, E::Unmodifiable, E::DuplicateCalendarId],
    },
    Op {
        method: HttpMethod::Delete,
        path: "/api/endpoints/{id}",
        id: "endpoints.delete",
        tag: "Endpoints",
        summary: "Delete an endpoint",
        description: "Deletes the endpoint, its pairing code and its status.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/{id}/status",
        id: "endpoints.status",
        tag: "Control",
        summary: "Status of one endpoint",
        description: "The endpoint's last observed state (call, dialing, microphone).",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("EndpointStatus"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/{id}/join",
        id: "endpoints.join",
        tag: "Control",
        summary: "Dial into a meeting",
        description: "The endpoint starts dialing: the meeting `meetingid` (with `passcode`), \
            or the IVR without one.",
        auth: Auth::Caller,
        params: &[
            ENDPOINT_ID,
            Param::Query("meetingid"),
            Param::Query("passcode"),
            Param::Query("cluster"),
            Param::Query("meetingtype"),
        ],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(E::Invalid),
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/{id}/senddtmf",
        id: "endpoints.sendDtmf",
        tag: "Control",
        summary: "Send DTMF tones",
        description: "Sends `dtmfString` (digits, `#` and `*`) to the endpoint's call.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID, Param::Query("dtmfString")],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(E::InvalidDtmf),
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/{id}/hangup",
        id: "endpoints.hangUp",
        tag: "Control",
        summary: "Hang up",
        description: "The endpoint disconnects from any connected meeting.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(),
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/{id}/mutemicrophone",
        id: "endpoints.muteMicrophone",
        tag: "Control",
        summary: "Mute the microphone",
        description: "Answers once the endpoint's microphone is muted.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(),
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/endpoints/{id}/unmutemicrophone",
        id: "endpoints.unmuteMicrophone",
        tag: "Control",
        summary: "Unmute the microphone",
        description: "Answers once the endpoint's microphone is unmuted.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: through_listener!(),
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/{id}/currentpairingcode",
        id: "endpoints.currentPairingCode",
        tag: "Zero Touch",
        summary: "The endpoint's current pairing code",
        description: "Made on first read; kept forever (STATIC or unset `zeroTouchType`) or \
            for the rotation interval (ROTATING).",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("CurrentPairingCode"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/{id}/pairingcode",
        id: "endpoints.pairingCode",
        tag: "Zero Touch",
        summary: "A pairing code with its endpoint",
        description: "`{id}` is a pairing code's id (a Zero Touch token's `pairingCodeId`). \
            Answers the code, its endpoint and the capabilities its listener reports.",
        auth: Auth::Caller,
        params: &[Param::Id("The pairing code's id.")],
        body: Body::None,
        success: Success::Json("PairingCode"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/endpoints/{id}/paired",
        id: "endpoints.paired",
        tag: "Zero Touch",
        summary: "Who is paired to the endpoint",
        description: "The live PairedStatus records: each lasts one minute after the last use \
            of its Zero Touch token.",
        auth: Auth::Caller,
        params: &[ENDPOINT_ID],
        body: Body::None,
        success: Success::JsonList("PairedStatus"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/failures",
        id: "failures.list",
        tag: "Control",
        summary: "Recent control failures",
        description: FAILURES,
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::JsonList("Failure"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/failures/",
        id: "failures.listSlash",
        tag: "Control",
        summary: "Recent control failures (trailing slash)",
        description: FAILURES,
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::JsonList("Failure"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/enterprises/self",
        id: "enterprises.getSelf",
        tag: "Enterprise",
        summary: "The caller's enterprise",
        description: "Its name, endpoint limit and public key.",
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::Json("Enterprise"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Put,
        path: "/api/enterprises/self",
        id: "enterprises.updateSelf",
        tag: "Enterprise",
        summary: "Set the enterprise's public key",
        description: "Endpoint passwords written afterwards are sealed to this X25519 key, so \
            only the enterprise's listeners can read them; null removes it. Other properties \
            are read-only and ignored.",
        auth: Auth::Caller,
        params: &[],
        body: Body::Json("EnterpriseUpdate"),
        success: Success::Json("Enterprise"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/listenerservices",
        id: "listenerServices.list",
        tag: "Listener services",
        summary: "List listener services",
        description: "The enterprise's listener services (never their secrets).",
        auth: Auth::Caller,
        params: &[],
        body: Body::None,
        success: Success::JsonList("ListenerService"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Post,
        path: "/api/listenerservices",
        id: "listenerServices.create",
        tag: "Listener services",
        summary: "Register a listener service",
        description: "Without a `secret`, roomlink generates one and returns it in this \
            response only.",
        auth: Auth::Caller,
        params: &[],
        body: Body::Json("ListenerServiceInput"),
        success: Success::Json("ListenerServiceCreated"),
        errors: &[],
    },
    Op {
        method: HttpMethod::Get,
        path: "/api/listenerservices/{id}",
        id: "listenerServices.get",
        tag: "Listener services",
        summary: "Get a listener service",
        description: "One listener service (never its secret).",
        auth: Auth::Caller,
        params: &[LISTENER_ID],
        body: Body::None,
        success: Success::Json("ListenerService"),
        errors: &[E::NotFound],
    },
    Op {
        method: HttpMethod::Put,
        path: "/api/listenerservices/{id}",
        id: "listenerServices.update",
        tag: "Listener services",
        summary: "Replace a listener service",
        description: "Omitted optional fields become null; an omitted `secret` keeps the \
            stored one. A body `id` other than the path's is `Unmodifiable`.",
        auth: Auth::Caller,
        params: &[LISTENER_ID],
        body: Body::Json("ListenerServiceInput"),
        success: Success::Json("ListenerService"),
        errors: &[E::NotFound, E::Unmodifiable],
    },
    Op {
        method: HttpMethod::Delete,
        path: "/api/listenerservices/{id}",
        id: "listenerServices.delete",
        tag: "Listener services",
        summary: "Delete a listener service",
        description: "Refused (`Invalid`) while endpoints still name it.",
        auth: Auth::Caller,
        params: &[LISTENER_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::NotFound, E::Invalid],
    },
];

/// The catalog errors an operation can answer, by status: its own, plus those of its
/// authentication and body, plus those any request can meet (rate limits, header size, an
/// unexpected failure).
fn errors_of(op: &Op) -> BTreeMap<u16, Vec<ErrorKind>> {
    let mut kinds: Vec<ErrorKind> = op.errors.to_vec();
    match op.auth {
        Auth::Public => {}
        // Token look-ups and password checks read the store.
        Auth::Caller | Auth::TokenCreation => kinds.extend([
            E::NotAuthenticated,
            E::BadCredentialsException,
            E::Forbidden,
            E::StorageUnavailable,
        ]),
    }
    match op.body {
        Body::None => {}
        Body::Json(_) => kinds.extend([
            E::UnsupportedMediaType,
            E::PayloadTooLarge,
            E::JsonParseException,
            E::JsonMappingException,
            E::Invalid,
        ]),
        Body::Csv => kinds.extend([E::UnsupportedMediaType, E::PayloadTooLarge]),
    }
    kinds.extend([
        E::TooManyRequests,
        E::RequestHeaderFieldsTooLarge,
        E::InternalError,
    ]);
    let mut by_status: BTreeMap<u16, Vec<ErrorKind>> = BTreeMap::new();
    for kind in kinds {
        let list = by_status.entry(kind.status()).or_default();
        if !list.contains(&kind) {
            list.push(kind);
        }
    }
    for list in by_status.values_mut() {
        list.sort_by_key(|k| k.name());
    }
    by_status
}

/// The whole document.
pub fn document() -> OpenApi {
    let mut paths = Paths::new();
    let mut error_responses = BTreeMap::new();
    for op in OPERATIONS {
        paths.add_path_operation(
            op.path,
            vec![op.method.clone()],
            operation(op, &mut error_responses),
        );
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("roomlink")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(INTRODUCTION))
                .build(),
        )
        .paths(paths)
        .components(Some(components(error_responses)))
        .security(Some(caller_security()))
        .tags(Some(
            [
                ("Access tokens", "Tokens that authenticate later requests."),
                ("Endpoints", "Provisioning of room systems."),
                (
                    "Control",
                    "Remote control through listener services, and status.",
                ),
                ("Zero Touch", "Pairing companion devices to rooms."),
                (
                    "Listener services",
                    "The services inside a customer's network that reach room systems.",
                ),
                ("Enterprise", "The caller's tenant."),
                ("Operations", "Probes, metrics and this document."),
            ]
            .map(|(name, description)| {
                TagBuilder::new()
                    .name(name)
                    .description(Some(description))
                    .build()
            }),
        ))
        .build()
}

/// The document as pretty JSON with a final newline, as `docs/openapi.json` holds it (and as
/// it is served). The builders keep declaration order, so the text only changes when the
/// interface does.
pub fn document_json() -> String {
    let text = serde_json::to_string_pretty(&document()).unwrap_or_else(|e| {
        // Serializing plain maps and strings cannot fail; say so rather than panic.
        format!("{{\"error\": \"the OpenAPI document could not be serialized: {e}\"}}")
    });
    // utoipa 5 writes a Link's `operationId` in snake case, which no tool reads. The key
    // occurs nowhere else; renamed in the text because a `serde_json::Value` would lose the
    // declaration order.
    let mut text = text.replace("\"operation_id\": ", "\"operationId\": ");
    text.push('\n');
    text
}

const INTRODUCTION: &str = "Provisioning and remote control of video-conferencing room \
systems (endpoints), access tokens and Zero Touch pairing.\n\n\
**Authentication.** An access token in the `X-Access-Token` header or the `accesstoken` query \
parameter, or Basic credentials (slower: a password hash per request). Tokens come from \
`POST /api/auth/accesstokens`.\n\n\
**Errors.** Every failure is an `ErrorBody` whose status, `errorCode` and `errorName` are fixed \
per catalog entry (see the `ErrorBody` schema). Each operation lists, per status, the catalog \
entries it can answer. Any path not described here is `NotFound` (404); a described path with \
another method is `MethodNotAllowed` (405).";

fn caller_security() -> Vec<SecurityRequirement> {
    ["accessToken", "accessTokenQuery", "basicAuth"]
        .map(|name| SecurityRequirement::new(name, Vec::<String>::new()))
        .to_vec()
}

/// One operation. Its error responses are shared components (`error_responses`), one per
/// status and set of catalog entries, so that the many operations answering the same errors
/// refer to one description.
fn operation(
    op: &Op,
    error_responses: &mut BTreeMap<String, utoipa::openapi::Response>,
) -> utoipa::openapi::path::Operation {
    let mut builder = OperationBuilder::new()
        .operation_id(Some(op.id))
        .tag(op.tag)
        .summary(Some(op.summary))
        .description(Some(op.description));
    builder = match op.auth {
        Auth::Public => builder.securities(Some(Vec::new())),
        Auth::Caller => builder,
        // Basic credentials, or none at all when `platformaccesstoken` is in the query.
        Auth::TokenCreation => builder.securities(Some(vec![
            SecurityRequirement::new("basicAuth", Vec::<String>::new()),
            SecurityRequirement::default(),
        ])),
    };
    for param in op.params {
        builder = builder.parameter(parameter(*param));
    }
    match op.body {
        Body::None => {}
        Body::Json(schema) => {
            builder = builder.request_body(Some(
                RequestBodyBuilder::new()
                    .required(Some(Required::True))
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(reference(schema)))
                            .build(),
                    )
                    .build(),
            ));
        }
        Body::Csv => {
            let text = ContentBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .description(Some("CSV text, UTF-8, at most 1 MiB."))
                        .max_length(Some(roomlink_domain::rules::csv::MAX_BYTES)),
                ))
                .example(Some(Value::String(
                    "id,name,ipaddress,port,password\r\n\"\",\"Huddle room\",\"10.1.2.3\",\"22\",\"room-secret\"\r\n"
                        .to_owned(),
                )))
                .build();
            let mut body = RequestBodyBuilder::new().required(Some(Required::True));
            for media in crate::body::CSV_TYPES {
                body = body.content(media, text.clone());
            }
            builder = builder.request_body(Some(body.build()));
        }
    }
    let mut responses = ResponsesBuilder::new();
    responses = match op.success {
        Success::NoContent => {
            responses.response("204", ResponseBuilder::new().description("Done."))
        }
        Success::Json(schema) => {
            let mut response = ResponseBuilder::new()
                .description("OK.")
                .content("application/json", json_content(reference(schema)));
            for (name, link) in links_from(op) {
                response = response.link(name, link);
            }
            responses.response("200", response)
        }
        Success::JsonList(schema) => {
            let mut response = ResponseBuilder::new().description("OK.").content(
                "application/json",
                json_content(ArrayBuilder::new().items(reference(schema)).into()),
            );
            if op.params.iter().any(|p| matches!(p, Param::Query("limit"))) {
                response = response
                    .header(
                        "X-Next-Cursor",
                        HeaderBuilder::new()
                            .schema(string())
                            .description(Some(
                                "The cursor of the next page; absent on the last page.",
                            ))
                            .build(),
                    )
                    .header(
                        "Link",
                        HeaderBuilder::new()
                            .schema(string())
                            .description(Some("`<...>; rel=\"next\"`: the next page's URL."))
                            .build(),
                    );
            }
            responses.response("200", response)
        }
        Success::Other(media) => responses.response(
            "200",
            ResponseBuilder::new().description("OK.").content(
                media,
                ContentBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(
                        if media == "application/json" {
                            Type::Object
                        } else {
                            Type::String
                        },
                    )))
                    .build(),
            ),
        ),
    };
    for (status, kinds) in errors_of(op) {
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        let name = format!("Error{status}_{}", names.join("_"));
        error_responses
            .entry(name.clone())
            .or_insert_with(|| error_response(status, &kinds));
        responses = responses.response(
            status.to_string(),
            RefOr::Ref(Ref::from_response_name(name)),
        );
    }
    builder.responses(responses.build()).build()
}

/// Links from an operation that creates a record to the operations taking its `id`: how
/// clients (and test generators) go on from a created endpoint, listener, token or code.
fn links_from(op: &Op) -> Vec<(&'static str, utoipa::openapi::link::Link)> {
    let (param, takes_id): (&str, fn(&str) -> bool) = match op.id {
        "endpoints.insert" | "endpoints.insertSlash" => ("id", |path| {
            // `{id}/pairingcode` takes a pairing code's id, not the endpoint's.
            path.starts_with("/api/endpoints/{id}") && !path.ends_with("/pairingcode")
        }),
        "listenerServices.create" => ("id", |path| path == "/api/listenerservices/{id}"),
        "auth.createAccessToken" => ("token", |path| path == "/api/auth/accesstokens/{token}"),
        "endpoints.currentPairingCode" => ("id", |path| path == "/api/endpoints/{id}/pairingcode"),
        _ => return Vec::new(),
    };
    OPERATIONS
        .iter()
        .filter(|target| takes_id(target.path))
        .map(|target| {
            let link = utoipa::openapi::link::LinkBuilder::new()
                .operation_id(target.id)
                .parameter(param, "$response.body#/id")
                .build();
            (target.id, link)
        })
        .collect()
}

/// An error response: the `ErrorBody` schema, its `errorName` narrowed to `kinds`.
fn error_response(status: u16, kinds: &[ErrorKind]) -> utoipa::openapi::Response {
    let mut description = String::from("Catalog errors with this status:");
    for kind in kinds {
        description += &format!("\n- `{}` (errorCode {})", kind.name(), kind.code());
    }
    let narrowed = ObjectBuilder::new().property(
        "errorName",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(kinds.iter().map(|k| k.name()))),
    );
    let schema = AllOfBuilder::new()
        .item(reference("ErrorBody"))
        .item(narrowed)
        .build();
    let mut response = ResponseBuilder::new().description(description).content(
        "application/json",
        json_content(Schema::from(schema).into()),
    );
    if status == 401 {
        response = response.header(
            "WWW-Authenticate",
            HeaderBuilder::new()
                .schema(string())
                .description(Some("`Basic realm=\"roomlink\"`"))
                .build(),
        );
    }
    if status == 429 {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(ObjectBuilder::new().schema_type(Type::Integer))
                .description(Some("Seconds until a retry can succeed."))
                .build(),
        );
    }
    response.build()
}

fn json_content(schema: RefOr<Schema>) -> utoipa::openapi::Content {
    ContentBuilder::new().schema(Some(schema)).build()
}

fn reference(schema: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(schema))
}

fn parameter(param: Param) -> utoipa::openapi::path::Parameter {
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
                let (description, schema) = query(name);
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

/// The query parameters the handlers read.
fn query(name: &str) -> (&'static str, RefOr<Schema>) {
    let pattern = |p: &str, max: usize| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(p))
            .max_length(Some(max))
            .into()
    };
    match name {
        "platformaccesstoken" => (
            "A token of the companion meeting platform, instead of Basic credentials.",
            string().into(),
        ),
        "code" => (
            "With `platformaccesstoken`: an endpoint's pairing code, for a Zero Touch token.",
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
            "Answer one page of at most this many endpoints.",
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
        _ => ("", string().into()),
    }
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// A string of one of `values` (or null).
fn enumeration(values: &[&str], nullable: bool) -> ObjectBuilder {
    let mut all: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
    if nullable {
        all.push(Value::Null);
    }
    ObjectBuilder::new()
        .schema_type(type_of(Type::String, nullable))
        .enum_values(Some(all))
}

fn type_of(t: Type, nullable: bool) -> SchemaType {
    if nullable {
        SchemaType::Array(vec![t, Type::Null])
    } else {
        SchemaType::Type(t)
    }
}

/// A property: name, schema, required.
type Prop = (&'static str, RefOr<Schema>, bool);

/// An object with exactly these properties.
fn object(description: &str, props: Vec<Prop>) -> Schema {
    let mut builder = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for (name, schema, required) in props {
        builder = builder.property(name, schema);
        if required {
            builder = builder.required(name);
        }
    }
    builder.into()
}

fn prop(name: &'static str, schema: impl Into<RefOr<Schema>>, required: bool) -> Prop {
    (name, schema.into(), required)
}

fn integer(nullable: bool) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(type_of(Type::Integer, nullable))
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int64,
        )))
}

fn epoch_ms() -> ObjectBuilder {
    integer(false).description(Some("Milliseconds since the Unix epoch."))
}

fn text(nullable: bool) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(type_of(Type::String, nullable))
}

/// Text without control characters.
const NO_CONTROL_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// Free text as the domain checks it: not blank, no control characters.
const TEXT_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// The schema of an endpoint field's values.
fn shape_schema(shape: Shape, nullable: bool) -> Schema {
    let string = || text(nullable);
    let builder = match shape {
        Shape::Text { max_chars } => string()
            .max_length(Some(max_chars))
            .pattern(Some(TEXT_PATTERN)),
        Shape::Address { max_chars } => string()
            .max_length(Some(max_chars))
            .description(Some("An IPv4 or IPv6 address, or a DNS host name.")),
        Shape::HttpUrl { max_chars } => string()
            .max_length(Some(max_chars))
            .pattern(Some(
                "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\u0000-\\u001f\\u007f-\\u009f]+$",
            ))
            .description(Some("An http:// or https:// URL.")),
        Shape::Reference { max_chars } => string()
            .pattern(Some(format!("^[A-Za-z0-9_-]{{1,{max_chars}}}$")))
            .description(Some("The id of another record.")),
        Shape::Enum(values) => enumeration(values, nullable)
            .description(Some("Matched case-insensitively; answered in upper case.")),
        Shape::Integer { min, max } => ObjectBuilder::new()
            .schema_type(type_of(Type::Integer, nullable))
            .minimum(Some(min as f64))
            .maximum(Some(max as f64))
            .description(Some("A numeric string is accepted too.")),
        Shape::Number { min, max } => ObjectBuilder::new()
            .schema_type(type_of(Type::Number, nullable))
            .minimum(Some(min))
            .maximum(Some(max))
            .description(Some("A numeric string is accepted too.")),
        Shape::Geolocation => {
            let coordinate = |bound: f64| {
                ObjectBuilder::new()
                    .schema_type(Type::Number)
                    .minimum(Some(-bound))
                    .maximum(Some(bound))
            };
            ObjectBuilder::new()
                .schema_type(type_of(Type::Object, nullable))
                .property("latitude", coordinate(90.0))
                .property("longitude", coordinate(180.0))
                .required("latitude")
                .required("longitude")
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        }
        Shape::Object { max_bytes } => ObjectBuilder::new()
            .schema_type(type_of(Type::Object, nullable))
            .description(Some(format!(
                "Any JSON object of at most {max_bytes} bytes once serialized."
            ))),
    };
    builder.into()
}

/// The endpoint schemas, from the domain's field table. `Endpoint` is the response;
/// `EndpointInput` the POST/PUT body; `EndpointFields` the PATCH map.
fn endpoint_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let password = || {
        text(true)
            .max_length(Some(PASSWORD_MAX_CHARS))
            .write_only(Some(true))
            .description(Some(
                "Write-only: the room system's password. null or \"\" clears it.",
            ))
    };
    let mut response = vec![prop("id", string(), true)];
    let mut input = Vec::new();
    let mut fields = Vec::new();
    for field in Field::ALL {
        let name = field.json_name();
        // `name` is required: it can be set but never cleared.
        let required = *field == Field::Name;
        response.push(prop(name, shape_schema(field.shape(), !required), true));
        input.push(prop(name, shape_schema(field.shape(), !required), required));
        fields.push(prop(name, shape_schema(field.shape(), !required), false));
    }
    response.push(prop(
        "password",
        ObjectBuilder::new()
            .schema_type(Type::Null)
            .description(Some("Always null: passwords are write-only.")),
        true,
    ));
    input.push(prop("password", password(), false));
    fields.push(prop("password", password(), false));
    let patch = AnyOfBuilder::new()
        .item(reference("EndpointFields"))
        .item(object(
            "The fields, wrapped.",
            vec![prop("modifiedFields", reference("EndpointFields"), true)],
        ))
        .description(Some(
            "A map of field name to new value (`modifiedFields`), bare or wrapped as \
             `{\"modifiedFields\": {...}}`. Fields it does not name are unchanged.",
        ))
        .build();
    vec![
        (
            "Endpoint",
            object(
                "A provisioned room system. Every field is present, null when unset.",
                response,
            )
            .into(),
        ),
        (
            "EndpointInput",
            object(
                "An endpoint to create or the replacement of one (PUT: omitted fields become \
                 null). An `id` is accepted on PUT only, equal to the path's.",
                input,
            )
            .into(),
        ),
        (
            "EndpointFields",
            object("Endpoint fields to change.", fields).into(),
        ),
        ("EndpointPatch", Schema::from(patch).into()),
    ]
}

fn error_body() -> Schema {
    let mut table = String::from(
        "The body of every failure. Status, `errorCode` and `errorName` are fixed per catalog \
         entry:\n\n| errorName | status | errorCode |\n|---|---|---|",
    );
    for kind in ErrorKind::ALL {
        table += &format!(
            "\n| {} | {} | {} |",
            kind.name(),
            kind.status(),
            kind.code()
        );
    }
    object(
        &table,
        vec![
            prop("errorCode", integer(false), true),
            prop(
                "errorName",
                enumeration(
                    &ErrorKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
                    false,
                ),
                true,
            ),
            prop("errorMessage", string(), true),
            prop(
                "errorDetails",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .description(Some("Keys depend on the error (see the catalog).")),
                true,
            ),
        ],
    )
}

fn components(
    error_responses: BTreeMap<String, utoipa::openapi::Response>,
) -> utoipa::openapi::Components {
    let listener_fields = |response: bool| {
        // The value types `listener::decode_listener` reads them with.
        let mut props = vec![
            prop("name", shape_schema(ShortText::SHAPE, false), true),
            prop("baseUrl", shape_schema(HttpUrl::SHAPE, false), true),
            prop("assetId", shape_schema(ShortText::SHAPE, true), response),
            prop("externalId", shape_schema(ShortText::SHAPE, true), response),
            prop("location", shape_schema(LongText::SHAPE, true), response),
            prop(
                "pointOfContact",
                shape_schema(EmailText::SHAPE, true),
                response,
            ),
        ];
        if response {
            props.insert(0, prop("id", string(), true));
        }
        props
    };
    let mut created = listener_fields(true);
    created.push(prop(
        "secret",
        string().description(Some(
            "The generated shared secret: only in the creation response, only when generated.",
        )),
        false,
    ));
    let mut input = listener_fields(false);
    input.push(prop(
        "secret",
        text(true)
            .min_length(Some(SECRET_MIN_CHARS))
            .max_length(Some(SECRET_MAX_CHARS))
            .pattern(Some(NO_CONTROL_PATTERN))
            .write_only(Some(true))
            .description(Some(
                "The shared secret roomlink authenticates to the listener with; omitted: \
                 generated (POST) or kept (PUT).",
            )),
        false,
    ));
    let nullable_text = || text(true);
    let roles = ArrayBuilder::new().items(enumeration(&Role::ALL.map(|r| r.as_str()), false));
    let mut schemas: Vec<(&'static str, RefOr<Schema>)> = vec![
        ("ErrorBody", error_body().into()),
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
                    prop("roles", roles, true),
                    prop("clientName", nullable_text(), true),
                    prop("creator", nullable_text(), true),
                    prop("firstName", nullable_text(), true),
                    prop("lastName", nullable_text(), true),
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
                    prop(
                        "callActive",
                        ObjectBuilder::new().schema_type(Type::Boolean),
                        true,
                    ),
                    prop(
                        "reserved",
                        ObjectBuilder::new().schema_type(Type::Boolean),
                        true,
                    ),
                    prop(
                        "dialing",
                        ObjectBuilder::new().schema_type(Type::Boolean),
                        true,
                    ),
                    prop(
                        "microphoneMuted",
                        ObjectBuilder::new().schema_type(Type::Boolean),
                        true,
                    ),
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
                "A control failure, as the caller got it.",
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
            "Enterprise",
            object(
                "The caller's enterprise.",
                vec![
                    prop("id", string(), true),
                    prop("name", string(), true),
                    prop("endpointLimit", integer(false), true),
                    prop(
                        "publicKey",
                        text(true).description(Some(
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
                    "Only `publicKey` is read; other properties are ignored.",
                ))
                .property(
                    "publicKey",
                    text(true).description(Some(
                        "Base64 of a 32-byte X25519 public key; null removes the key.",
                    )),
                )
                .into(),
        ),
        (
            "ListenerService",
            object(
                "A listener service (never its secret).",
                listener_fields(true),
            )
            .into(),
        ),
        (
            "ListenerServiceCreated",
            object(
                "A listener service just registered, with its generated secret.",
                created,
            )
            .into(),
        ),
        (
            "ListenerServiceInput",
            object(
                "A listener service to register or its replacement. An `id` is accepted on \
                 PUT only, equal to the path's.",
                input,
            )
            .into(),
        ),
    ];
    schemas.extend(endpoint_schemas());
    let mut builder = ComponentsBuilder::new()
        .security_scheme(
            "accessToken",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Access-Token",
                "An access token from POST /api/auth/accesstokens.",
            ))),
        )
        .security_scheme(
            "accessTokenQuery",
            SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::with_description(
                "accesstoken",
                "The same token as a query parameter.",
            ))),
        )
        .security_scheme(
            "basicAuth",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Basic)
                    .description(Some(
                        "A service user's or a companion-platform user's username and password.",
                    ))
                    .build(),
            ),
        );
    for (name, schema) in schemas {
        builder = builder.schema(name, schema);
    }
    for (name, response) in error_responses {
        builder = builder.response(name, response);
    }
    builder.build()
}
