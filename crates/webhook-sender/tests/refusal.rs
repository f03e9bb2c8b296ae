//! The SSRF rule at work against a real receiver on 127.0.0.1: with loopback not allowed,
//! no spelling of a loopback target is accepted, at check time or at send time, and no
//! request reaches the receiver.

mod support;

use roomlink_domain::ports::{OutgoingWebhook, WebhookSender};
use std::time::Duration;
use support::{Receiver, Reply, TOKEN, secret, sender};

const TEN_S: Duration = Duration::from_secs(10);

/// The receiver's address spelled every way a URL can: the client reads the IPv4 forms
/// that are not dotted quads as 127.0.0.1, and never asks a resolver about a literal.
fn spellings(receiver: &Receiver) -> Vec<String> {
    let port = receiver.addr.port();
    [
        "127.0.0.1",
        "127.1",
        "0x7f000001",
        "2130706433",
        "[::ffff:127.0.0.1]",
        "localhost",
    ]
    .iter()
    .map(|host| format!("http://{host}:{port}/in?token={TOKEN}"))
    .collect()
}

#[tokio::test]
async fn loopback_is_refused_at_check_and_send_when_not_allowed() {
    let receiver = Receiver::start(Reply::status(200)).await;
    let strict = sender(false, TEN_S);
    let secret = secret();

    for url in spellings(&receiver) {
        let refusal = strict.check_target(&url).await.unwrap_err();
        assert!(
            refusal.contains("webhooks.allow_networks includes loopback"),
            "{url}: {refusal}"
        );
        assert!(
            !refusal.contains(TOKEN) && !refusal.contains(&url),
            "{refusal}"
        );

        let outcome = strict
            .send(OutgoingWebhook {
                url: &url,
                event_id: "msg_refused",
                body: "{}",
                secret: &secret,
            })
            .await;
        assert_eq!(outcome.status, None, "{url}");
        let error = outcome.error.unwrap();
        assert!(
            error.contains("webhooks.allow_networks includes loopback"),
            "{url}: {error}"
        );
        assert!(!error.contains(TOKEN) && !error.contains(&url), "{error}");
    }
    assert!(
        receiver.received().is_empty(),
        "a refused delivery reached the receiver"
    );
}

#[tokio::test]
async fn loopback_passes_the_check_when_allowed() {
    let receiver = Receiver::start(Reply::status(200)).await;
    let open = sender(true, TEN_S);

    for url in spellings(&receiver) {
        assert_eq!(open.check_target(&url).await, Ok(()), "{url}");
    }
}

#[tokio::test]
async fn malformed_targets_are_refused_without_echoing_them() {
    let open = sender(true, TEN_S);
    let secret = secret();
    for url in [
        format!("http://user:{TOKEN}@127.0.0.1:9/"),
        format!("ftp://127.0.0.1/?token={TOKEN}"),
        format!("http://127.0.0.1:9/#{TOKEN}"),
    ] {
        let refusal = open.check_target(&url).await.unwrap_err();
        assert!(!refusal.contains(TOKEN), "{refusal}");
        let outcome = open
            .send(OutgoingWebhook {
                url: &url,
                event_id: "msg_malformed",
                body: "{}",
                secret: &secret,
            })
            .await;
        assert_eq!(outcome.status, None);
        assert!(!outcome.error.unwrap().contains(TOKEN));
    }
}
