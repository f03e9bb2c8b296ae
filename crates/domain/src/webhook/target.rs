//! Where a delivery may go. A subscription's URL is a caller's input that makes roomlink send
//! requests from inside its network: without a rule, a caller could reach the service's own
//! admin ports, a cloud metadata address or a room system's web page (server-side request
//! forgery). So a target must be http(s), and every address its host resolves to must be a
//! public one, unless an operator allows loopback or private ranges (`webhooks.allow_networks`:
//! `loopback`, `private`). The check runs when a subscription is saved and again
//! on every attempt, against the addresses actually connected to; redirects are not followed.

use crate::error::Error;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A subscription URL's parts that the rule looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetUrl {
    pub https: bool,
    /// A name to resolve, or an address literal (without IPv6 brackets). Not a parsed address:
    /// URLs also write IPv4 addresses as `127.1` or `2130706433`, so the sender checks the
    /// address it connects to, however the host was written.
    pub host: String,
    pub port: u16,
}

/// Parses a subscription URL: `http://` or `https://`, a host, an optional port, no user
/// information, no fragment. `Invalid` saying which rule it breaks, never echoing the URL.
pub fn parse_url(url: &str) -> Result<TargetUrl, Error> {
    let invalid = |why: &str| Error::invalid(format!("url {why}"));
    if url.chars().count() > super::MAX_URL_CHARS {
        return Err(invalid(&format!(
            "is longer than {} characters",
            super::MAX_URL_CHARS
        )));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid("holds spaces or control characters"));
    }
    let (https, rest) = if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
        (true, rest)
    } else if let Some(rest) = strip_prefix_ignore_case(url, "http://") {
        (false, rest)
    } else {
        return Err(invalid("must start with https:// or http://"));
    };
    if url.contains('#') {
        return Err(invalid("must not hold a fragment (#...)"));
    }
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(invalid(
            "must not hold user information (user:password@): send a token in a header-free \
             query parameter or rely on the signature",
        ));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| invalid("has no valid host"))?;
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| invalid("has an invalid port"))?,
        None if https => 443,
        None => 80,
    };
    let host = host.to_ascii_lowercase();
    let name_ok = host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b':');
    if host.is_empty() || !name_ok {
        return Err(invalid("has no valid host"));
    }
    Ok(TargetUrl { https, host, port })
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `host[:port]` or `[v6][:port]`.
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        host.parse::<Ipv6Addr>().ok()?;
        match after {
            "" => Some((host, None)),
            _ => Some((host, Some(after.strip_prefix(':')?))),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => Some((host, Some(port))),
            None => Some((authority, None)),
        }
    }
}

/// What an operator allows beyond public addresses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TargetRule {
    pub allow_loopback: bool,
    pub allow_private_networks: bool,
}

/// The class of an address that is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    Public,
    Loopback,
    /// RFC 1918, unique-local IPv6, carrier-grade NAT (100.64/10).
    Private,
    /// 169.254/16 (cloud metadata lives here), fe80::/10.
    LinkLocal,
    /// Unspecified, multicast, broadcast and reserved: never a receiver.
    Unusable,
}

pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        AddressClass::Private
    } else if ip.is_link_local() {
        AddressClass::LinkLocal
    } else if a == 0 || ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        AddressClass::Unusable
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        AddressClass::Loopback
    } else if first & 0xfe00 == 0xfc00 {
        AddressClass::Private
    } else if first & 0xffc0 == 0xfe80 {
        AddressClass::LinkLocal
    } else if ip.is_unspecified() || ip.is_multicast() {
        AddressClass::Unusable
    } else {
        AddressClass::Public
    }
}

impl TargetRule {
    /// Whether a delivery may connect to `ip`; the refusal in words otherwise.
    pub fn permits(&self, ip: IpAddr) -> Result<(), String> {
        let refused = |what: &str, setting: Option<&str>| {
            Err(match setting {
                Some(s) => format!("{ip} is {what}, which webhooks may reach only when {s}"),
                None => format!("{ip} is {what}, which no webhook may reach"),
            })
        };
        match classify(ip) {
            AddressClass::Public => Ok(()),
            AddressClass::Loopback if self.allow_loopback => Ok(()),
            AddressClass::Loopback => refused(
                "a loopback address",
                Some("webhooks.allow_networks includes loopback"),
            ),
            AddressClass::Private if self.allow_private_networks => Ok(()),
            AddressClass::Private => refused(
                "a private-network address",
                Some("webhooks.allow_networks includes private"),
            ),
            AddressClass::LinkLocal => refused("a link-local address", None),
            AddressClass::Unusable => refused("not a unicast address", None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parts_the_rule_needs() {
        let t = parse_url("https://Hooks.Example.com/roomlink?token=x").unwrap();
        assert_eq!(
            (t.https, t.host.as_str(), t.port),
            (true, "hooks.example.com", 443)
        );
        let t = parse_url("http://127.0.0.1:9100/in").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 9100));
        let t = parse_url("http://[::1]:8080").unwrap();
        assert_eq!(t.host, "::1");
    }

    #[test]
    fn refuses_what_is_not_a_plain_http_target_without_echoing_it() {
        for bad in [
            "ftp://example.com/",
            "https://user:secret@example.com/",
            "https://example.com/#frag",
            "https:///path",
            "https://exa mple.com/",
            "http://example.com:0/",
            "http://example.com:99999/",
            "http://[zz]/",
            "example.com",
        ] {
            let e = parse_url(bad).unwrap_err();
            assert!(!e.message().contains("secret"), "{bad}: {}", e.message());
        }
    }

    #[test]
    fn classifies_every_non_public_range() {
        let class = |s: &str| classify(s.parse().unwrap());
        assert_eq!(class("127.0.0.1"), AddressClass::Loopback);
        assert_eq!(class("::1"), AddressClass::Loopback);
        assert_eq!(class("::ffff:127.0.0.1"), AddressClass::Loopback);
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "fd00::1",
        ] {
            assert_eq!(class(private), AddressClass::Private, "{private}");
        }
        assert_eq!(class("169.254.169.254"), AddressClass::LinkLocal);
        assert_eq!(class("fe80::1"), AddressClass::LinkLocal);
        for unusable in ["0.0.0.0", "224.0.0.1", "255.255.255.255", "::"] {
            assert_eq!(class(unusable), AddressClass::Unusable, "{unusable}");
        }
        assert_eq!(class("93.184.216.34"), AddressClass::Public);
        assert_eq!(class("2606:4700::1"), AddressClass::Public);
    }

    #[test]
    fn permits_loopback_and_private_only_when_allowed_and_link_local_never() {
        let strict = TargetRule::default();
        let open = TargetRule {
            allow_loopback: true,
            allow_private_networks: true,
        };
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(
            strict
                .permits(ip("127.0.0.1"))
                .unwrap_err()
                .contains("webhooks.allow_networks includes loopback")
        );
        assert!(strict.permits(ip("10.0.0.1")).is_err());
        assert!(open.permits(ip("127.0.0.1")).is_ok());
        assert!(open.permits(ip("10.0.0.1")).is_ok());
        assert!(open.permits(ip("169.254.169.254")).is_err());
        assert!(strict.permits(ip("93.184.216.34")).is_ok());
    }
}
