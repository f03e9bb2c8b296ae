//! The domain's `WebhookSender` port over HTTP: one POST per attempt, signed as Standard
//! Webhooks 1.0 expects (`webhook-id`, `webhook-timestamp`, `webhook-signature`), so that
//! receivers verify deliveries with their usual tooling.
//!
//! A subscription URL is a caller's input that makes roomlink send requests from inside its
//! network, so every attempt keeps to the domain's `TargetRule` on the addresses it really
//! connects to: IP literals are checked before sending, names through a resolver that drops
//! refused addresses (`resolver.rs`); redirects are never followed (a 3xx is a failure) and no
//! proxy is used, since either would connect somewhere the rule never saw.
//!
//! Outcomes are recorded and shown to the enterprise, so their words are written here, never
//! taken from the client's errors: a URL may carry a receiver's token, so no outcome quotes
//! it, nor the secret. Nothing of an answer but its status is read.

mod outcome;
mod resolver;
mod target;

use async_trait::async_trait;
use reqwest::header::CONTENT_TYPE;
use reqwest::redirect;
use roomlink_domain::ports::{Clock, OutgoingWebhook, WebhookSender};
use roomlink_domain::system::SystemClock;
use roomlink_domain::webhook::AttemptOutcome;
use roomlink_domain::webhook::target::TargetRule;
use std::time::Duration;

/// How deliveries go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderSettings {
    /// One attempt's limit, from connecting to the answer's status line.
    pub timeout: Duration,
    /// Which addresses beside public ones a delivery may connect to.
    pub rule: TargetRule,
}

/// The HTTP webhook sender. Cheap to share: one connection pool for every subscription.
#[derive(Debug, Clone)]
pub struct HttpWebhookSender {
    client: reqwest::Client,
    settings: SenderSettings,
}

impl HttpWebhookSender {
    /// The error says why the HTTP client could not be built (its TLS set-up).
    pub fn new(settings: SenderSettings) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .redirect(redirect::Policy::none())
            .no_proxy()
            .dns_resolver(resolver::GuardedResolver {
                rule: settings.rule,
            })
            .user_agent(concat!("roomlink-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot set up the webhook HTTP client: {}", e.without_url()))?;
        Ok(HttpWebhookSender { client, settings })
    }
}

#[async_trait]
impl WebhookSender for HttpWebhookSender {
    async fn check_target(&self, url: &str) -> Result<(), String> {
        target::check(self.settings.rule, self.settings.timeout, url).await
    }

    async fn send<'a>(&self, request: OutgoingWebhook<'a>) -> AttemptOutcome {
        let (url, host) = match target::parse(request.url) {
            Ok(parsed) => parsed,
            Err(why) => return outcome::failed(why),
        };
        // The client connects to a literal without asking the resolver: check it here.
        if let target::Host::Literal(ip) = host
            && let Err(why) = self.settings.rule.permits(ip)
        {
            return outcome::failed(why);
        }
        let timestamp = unix_now();
        let signature = match roomlink_domain::webhook::signature::sign(
            request.secret,
            request.event_id,
            timestamp,
            request.body,
        ) {
            Ok(signature) => signature,
            Err(e) => return outcome::failed(e.to_string()),
        };
        let sent = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header("webhook-id", request.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(request.body.to_owned())
            .send()
            .await;
        match sent {
            // The answer's body is dropped unread: only its status counts.
            Ok(answer) => outcome::answered(answer.status().as_u16()),
            Err(e) => outcome::transport(&e.without_url(), self.settings.timeout),
        }
    }
}

/// Unix seconds now, from the wall clock even where the service runs on another `Clock`
/// (tests' manual one): receivers refuse a timestamp five minutes from their own clock.
fn unix_now() -> i64 {
    SystemClock.now_ms().div_euclid(1_000)
}
