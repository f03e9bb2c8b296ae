//! How callers authenticate: the security schemes, the default requirement (a caller's token
//! or Basic credentials) and the operations that differ from it.

use crate::table::Access;
use utoipa::openapi::ComponentsBuilder;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};

/// The document's default: any one of the three schemes.
pub(super) fn caller_security() -> Vec<SecurityRequirement> {
    ["accessToken", "accessTokenQuery", "basicAuth"]
        .map(|name| SecurityRequirement::new(name, Vec::<String>::new()))
        .to_vec()
}

/// An operation's own requirement, when it is not the default.
pub(super) fn security_of(access: Access) -> Option<Vec<SecurityRequirement>> {
    match access {
        Access::Public => Some(Vec::new()),
        Access::Caller(_) => None,
        // Basic credentials, or none at all when `platformaccesstoken` (or `seamaccesstoken`) is
        // in the query.
        Access::TokenCreation => Some(vec![
            SecurityRequirement::new("basicAuth", Vec::<String>::new()),
            SecurityRequirement::default(),
        ]),
        Access::ListenerSecret => Some(vec![SecurityRequirement::new(
            "listenerSecret",
            Vec::<String>::new(),
        )]),
    }
}

pub(super) fn with_schemes(components: ComponentsBuilder) -> ComponentsBuilder {
    components
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
            "listenerSecret",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An outbound listener's shared secret (its connection only).",
                    ))
                    .build(),
            ),
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
        )
}
