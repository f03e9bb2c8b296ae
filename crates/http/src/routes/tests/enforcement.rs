//! The table's `access` against what the use cases enforce. A Zero Touch token, paired with
//! an endpoint, pairing code and token other than those a request names, calls every
//! operation that needs a caller: each answer is `Forbidden` naming the domain operation the
//! table names, so the roles the document states for it are the ones enforced.

use crate::routes::TABLE;
use crate::table::{Access, Body, Param};
use crate::{AppState, ServerOptions, configure};
use actix_web::http::StatusCode;
use actix_web::test::{TestRequest, call_service, init_service, read_body_json};
use actix_web::{App, web};
use roomlink_app::{Policies, Ports, Services};
use roomlink_domain::access::RoleSet;
use roomlink_domain::audit::audit_for;
use roomlink_domain::ids::{EndpointId, EnterpriseId, PairingCodeId, TokenId};
use roomlink_domain::ports::{
    Clock, MockListenerTransport, MockPasswordHasher, MockPlatformIdentity, MockSecretSealer,
    TokenStore,
};
use roomlink_domain::secret::Secret;
use roomlink_domain::system::{RandomIds, SystemClock};
use roomlink_domain::token::{AccessToken, PairingGrant, TokenHash, TokenParts};
use roomlink_memory_store::MemoryStore;
use serde_json::Value;
use std::sync::Arc;

const ZERO_TOUCH_TOKEN: &str = "zero-touch-token-value";
/// Another caller's token, in the same enterprise: what `{token}` names.
const OTHER_TOKEN_ID: &str = "other-token";
/// What `{id}` names: outside the Zero Touch token's pairing.
const OTHER_ID: &str = "not-paired";

fn token(id: &str, value: &str, roles: RoleSet, pairing: Option<PairingGrant>) -> AccessToken {
    let now = SystemClock.now_ms();
    AccessToken::new(TokenParts {
        id: TokenId::from_trusted(id.to_owned()),
        hash: TokenHash::of(&Secret::new(value)),
        enterprise_id: EnterpriseId::from_trusted("enterprise".to_owned()),
        enterprise_name: "enterprise".to_owned(),
        creation_date: now,
        expiration_date: now + 3_600_000,
        roles,
        client_name: None,
        creator: None,
        platform_id: None,
        first_name: None,
        last_name: None,
        pairing,
    })
    .expect("a valid token")
}

/// The real use cases on an in-memory store holding the two tokens. The other ports are
/// mocks without expectations: a request that got past authorization to them would fail.
async fn services() -> Services {
    let store = Arc::new(MemoryStore::new());
    let zero_touch = token(
        "zero-touch",
        ZERO_TOUCH_TOKEN,
        RoleSet::pairing_code(),
        Some(PairingGrant {
            pairing_code_id: PairingCodeId::from_trusted("paired-code".to_owned()),
            endpoint_id: EndpointId::from_trusted("paired-endpoint".to_owned()),
            client_device_type: None,
        }),
    );
    let other = token(OTHER_TOKEN_ID, "other-value", RoleSet::read_write(), None);
    for t in [zero_touch, other] {
        store
            .insert_token(&t, &audit_for(&t))
            .await
            .expect("stored");
    }
    Services::new(
        Ports {
            store,
            hasher: Arc::new(MockPasswordHasher::new()),
            sealer: Arc::new(MockSecretSealer::new()),
            platform: Arc::new(MockPlatformIdentity::new()),
            transport: Arc::new(MockListenerTransport::new()),
            links: Arc::new(crate::LinkRegistry::new("test")),
            events: Arc::new(roomlink_domain::cluster::LocalBus::default()),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
            calendars: Arc::new(roomlink_domain::ports::MockCalendarReader::new()),
            webhooks: Arc::new(roomlink_domain::ports::MockWebhookSender::new()),
            tickets: Arc::new(roomlink_domain::ports::MockTicketSigner::new()),
        },
        Policies::default(),
    )
}

#[actix_web::test]
async fn each_caller_operation_is_authorized_as_the_table_says() {
    let state = web::Data::new(AppState::new(
        services().await,
        &ServerOptions::default(),
        Arc::new(crate::LinkRegistry::new("test")),
        Arc::new(crate::LiveHub::new()),
    ));
    let app = init_service(App::new().configure(configure(state))).await;
    for op in TABLE {
        let Access::Caller(expected) = op.access else {
            continue;
        };
        let method = op.method.as_str();
        let path = op
            .path
            .replace("{id}", OTHER_ID)
            .replace("{token}", OTHER_TOKEN_ID);
        // Arguments well-formed enough to reach the use case, which authorizes first.
        let description = op.description();
        let tones = if description.is_some_and(|d| d.params.contains(&Param::Query("dtmfString"))) {
            "?dtmfString=1"
        } else {
            ""
        };
        let mut request = TestRequest::default()
            .method(op.method.actix())
            .uri(&format!("{path}{tones}"))
            .insert_header(("X-Access-Token", ZERO_TOUCH_TOKEN));
        match description.map(|d| d.body) {
            Some(Body::Json(_)) => {
                request = request
                    .insert_header(("Content-Type", "application/json"))
                    .set_payload("{}");
            }
            Some(Body::Csv) => {
                request = request
                    .insert_header(("Content-Type", "text/csv"))
                    .set_payload("id,name\r\n");
            }
            Some(Body::None) | None => {}
        }
        let response = call_service(&app, request.to_request()).await;
        let status = response.status();
        let body: Value = read_body_json(response).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {body}");
        assert_eq!(
            body["errorDetails"]["operation"],
            expected.name(),
            "{method} {path}: the use case authorizes another operation than the table names"
        );
    }
}
