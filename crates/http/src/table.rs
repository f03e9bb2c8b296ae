//! What one route is: a method on a path, its handler, who may call it and how the OpenAPI
//! document describes it. Each area module declares its operations as constants beside their
//! handlers; `routes::TABLE` puts them in order, and both `routes::configure` (the actix
//! resources) and `openapi::document` read that one table.

use actix_web::Route;
use roomlink_domain::ErrorKind;
use roomlink_domain::access;

/// One operation of the interface.
#[derive(Clone, Copy)]
pub(crate) struct Operation {
    pub method: Method,
    /// An actix path pattern; described paths use the same text in the document.
    pub path: &'static str,
    /// Gives the handler to a route that `configure` has already guarded by `method`.
    pub handler: fn(Route) -> Route,
    pub access: Access,
    pub doc: Doc,
}

impl Operation {
    /// The same operation at another path (the trailing-slash spellings clients use), under
    /// its own operation id and summary.
    pub(crate) const fn also_at(
        self,
        path: &'static str,
        id: &'static str,
        summary: &'static str,
    ) -> Operation {
        let doc = match self.doc {
            Doc::Described(description) => Doc::Described(Description {
                id,
                summary,
                ..description
            }),
            Doc::Hidden => Doc::Hidden,
        };
        Operation { path, doc, ..self }
    }

    /// Its description, unless it is hidden.
    pub(crate) fn description(&self) -> Option<&Description> {
        match &self.doc {
            Doc::Described(description) => Some(description),
            Doc::Hidden => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    /// The name clients send, and list in a `MethodNotAllowed`'s `allowed`.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    pub(crate) fn actix(self) -> actix_web::http::Method {
        match self {
            Method::Get => actix_web::http::Method::GET,
            Method::Post => actix_web::http::Method::POST,
            Method::Put => actix_web::http::Method::PUT,
            Method::Patch => actix_web::http::Method::PATCH,
            Method::Delete => actix_web::http::Method::DELETE,
        }
    }
}

/// Who may call an operation. The rule itself is the domain's (`access`), enforced by the use
/// case the handler calls; naming the domain operation here lets the document state its roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// No credentials: probes, metrics, the document and its reference page.
    Public,
    /// An authenticated caller (token or Basic credentials) whose roles the domain checks for
    /// this operation.
    Caller(access::Operation),
    /// Token creation. There is no caller yet, hence no roles to check: the Basic credentials
    /// or the platform token presented are the whole check.
    TokenCreation,
    /// An outbound listener opening its connection, with its own shared secret.
    ListenerSecret,
}

#[derive(Clone, Copy)]
pub(crate) enum Doc {
    Described(Description),
    /// Served but not part of the interface: the reference page and its assets.
    Hidden,
}

/// How the document describes an operation.
#[derive(Clone, Copy)]
pub(crate) struct Description {
    /// The OpenAPI operation id, unique in the table.
    pub id: &'static str,
    pub tag: Tag,
    pub summary: &'static str,
    pub description: &'static str,
    pub params: &'static [Param],
    pub body: Body,
    pub success: Success,
    /// The catalog errors particular to the operation; those of its access and body kind, and
    /// those any request can meet, are added by the document.
    pub errors: &'static [ErrorKind],
}

/// The document's groups of operations, in the order it lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    AccessTokens,
    Endpoints,
    Control,
    ZeroTouch,
    ListenerServices,
    Enterprise,
    Calendars,
    Analytics,
    Fleet,
    Webhooks,
    Templates,
    Operations,
}

impl Tag {
    pub(crate) const ALL: [Tag; 12] = [
        Tag::AccessTokens,
        Tag::Endpoints,
        Tag::Control,
        Tag::ZeroTouch,
        Tag::ListenerServices,
        Tag::Enterprise,
        Tag::Calendars,
        Tag::Analytics,
        Tag::Fleet,
        Tag::Webhooks,
        Tag::Templates,
        Tag::Operations,
    ];

    pub(crate) const fn name(self) -> &'static str {
        match self {
            Tag::AccessTokens => "Access tokens",
            Tag::Endpoints => "Endpoints",
            Tag::Control => "Control",
            Tag::ZeroTouch => "Zero Touch",
            Tag::ListenerServices => "Listener services",
            Tag::Enterprise => "Enterprise",
            Tag::Calendars => "Calendars",
            Tag::Analytics => "Analytics",
            Tag::Fleet => "Fleet",
            Tag::Webhooks => "Webhooks",
            Tag::Templates => "Templates",
            Tag::Operations => "Operations",
        }
    }

    pub(crate) const fn description(self) -> &'static str {
        match self {
            Tag::AccessTokens => "Tokens that authenticate later requests.",
            Tag::Endpoints => "Provisioning of room systems.",
            Tag::Control => "Remote control through listener services, and status.",
            Tag::ZeroTouch => "Pairing companion devices to rooms.",
            Tag::ListenerServices => {
                "The services inside a customer's network that reach room systems."
            }
            Tag::Enterprise => "The caller's tenant.",
            Tag::Calendars => "Room calendars: where they are read, and the meetings in them.",
            Tag::Analytics => "How rooms are used: call sessions and the figures summed from them.",
            Tag::Fleet => {
                "The rooms as a fleet: what each room system says about itself (inventory) and \
                 whether it works (health)."
            }
            Tag::Webhooks => {
                "Events pushed to the enterprise's own tools: rooms going offline or coming \
                 back, calls, failed commands, firmware changes (docs/operations.md \
                 \"Webhooks\")."
            }
            Tag::Templates => {
                "Configuration templates: named sets of vendor-neutral room system settings \
                 (time zone, standby, volume, auto-answer, ...), each value inside its key's \
                 space."
            }
            Tag::Operations => "Probes, metrics and this document.",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// Path `{id}`: what it identifies.
    Id(&'static str),
    /// Path `{token}`.
    Token,
    /// Path `{calendarType}`.
    CalendarType,
    /// A query parameter the handler reads, by name (`openapi::params` describes each).
    Query(&'static str),
    /// The `X-HTTP-Method-Override` header.
    MethodOverride,
}

impl Param {
    /// The `{id}` of the endpoint routes.
    pub(crate) const ENDPOINT_ID: Param = Param::Id("The endpoint's id.");
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    None,
    /// A JSON body of this component schema.
    Json(&'static str),
    /// The bulk-load CSV file.
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Success {
    /// 204 without a body.
    NoContent,
    /// 200 with a JSON body of this component schema.
    Json(&'static str),
    /// 201 with a JSON body of this component schema and `Location`, the new record's URL.
    Created(&'static str),
    /// 202 with a JSON body of this component schema and `Location`, the started job's URL.
    Accepted(&'static str),
    /// 200 with a JSON array of this component schema.
    JsonList(&'static str),
    /// 200 with another content type.
    Other(&'static str),
    /// 101: the connection becomes a WebSocket.
    Upgrade,
}
