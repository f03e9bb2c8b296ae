//! What a listener needs to dial home: roomlink's base URLs, its listener id, the shared secret
//! it presents, an optional extra CA for `wss://`, and the transport's timings.

use roomlink_domain::listener::{SECRET_MAX_CHARS, SECRET_MIN_CHARS};
use std::path::PathBuf;
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use zeroize::Zeroizing;

/// The shared secret the listener presents. Wiped when dropped; never printed.
#[derive(Clone)]
pub struct ListenerSecret(Zeroizing<String>);

impl ListenerSecret {
    /// The secret, trimmed, within roomlink's bounds for a secret.
    pub fn new(secret: &str) -> Result<Self, String> {
        let secret = secret.trim();
        let chars = secret.chars().count();
        if !(SECRET_MIN_CHARS..=SECRET_MAX_CHARS).contains(&chars) {
            return Err(format!(
                "the listener secret must be at least {SECRET_MIN_CHARS} characters (and at most {SECRET_MAX_CHARS})"
            ));
        }
        Ok(ListenerSecret(Zeroizing::new(secret.to_owned())))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ListenerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ListenerSecret([redacted])")
    }
}

/// The transport's timings (docs/listener-protocol.md, "Keeping it alive"). Only tests
/// shorten them; the protocol fixes the defaults.
#[derive(Debug, Clone)]
pub struct Timing {
    /// A socket on which nothing arrived this long is closed (roomlink pings every 15 s).
    pub idle_timeout: Duration,
    /// The first reconnect delay; it doubles up to `max_delay`.
    pub initial_delay: Duration,
    pub max_delay: Duration,
    /// A connection up this long resets the delay to `initial_delay`.
    pub reset_after: Duration,
    /// TCP, TLS and the WebSocket handshake together; a black-holed URL must not stall the loop.
    pub handshake_timeout: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            idle_timeout: Duration::from_secs(45),
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            reset_after: Duration::from_secs(10),
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

/// The outbound mode's settings.
#[derive(Debug, Clone)]
pub struct DialHomeSettings {
    /// roomlink's base URLs (`https://roomlink.example.com`), tried in turn.
    pub urls: Vec<String>,
    /// The listener's id in roomlink.
    pub listener_id: String,
    pub secret: ListenerSecret,
    /// PEM certificates trusted for `wss://` besides the system's roots (a private CA).
    pub ca_file: Option<PathBuf>,
    pub timing: Timing,
}

impl DialHomeSettings {
    /// The connect URL of each base URL, checked: what `--check` reports and the loop dials.
    pub fn connect_urls(&self) -> Result<Vec<String>, String> {
        if self.urls.is_empty() {
            return Err("no roomlink URL to connect to".into());
        }
        check_listener_id(&self.listener_id)?;
        self.urls
            .iter()
            .map(|base| connect_url(base, &self.listener_id))
            .collect()
    }

    /// Everything `--check` can know without dialing: URLs, id, CA file.
    pub fn check(&self) -> Result<(), String> {
        self.connect_urls()?;
        if let Some(path) = &self.ca_file {
            crate::dial_home::tls::read_ca_file(path)?;
        }
        Ok(())
    }
}

/// Ids go into a URL path unescaped, so only URL-safe characters are allowed (roomlink's ids
/// are hexadecimal).
pub fn check_listener_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("the listener id is empty: set --listener-id (connect.listener_id)".into());
    }
    if id.len() > 128
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
    {
        return Err(format!(
            "the listener id {:?} is not an id (letters, digits, '-', '_', '.', '~'; at most 128)",
            id.chars().take(40).collect::<String>()
        ));
    }
    Ok(())
}

/// `{base}/api/listenerservices/{id}/connect`, `http` → `ws`, `https` → `wss` (`ws`/`wss` are
/// taken as they are). No user info, query or fragment: nothing secret belongs in a URL.
pub fn connect_url(base: &str, listener_id: &str) -> Result<String, String> {
    let base = base.trim();
    let refuse = |why: &str| format!("roomlink URL {base:?}: {why}");
    let (scheme, rest) = base
        .split_once("://")
        .ok_or_else(|| refuse("not a URL such as https://roomlink.example.com"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "https" | "wss" => "wss",
        "http" | "ws" => "ws",
        _ => return Err(refuse("the scheme must be https or http")),
    };
    let rest = rest.trim_end_matches('/');
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() {
        return Err(refuse("no host"));
    }
    if authority.contains('@') {
        return Err(refuse("user info is not allowed in the URL"));
    }
    if rest.contains(['?', '#']) {
        return Err(refuse("a query or fragment is not allowed"));
    }
    let url = format!("{scheme}://{rest}/api/listenerservices/{listener_id}/connect");
    url.as_str()
        .into_client_request()
        .map_err(|e| refuse(&e.to_string()))?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(urls: &[&str], id: &str) -> DialHomeSettings {
        DialHomeSettings {
            urls: urls.iter().map(|u| u.to_string()).collect(),
            listener_id: id.into(),
            secret: ListenerSecret::new("dial-home-secret-0123").unwrap(),
            ca_file: None,
            timing: Timing::default(),
        }
    }

    #[test]
    fn connect_urls_follow_the_scheme() {
        let s = settings(
            &["https://roomlink.example.com/", "http://127.0.0.1:8080"],
            "abc123",
        );
        assert_eq!(
            s.connect_urls().unwrap(),
            [
                "wss://roomlink.example.com/api/listenerservices/abc123/connect",
                "ws://127.0.0.1:8080/api/listenerservices/abc123/connect",
            ]
        );
        assert_eq!(
            connect_url("https://h.example/base", "x").unwrap(),
            "wss://h.example/base/api/listenerservices/x/connect"
        );
    }

    #[test]
    fn bad_urls_and_ids_are_refused() {
        for bad in [
            "roomlink.example.com",
            "ftp://h",
            "https://",
            "https://u:p@h",
            "https://h/?a=b",
            "https://h b",
        ] {
            assert!(connect_url(bad, "id").is_err(), "{bad}");
        }
        assert!(settings(&[], "id").connect_urls().is_err());
        assert!(settings(&["https://h"], "").connect_urls().is_err());
        assert!(settings(&["https://h"], "a/b").connect_urls().is_err());
    }

    #[test]
    fn secrets_are_bounded_and_never_printed() {
        assert!(ListenerSecret::new("short").is_err());
        assert!(ListenerSecret::new(&"x".repeat(SECRET_MAX_CHARS + 1)).is_err());
        let s = settings(&["https://h"], "id");
        assert_eq!(s.secret.expose(), "dial-home-secret-0123");
        assert!(!format!("{s:?}").contains("dial-home-secret"));
    }
}
