//! A scenario that stores every kind of secret, for the "no plaintext at rest" tests.

use crate::support;
use roomlink_domain::access::RoleSet;
use roomlink_domain::audit::audit_for;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::enterprise::Enterprise;
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId, PairingCodeId, TokenId};
use roomlink_domain::listener::{ListenerService, decode_listener};
use roomlink_domain::pairing::PairingCode;
use roomlink_domain::ports::{SecretSealer, Store};
use roomlink_domain::rules::{patch, put};
use roomlink_domain::secret::{Secret, SecretChange};
use roomlink_domain::token::{AccessToken, PairingGrant, TokenHash, TokenParts};
use serde_json::json;

pub const ENDPOINT_PASSWORD: &str = "Plain-Endpoint-Passw0rd";
pub const NEW_ENDPOINT_PASSWORD: &str = "Plain-Changed-Passw0rd";
pub const LISTENER_SECRET: &str = "Plain-Listener-Secret-42";
pub const TOKEN: &str = "0123456789abcdefghijklmnopqrstuv";
pub const ZT_TOKEN: &str = "vutsrqponmlkjihgfedcba9876543210";

/// Every plaintext that must never be stored.
pub fn plaintexts() -> [&'static str; 5] {
    [
        ENDPOINT_PASSWORD,
        NEW_ENDPOINT_PASSWORD,
        LISTENER_SECRET,
        TOKEN,
        ZT_TOKEN,
    ]
}

/// What must be stored (proof that a dump read the tables): the endpoint's name and the
/// token's hash.
pub fn markers() -> [String; 2] {
    [
        "Secret Room".into(),
        TokenHash::of(&Secret::new(TOKEN)).as_str().to_owned(),
    ]
}

/// Writes an enterprise with a listener, an endpoint (password set, then changed), a token
/// and a paired Zero Touch token.
pub async fn store_secrets(store: &dyn Store) {
    let sealer = support::sealer();
    let ent = Enterprise {
        id: EnterpriseId::from_trusted("e0000000000000000000000a".into()),
        name: "secrets".into(),
        endpoint_limit: 10,
        public_key: None,
    };
    store.create_enterprise(&ent).await.unwrap();
    let (profile, _) = decode_listener(
        json!({"name": "HQ", "baseUrl": "http://127.0.0.1:9"})
            .as_object()
            .unwrap(),
    )
    .unwrap();
    let listener = ListenerService {
        id: ListenerServiceId::from_trusted("l0000000000000000000000a".into()),
        enterprise_id: ent.id.clone(),
        profile,
        secret: sealer.seal(&Secret::new(LISTENER_SECRET), None).unwrap(),
    };
    store
        .insert_listener(&listener, &audit_for(&listener))
        .await
        .unwrap();

    let body = json!({
        "name": "Secret Room",
        "listenerServiceId": listener.id.as_str(),
        "password": ENDPOINT_PASSWORD
    });
    let draft = put::insert(body.as_object().unwrap()).unwrap();
    let SecretChange::Set(pw) = draft.password else {
        panic!("no password")
    };
    let ep = Endpoint::new(
        EndpointId::from_trusted("p0000000000000000000000a".into()),
        ent.id.clone(),
        draft.profile,
        Some(sealer.seal(&pw, None).unwrap()),
    )
    .unwrap();
    store.insert_endpoint(&ep, &audit_for(&ep)).await.unwrap();
    store
        .update_endpoint(
            &ent.id,
            ep.id(),
            Box::new(move |cur| {
                let fields = json!({ "password": NEW_ENDPOINT_PASSWORD });
                let d = patch::EndpointPatch::from_json(fields)?.merge_into(&cur)?;
                let SecretChange::Set(pw) = d.password else {
                    panic!("no password")
                };
                Endpoint::new(
                    cur.id().clone(),
                    cur.enterprise_id().clone(),
                    d.profile,
                    Some(support::sealer().seal(&pw, None)?),
                )
            }),
            &audit_for(&ent.id),
        )
        .await
        .unwrap();

    let parts = |id: &str, value: &str| TokenParts {
        id: TokenId::from_trusted(id.into()),
        hash: TokenHash::of(&Secret::new(value)),
        enterprise_id: ent.id.clone(),
        enterprise_name: ent.name.clone(),
        creation_date: 0,
        expiration_date: 1_000_000,
        roles: RoleSet::read_write(),
        client_name: None,
        creator: Some("alice".into()),
        platform_id: None,
        first_name: None,
        last_name: None,
        pairing: None,
    };
    store
        .insert_token(
            &AccessToken::new(parts("t0000000000000000000000a", TOKEN)).unwrap(),
            &audit_for(AccessToken::new(parts("t0000000000000000000000a", TOKEN)).unwrap()),
        )
        .await
        .unwrap();
    let code = PairingCode {
        id: PairingCodeId::from_trusted("c0000000000000000000000a".into()),
        enterprise_id: ent.id.clone(),
        endpoint_id: ep.id().clone(),
        code: "PAIR234567".into(),
        created_at: 0,
    };
    store
        .save_pairing_code(&code, &audit_for(&code))
        .await
        .unwrap();
    let mut zt = parts("t0000000000000000000000b", ZT_TOKEN);
    zt.roles = RoleSet::pairing_code();
    zt.pairing = Some(PairingGrant {
        pairing_code_id: code.id.clone(),
        endpoint_id: ep.id().clone(),
        client_device_type: None,
    });
    let zt = AccessToken::new(zt).unwrap();
    store.insert_token(&zt, &audit_for(&zt)).await.unwrap();
    store.touch_paired(&zt, 10).await.unwrap().unwrap();
}

/// Fails if `dump` contains a plaintext (as text or as hex, the way bytea/blob render), or
/// lacks a marker.
pub fn assert_no_plaintext(what: &str, dump: &[u8]) {
    let contains = |needle: &[u8]| dump.windows(needle.len()).any(|w| w == needle);
    for secret in plaintexts() {
        let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
        for form in [secret.to_owned(), hex.clone(), hex.to_uppercase()] {
            assert!(
                !contains(form.as_bytes()),
                "{what} contains a plaintext secret"
            );
        }
    }
    for marker in markers() {
        assert!(
            contains(marker.as_bytes()),
            "{what} lacks {marker}: not a dump of the data"
        );
    }
}
