//! Zero Touch pairing: pairing codes and the PairedStatus lifecycle.
//!
//! | state | trigger | next |
//! |---|---|---|
//! | none | a Zero Touch token is used on an operation taking its pairingCodeId or pairingCodeEndpointId | PairedStatus (creationDate = heartbeatDate = now) |
//! | PairedStatus | the same token is used again | PairedStatus (heartbeatDate = now) |
//! | PairedStatus | the token is deleted | none |
//! | PairedStatus | [`PAIRED_STATUS_TTL_MS`] pass without use | none |
//!
//! A code lives forever when its endpoint's `zeroTouchType` is STATIC or unset, and for
//! [`PairingPolicy::rotation_ms`] when it is ROTATING ([`PairingPolicy::is_fresh`]).
//!
//! Time comes from the `Clock` port, so the boundary is tested exactly.

use crate::endpoint::Endpoint;
use crate::enums::{ClientDeviceType, ZeroTouchType};
use crate::ids::{EndpointId, EnterpriseId, PairingCodeId, TokenId};
use crate::token::AccessToken;
use serde::Serialize;

/// A PairedStatus lives one minute after its last heartbeat.
pub const PAIRED_STATUS_TTL_MS: i64 = 60_000;

/// How pairing codes age.
#[derive(Debug, Clone, Copy)]
pub struct PairingPolicy {
    /// The lifetime of a ROTATING endpoint's code.
    pub rotation_ms: i64,
}

impl Default for PairingPolicy {
    fn default() -> Self {
        PairingPolicy {
            rotation_ms: crate::token::DAY_MS,
        }
    }
}

impl PairingPolicy {
    /// Whether `code` is still the usable code of `endpoint` at `now`.
    pub fn is_fresh(&self, code: &PairingCode, endpoint: &Endpoint, now: i64) -> bool {
        match endpoint.profile().zero_touch_type() {
            Some(ZeroTouchType::Rotating) => now < code.created_at.saturating_add(self.rotation_ms),
            Some(ZeroTouchType::Static) | None => true,
        }
    }
}

/// The current pairing code of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairingCode {
    pub id: PairingCodeId,
    #[serde(skip)]
    pub enterprise_id: EnterpriseId,
    #[serde(skip)]
    pub endpoint_id: EndpointId,
    pub code: String,
    #[serde(skip)]
    pub created_at: i64,
}

/// Who is paired to an endpoint right now, through which token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedStatus {
    pub endpoint_id: EndpointId,
    #[serde(skip)]
    pub enterprise_id: EnterpriseId,
    #[serde(skip)]
    pub token_id: TokenId,
    pub username: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub client_device_type: Option<ClientDeviceType>,
    pub creation_date: i64,
    pub heartbeat_date: i64,
}

impl PairedStatus {
    /// The record after `token` is used at `now`: created on first use, heartbeat afterwards.
    /// `None` for a token without a pairing grant (only Zero Touch tokens pair).
    pub fn on_use(
        existing: Option<PairedStatus>,
        token: &AccessToken,
        now: i64,
    ) -> Option<PairedStatus> {
        let grant = token.pairing()?;
        Some(
            match existing.filter(|s| s.is_live(now) && s.token_id == *token.id()) {
                Some(live) => PairedStatus {
                    heartbeat_date: now,
                    ..live
                },
                None => {
                    let parts = token.parts();
                    PairedStatus {
                        endpoint_id: grant.endpoint_id.clone(),
                        enterprise_id: parts.enterprise_id.clone(),
                        token_id: parts.id.clone(),
                        username: parts.creator.clone(),
                        first_name: parts.first_name.clone(),
                        last_name: parts.last_name.clone(),
                        client_device_type: grant.client_device_type,
                        creation_date: now,
                        heartbeat_date: now,
                    }
                }
            },
        )
    }

    /// Present until one minute has passed since the last heartbeat (at `heartbeat + 60 s`
    /// it is gone).
    pub fn is_live(&self, now: i64) -> bool {
        now < self.expires_at()
    }

    pub fn expires_at(&self) -> i64 {
        self.heartbeat_date + PAIRED_STATUS_TTL_MS
    }
}

/// The parameters that make a Zero Touch call a pairing use (see the table above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairingUse<'a> {
    PairingCodeId(&'a PairingCodeId),
    EndpointId(&'a EndpointId),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::RoleSet;
    use crate::rules::put;
    use crate::secret::Secret;
    use crate::token::{PairingGrant, TokenHash, TokenParts};
    use serde_json::json;

    fn zt_token(id: &str) -> AccessToken {
        AccessToken::new(TokenParts {
            id: TokenId::from_trusted(id.into()),
            hash: TokenHash::of(&Secret::new(id)),
            enterprise_id: EnterpriseId::from_trusted("ent".into()),
            enterprise_name: "acme".into(),
            creation_date: 0,
            expiration_date: 86_400_000,
            roles: RoleSet::pairing_code(),
            client_name: None,
            creator: Some("bob@example.com".into()),
            platform_id: Some(7),
            first_name: Some("Bob".into()),
            last_name: Some("B".into()),
            pairing: Some(PairingGrant {
                pairing_code_id: PairingCodeId::from_trusted("pc".into()),
                endpoint_id: EndpointId::from_trusted("ep".into()),
                client_device_type: Some(ClientDeviceType::IosNative),
            }),
        })
        .unwrap()
    }

    #[test]
    fn first_use_creates_then_heartbeats() {
        let t = zt_token("t1");
        let s = PairedStatus::on_use(None, &t, 1_000).unwrap();
        assert_eq!((s.creation_date, s.heartbeat_date), (1_000, 1_000));
        assert_eq!(s.username.as_deref(), Some("bob@example.com"));
        assert_eq!(s.endpoint_id.as_str(), "ep");
        let s2 = PairedStatus::on_use(Some(s), &t, 30_000).unwrap();
        assert_eq!((s2.creation_date, s2.heartbeat_date), (1_000, 30_000));
    }

    #[test]
    fn sixty_second_boundary() {
        let t = zt_token("t1");
        let s = PairedStatus::on_use(None, &t, 10_000).unwrap();
        assert!(s.is_live(10_000 + 59_999));
        assert!(
            !s.is_live(10_000 + 60_000),
            "gone exactly one minute after the heartbeat"
        );
        // A use after expiry starts a new pairing rather than reviving the old one.
        let again = PairedStatus::on_use(Some(s), &t, 70_000).unwrap();
        assert_eq!(again.creation_date, 70_000);
    }

    #[test]
    fn only_zero_touch_tokens_pair() {
        let mut parts = zt_token("t1").parts().clone();
        parts.roles = RoleSet::read_write();
        parts.pairing = None;
        let full = AccessToken::new(parts).unwrap();
        assert!(PairedStatus::on_use(None, &full, 0).is_none());
    }

    #[test]
    fn wire_shape() {
        let s = PairedStatus::on_use(None, &zt_token("t1"), 5).unwrap();
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["endpointId"], "ep");
        assert_eq!(v["clientDeviceType"], "IOS_NATIVE");
        assert_eq!(v["heartbeatDate"], 5);
        assert!(v.get("tokenId").is_none());
    }

    fn endpoint(zero_touch: Option<&str>) -> Endpoint {
        let mut body = json!({"name": "Room"});
        if let Some(t) = zero_touch {
            body["zeroTouchType"] = json!(t);
        }
        let draft = put::insert(body.as_object().unwrap()).unwrap();
        Endpoint::new(
            EndpointId::from_trusted("e".into()),
            EnterpriseId::from_trusted("x".into()),
            draft.profile,
            None,
        )
        .unwrap()
    }

    fn code(created_at: i64) -> PairingCode {
        PairingCode {
            id: PairingCodeId::from_trusted("p".into()),
            enterprise_id: EnterpriseId::from_trusted("x".into()),
            endpoint_id: EndpointId::from_trusted("e".into()),
            code: "ABCDEFGHJK".into(),
            created_at,
        }
    }

    #[test]
    fn rotating_codes_expire_at_the_interval_static_ones_never() {
        let policy = PairingPolicy { rotation_ms: 1_000 };
        let rotating = endpoint(Some("ROTATING"));
        assert!(policy.is_fresh(&code(5_000), &rotating, 5_999));
        assert!(!policy.is_fresh(&code(5_000), &rotating, 6_000));
        for fixed in [endpoint(Some("STATIC")), endpoint(None)] {
            assert!(policy.is_fresh(&code(0), &fixed, i64::MAX));
        }
        assert_eq!(PairingPolicy::default().rotation_ms, 86_400_000);
    }
}
