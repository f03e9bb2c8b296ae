//! From an active token's introspection response (RFC 7662 §2.2) to a [`PlatformUser`].

use super::config::ClaimMapping;
use roomlink_domain::ports::PlatformUser;
use serde_json::{Map, Value};

/// A claim the configuration names is absent or unusable: an operator misconfiguration.
/// Names the claim and the expected type, never the value.
#[derive(Debug, thiserror::Error)]
pub(super) enum ClaimError {
    #[error("the claim `{claim}` (platform.oauth2.claims.{key}) is missing")]
    Missing { key: &'static str, claim: String },
    #[error("the claim `{claim}` (platform.oauth2.claims.{key}) is not {expected}")]
    WrongType {
        key: &'static str,
        claim: String,
        expected: &'static str,
    },
}

/// The claim called `name`: the top-level member of that exact name, else the dotted path
/// into nested objects. `null` counts as absent.
pub(super) fn lookup<'a>(claims: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    let found = match claims.get(name) {
        Some(value) => Some(value),
        None => {
            let mut parts = name.split('.');
            let first = claims.get(parts.next()?)?;
            parts.try_fold(first, |value, part| value.as_object()?.get(part))
        }
    };
    found.filter(|v| !v.is_null())
}

/// A boolean claim: a JSON bool or the strings "true"/"false" (any case).
pub(super) fn as_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// Maps the claims of an active token. `zero_touch_scope`, when set, also grants Zero Touch
/// if the token's space-separated `scope` contains it.
pub(super) fn to_user(
    claims: &Map<String, Value>,
    mapping: &ClaimMapping,
    zero_touch_scope: Option<&str>,
) -> Result<PlatformUser, ClaimError> {
    let reader = Reader { claims };
    let scope_grants_zero_touch = zero_touch_scope.is_some_and(|wanted| {
        claims
            .get("scope")
            .and_then(Value::as_str)
            .is_some_and(|scope| scope.split_whitespace().any(|s| s == wanted))
    });
    Ok(PlatformUser {
        platform_id: reader.platform_id(&mapping.platform_id)?,
        username: reader.required_string("username", &mapping.username)?,
        enterprise_name: reader.required_string("enterprise", &mapping.enterprise)?,
        enterprise_admin: reader.flag("enterprise_admin", &mapping.enterprise_admin)?,
        first_name: reader.optional_string("first_name", &mapping.first_name)?,
        last_name: reader.optional_string("last_name", &mapping.last_name)?,
        zero_touch: reader.flag("zero_touch", &mapping.zero_touch)? || scope_grants_zero_touch,
    })
}

struct Reader<'a> {
    claims: &'a Map<String, Value>,
}

impl Reader<'_> {
    fn missing(key: &'static str, claim: &str) -> ClaimError {
        ClaimError::Missing {
            key,
            claim: claim.to_owned(),
        }
    }

    fn wrong(key: &'static str, claim: &str, expected: &'static str) -> ClaimError {
        ClaimError::WrongType {
            key,
            claim: claim.to_owned(),
            expected,
        }
    }

    fn platform_id(&self, claim: &str) -> Result<i64, ClaimError> {
        const KEY: &str = "platform_id";
        let value = lookup(self.claims, claim).ok_or_else(|| Self::missing(KEY, claim))?;
        let id = match value {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        id.ok_or_else(|| Self::wrong(KEY, claim, "an integer or a numeric string"))
    }

    /// Present and non-empty: an empty name would identify nobody.
    fn required_string(&self, key: &'static str, claim: &str) -> Result<String, ClaimError> {
        match self.optional_string(key, claim)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(Self::missing(key, claim)),
        }
    }

    fn optional_string(
        &self,
        key: &'static str,
        claim: &str,
    ) -> Result<Option<String>, ClaimError> {
        match lookup(self.claims, claim) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(Self::wrong(key, claim, "a string")),
        }
    }

    /// Absent means false: providers often omit false flags.
    fn flag(&self, key: &'static str, claim: &str) -> Result<bool, ClaimError> {
        match lookup(self.claims, claim) {
            None => Ok(false),
            Some(value) => as_bool(value).ok_or_else(|| Self::wrong(key, claim, "a boolean")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn maps_default_claims() {
        let c = claims(json!({
            "active": true, "platform_id": 7, "username": "a@x", "enterprise": "acme",
            "enterprise_admin": true, "given_name": "A", "zero_touch": "FALSE"
        }));
        let u = to_user(&c, &ClaimMapping::default(), None).unwrap();
        assert_eq!(u.platform_id, 7);
        assert_eq!(u.username, "a@x");
        assert_eq!(u.enterprise_name, "acme");
        assert!(u.enterprise_admin && !u.zero_touch);
        assert_eq!(u.first_name.as_deref(), Some("A"));
        assert_eq!(u.last_name, None);
    }

    #[test]
    fn exact_names_win_over_dotted_paths() {
        let c = claims(json!({
            "https://rl.example/ent": "exact",
            "a": {"b": {"c": "nested"}},
            "a.b": null
        }));
        assert_eq!(lookup(&c, "https://rl.example/ent"), Some(&json!("exact")));
        assert_eq!(lookup(&c, "a.b.c"), Some(&json!("nested")));
        assert_eq!(lookup(&c, "a.b"), None, "null is absent");
        assert_eq!(lookup(&c, "a.x"), None);
    }

    #[test]
    fn zero_touch_by_scope_matches_whole_words_only() {
        let mapping = ClaimMapping::default();
        let base = json!({"platform_id": "1", "username": "u", "enterprise": "e"});
        let mut c = claims(base);
        c.insert("scope".into(), json!("openid zt-extra"));
        assert!(!to_user(&c, &mapping, Some("zt")).unwrap().zero_touch);
        c.insert("scope".into(), json!("openid zt"));
        assert!(to_user(&c, &mapping, Some("zt")).unwrap().zero_touch);
        assert!(!to_user(&c, &mapping, None).unwrap().zero_touch);
    }

    #[test]
    fn bad_claims_are_named_without_their_values() {
        let mapping = ClaimMapping::default();
        let cases = [
            (json!({"username": "u", "enterprise": "e"}), "platform_id"),
            (
                json!({"platform_id": 1.5, "username": "u", "enterprise": "e"}),
                "platform_id",
            ),
            (
                json!({"platform_id": "x1", "username": "u", "enterprise": "e"}),
                "platform_id",
            ),
            (
                json!({"platform_id": 1, "username": "", "enterprise": "e"}),
                "username",
            ),
            (
                json!({"platform_id": 1, "username": "u", "enterprise": 3}),
                "enterprise",
            ),
            (
                json!({"platform_id": 1, "username": "u", "enterprise": "e", "enterprise_admin": "yes-secret"}),
                "enterprise_admin",
            ),
        ];
        for (value, claim) in cases {
            let e = to_user(&claims(value), &mapping, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("`{claim}`")), "{e}");
            assert!(!e.contains("secret") && !e.contains("x1"), "{e}");
        }
    }
}
