//! Where a delivery may go: the domain's rule (`TargetRule`) applied to the host as the HTTP
//! client will read it, and to every address a name resolves to.

use reqwest::Url;
use roomlink_domain::webhook::target::{TargetRule, parse_url};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// A target's host as the HTTP client reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// Connected to as it is: the client resolves nothing, so the rule applies here.
    Literal(IpAddr),
    /// Resolved when connecting (by [`crate::resolver::GuardedResolver`]).
    Name(String),
}

/// A subscription URL checked against the domain's format rules, and parsed as the client
/// will parse it. The host comes from the client's parse, not the domain's: URLs read IPv4
/// in forms that are not dotted quads (`127.1`, `0x7f000001`, `2130706433`), and a literal
/// the client sees is connected to without asking the resolver.
pub fn parse(url: &str) -> Result<(Url, Host), String> {
    parse_url(url).map_err(|e| e.message().to_owned())?;
    let parsed = Url::parse(url).map_err(|_| "url has no valid host".to_owned())?;
    let host = parsed.host_str().ok_or("url has no valid host")?;
    // IPv6 literals come bracketed; IPv4 ones in their dotted form, whatever the URL wrote.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let host = match bare.parse::<IpAddr>() {
        Ok(ip) => Host::Literal(ip),
        Err(_) => Host::Name(host.to_owned()),
    };
    Ok((parsed, host))
}

/// The addresses of `addrs` that the rule permits, or why none is (the first refusal).
pub fn permitted(
    rule: TargetRule,
    addrs: impl IntoIterator<Item = SocketAddr>,
) -> Result<Vec<SocketAddr>, String> {
    let mut kept = Vec::new();
    let mut refusal = None;
    for addr in addrs {
        match rule.permits(addr.ip()) {
            Ok(()) => kept.push(addr),
            Err(why) => {
                refusal.get_or_insert(why);
            }
        }
    }
    match (kept.is_empty(), refusal) {
        (false, _) => Ok(kept),
        (true, Some(why)) => Err(why),
        (true, None) => Err("the host name resolves to no address".to_owned()),
    }
}

/// Whether `url` may be a subscription's target now: a literal the rule permits, or a name
/// that resolves (within `timeout`) only to permitted addresses. Stricter than an attempt,
/// which connects to the permitted ones of a mixed answer: a name that resolves to one
/// refused address is not one to save.
pub async fn check(rule: TargetRule, timeout: Duration, url: &str) -> Result<(), String> {
    let (parsed, host) = parse(url)?;
    let name = match host {
        Host::Literal(ip) => return rule.permits(ip),
        Host::Name(name) => name,
    };
    let port = parsed.port_or_known_default().unwrap_or(0);
    let lookup = tokio::net::lookup_host((name.as_str(), port));
    let addrs: Vec<SocketAddr> = match tokio::time::timeout(timeout, lookup).await {
        Ok(Ok(addrs)) => addrs.collect(),
        Ok(Err(_)) => return Err("the host name does not resolve".to_owned()),
        Err(_) => return Err("the host name did not resolve in time".to_owned()),
    };
    if addrs.is_empty() {
        return Err("the host name resolves to no address".to_owned());
    }
    for addr in addrs {
        rule.permits(addr.ip())
            .map_err(|why| format!("the host name resolves to a refused address: {why}"))?;
    }
    Ok(())
}

/// A connection refused by the rule, or to a name that did not resolve: the error the
/// resolver gives the client, found again in the client's error to say why in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> TargetRule {
        TargetRule::default()
    }

    #[test]
    fn reads_the_host_as_the_client_does() {
        let host = |url: &str| parse(url).unwrap().1;
        let v4 = Host::Literal("127.0.0.1".parse().unwrap());
        assert_eq!(host("http://127.0.0.1:9/"), v4);
        assert_eq!(host("http://127.1:9/"), v4);
        assert_eq!(host("http://0x7f000001:9/"), v4);
        assert_eq!(host("http://2130706433:9/"), v4);
        assert_eq!(
            host("http://[::1]:9/"),
            Host::Literal("::1".parse().unwrap())
        );
        assert_eq!(
            host("https://Hooks.Example.com/x"),
            Host::Name("hooks.example.com".into())
        );
    }

    #[test]
    fn keeps_the_format_rules_of_the_domain_without_echoing_the_url() {
        let error = parse("https://user:token-123@example.com/").unwrap_err();
        assert!(
            error.contains("user information") && !error.contains("token-123"),
            "{error}"
        );
        assert!(parse("ftp://example.com/").is_err());
    }

    #[test]
    fn keeps_only_permitted_addresses() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let mixed = [
            addr("127.0.0.1:443"),
            addr("93.184.216.34:443"),
            addr("10.0.0.1:443"),
        ];
        assert_eq!(
            permitted(strict(), mixed).unwrap(),
            [addr("93.184.216.34:443")]
        );
        let open = TargetRule {
            allow_loopback: true,
            allow_private_networks: false,
        };
        assert_eq!(permitted(open, mixed).unwrap().len(), 2);
        let error = permitted(strict(), [addr("127.0.0.1:80"), addr("[::1]:80")]).unwrap_err();
        assert!(error.contains("loopback"), "{error}");
        assert!(permitted(strict(), []).is_err());
    }

    #[tokio::test]
    async fn checks_literals_without_resolving() {
        let ms = Duration::from_millis(100);
        let error = check(strict(), ms, "http://127.0.0.1:9/?token=t0k3n")
            .await
            .unwrap_err();
        assert!(
            error.contains("webhooks.allow_networks includes loopback") && !error.contains("t0k3n"),
            "{error}"
        );
        assert!(check(strict(), ms, "http://0x7f000001:9/").await.is_err());
        assert!(
            check(strict(), ms, "http://[::ffff:127.0.0.1]:9/")
                .await
                .is_err()
        );
        assert!(
            check(strict(), ms, "http://169.254.169.254/")
                .await
                .is_err()
        );
        assert!(check(strict(), ms, "https://93.184.216.34/").await.is_ok());
    }
}
