//! Limits that hold for a cluster as a whole (issue #34): three `roomlink serve` processes on
//! one PostgreSQL database and one `nats-server` of the test's own. A guesser spreading wrong
//! passwords, or wrong tokens, over the three gets one allowance in all, not one per instance
//! (`roomlink_app::auth_failures`; docs/operations.md, "Abuse limits").

use crate::cluster::Instances;
use crate::support::nats::{Nats, free_port};
use crate::support::service::{Service, token};
use reqwest::StatusCode;
use std::time::Instant;

/// Failed authentications per minute, as many at once (`limits.auth_failures_per_minute`).
const PER_MINUTE: u32 = 10;

/// How many of `statuses` are `status`.
fn count(statuses: &[StatusCode], status: StatusCode) -> usize {
    statuses.iter().filter(|s| **s == status).count()
}

/// The most failures that may count in `elapsed` for one allowance, plus the 10 % the issue
/// allows: the burst, and one more per refill interval that passed.
fn one_allowance(elapsed: std::time::Duration) -> usize {
    let refilled = elapsed.as_secs_f64() * f64::from(PER_MINUTE) / 60.0;
    ((f64::from(PER_MINUTE) + refilled.floor()) * 1.1).floor() as usize
}

/// Three instances on a fresh database and a NATS of their own, with the tenant `acme`.
struct Three {
    addresses: Vec<String>,
    /// Dropped first (fields drop in order): the instances die before what they use.
    _instances: Instances,
    _nats: Nats,
    _service: Service,
    _database: roomlink_store::testing::TestDatabase,
}

/// [`Three`] with `settings` besides the cluster's; `None` (after saying so) without a
/// PostgreSQL server.
async fn three_instances(test: &str, settings: &[(&str, String)]) -> Option<Three> {
    let Some(database) = roomlink_store::testing::TestDatabase::create().await else {
        eprintln!("{test}: SKIPPED (set ROOMLINK_TEST_DATABASE_URL)");
        return None;
    };
    let nats = Nats::start(free_port());
    let mut service = Service::new(tempfile::tempdir().unwrap(), database.url().to_owned());
    service.env = vec![("ROOMLINK__CLUSTER__NATS_URL".into(), nats.url())];
    service
        .env
        .extend(settings.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    service.tenant("acme");
    let mut children = Vec::new();
    let mut addresses = Vec::new();
    for _ in 0..3 {
        let (child, address) = service.serve();
        children.push(Some(child));
        addresses.push(address);
    }
    Some(Three {
        addresses,
        _instances: Instances(children),
        _nats: nats,
        _service: service,
        _database: database,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guesser_spread_over_three_instances_gets_one_allowance() {
    let Some(three) = three_instances(
        "a_guesser_spread_over_three_instances_gets_one_allowance",
        &[(
            "ROOMLINK__LIMITS__AUTH_FAILURES_PER_MINUTE",
            PER_MINUTE.to_string(),
        )],
    )
    .await
    else {
        return;
    };
    let addresses = &three.addresses;
    let http = reqwest::Client::new();
    // A token of the guessed account, taken before the guessing.
    let good_token = token(&http, &addresses[0], "acme").await;
    let basic = |address: &str, password: &str| {
        let request = http
            .get(format!("http://{address}/api/endpoints"))
            .basic_auth("acme-ops", Some(password))
            .send();
        async move { request.await.unwrap().status() }
    };
    let with_token = |address: &str, token: &str| {
        let request = http
            .get(format!("http://{address}/api/endpoints"))
            .header("X-Access-Token", token)
            .send();
        async move { request.await.unwrap().status() }
    };

    // Wrong passwords, one instance after the other.
    let started = Instant::now();
    let mut answers = Vec::new();
    for i in 0..60 {
        let guess = format!("guess-{i}");
        answers.push(basic(&addresses[i % 3], &guess).await);
    }
    let elapsed = started.elapsed();
    let (failed, refused) = (
        count(&answers, StatusCode::UNAUTHORIZED),
        count(&answers, StatusCode::TOO_MANY_REQUESTS),
    );
    eprintln!(
        "60 wrong passwords over 3 instances in {elapsed:?}: {failed} verified and refused (401), \
         {refused} throttled (429); one instance's allowance is {PER_MINUTE}"
    );
    assert_eq!(failed + refused, 60, "{answers:?}");
    assert!(failed >= PER_MINUTE as usize, "{answers:?}");
    assert!(
        failed <= one_allowance(elapsed),
        "{failed} guesses were verified: more than one allowance ({answers:?})"
    );
    // The guessed account is refused from this address on every instance, the right password
    // too (before it is verified), while its token and the other guesses still work.
    for address in addresses {
        assert_eq!(
            basic(address, "acme-password-1").await,
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(with_token(address, &good_token).await, StatusCode::OK);
    }

    // Wrong tokens: the same, in the tokens' own allowance.
    let started = Instant::now();
    let mut answers = Vec::new();
    for i in 0..60 {
        let guess = format!("not-a-token-{i:04}");
        answers.push(with_token(&addresses[i % 3], &guess).await);
    }
    let elapsed = started.elapsed();
    let failed = count(&answers, StatusCode::UNAUTHORIZED);
    eprintln!(
        "60 wrong tokens over 3 instances in {elapsed:?}: {failed} refused (401), {} throttled \
         (429)",
        count(&answers, StatusCode::TOO_MANY_REQUESTS)
    );
    assert_eq!(
        failed + count(&answers, StatusCode::TOO_MANY_REQUESTS),
        60,
        "{answers:?}"
    );
    assert!(failed >= PER_MINUTE as usize, "{answers:?}");
    assert!(failed <= one_allowance(elapsed), "{answers:?}");
    // A valid token still passes everywhere: only failing ones are refused.
    for address in addresses {
        assert_eq!(with_token(address, &good_token).await, StatusCode::OK);
    }
}

/// Requests per second from one address (`limits.address_rate_per_sec`) and at once.
const RATE: f64 = 50.0;
const BURST: u32 = 10;

/// A client sending as fast as it can, one instance after the other, for three seconds gets
/// what one instance would let through in that time (its burst and the rate), within 10 %,
/// not three times that: the instances charge each other's reports. Whatever the instances
/// admit within one report's delay before hearing of each other is paid back as debt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_spread_over_three_instances_get_one_rate() {
    let Some(three) = three_instances(
        "requests_spread_over_three_instances_get_one_rate",
        &[
            ("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", RATE.to_string()),
            ("ROOMLINK__LIMITS__ADDRESS_BURST", BURST.to_string()),
        ],
    )
    .await
    else {
        return;
    };
    let addresses = &three.addresses;
    let http = reqwest::Client::new();
    let good_token = token(&http, &addresses[0], "acme").await;
    // Let the token request's charge refill before measuring.
    tokio::time::sleep(std::time::Duration::from_secs_f64(f64::from(BURST) / RATE)).await;

    let window = std::time::Duration::from_secs(3);
    let started = Instant::now();
    let mut answers = Vec::new();
    let mut i = 0;
    while started.elapsed() < window {
        let status = http
            .get(format!("http://{}/api/endpoints", addresses[i % 3]))
            .header("X-Access-Token", &good_token)
            .send()
            .await
            .unwrap()
            .status();
        answers.push(status);
        i += 1;
    }
    let elapsed = started.elapsed();
    let (admitted, refused) = (
        count(&answers, StatusCode::OK),
        count(&answers, StatusCode::TOO_MANY_REQUESTS),
    );
    let one_rate = f64::from(BURST) + RATE * elapsed.as_secs_f64();
    eprintln!(
        "{} requests over 3 instances in {elapsed:?}: {admitted} admitted, {refused} refused \
         (429); one instance would admit {one_rate:.0}, three alone {:.0}",
        answers.len(),
        3.0 * one_rate
    );
    assert_eq!(admitted + refused, answers.len(), "{answers:?}");
    assert!(
        answers.len() as f64 > 2.0 * one_rate,
        "the client must ask faster than the limit for the test to mean anything"
    );
    assert!(
        admitted as f64 <= one_rate * 1.1,
        "{admitted} admitted: more than one instance's rate ({one_rate:.0}) + 10 %"
    );
    assert!(
        admitted as f64 >= one_rate * 0.8,
        "{admitted} admitted: far less than the rate ({one_rate:.0})"
    );
}
