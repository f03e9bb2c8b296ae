//! Arbitrary text as the static platform users file (`platform.static_file`), read by
//! `StaticPlatform::parse`; bytes that are not UTF-8 never reach it (`load` reads a string).
//!
//! Never a panic, and the file means what the operator wrote. The same text read as a plain
//! TOML table is the reference:
//! - the parser accepts exactly the files of `[[users]]` with the documented keys and types
//!   and no username twice;
//! - every user of an accepted file signs in with its password (and with nothing else) as
//!   the identity the file describes, and each access token introspects as the first user
//!   that lists it;
//! - a refusal never quotes the file (it holds passwords): a TOML error names only a byte
//!   offset inside the text, a duplicate only the username.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_domain::ports::{PlatformIdentity, PlatformUser};
use roomlink_domain::secret::Secret;
use roomlink_platform::StaticPlatform;
use std::collections::HashSet;
use std::future::Future;
use std::task::{Context, Poll, Waker};
use toml::{Table, Value};

/// The static platform answers from memory: its futures are ready at the first poll.
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the static platform never waits"),
    }
}

/// One `[[users]]` entry as the operator contract documents it.
struct Expected {
    user: PlatformUser,
    password: String,
    tokens: Vec<String>,
}

/// The users the documented schema reads from `table`; `None` when it breaks the schema.
fn documented(table: &Table) -> Option<Vec<Expected>> {
    if table.keys().any(|k| k != "users") {
        return None;
    }
    let users = match table.get("users") {
        None => return Some(Vec::new()),
        Some(Value::Array(users)) => users,
        Some(_) => return None,
    };
    users
        .iter()
        .map(|user| {
            let user = user.as_table()?;
            const KEYS: [&str; 9] = [
                "username",
                "password",
                "platform_id",
                "enterprise",
                "enterprise_admin",
                "first_name",
                "last_name",
                "zero_touch",
                "access_tokens",
            ];
            if user.keys().any(|k| !KEYS.contains(&k.as_str())) {
                return None;
            }
            let text = |key: &str| user.get(key)?.as_str().map(str::to_owned);
            // Optional keys: absent is fine, present with another type is not.
            let optional_text = |key: &str| match user.get(key) {
                None => Some(None),
                Some(v) => v.as_str().map(|s| Some(s.to_owned())),
            };
            let flag = |key: &str| match user.get(key) {
                None => Some(false),
                Some(v) => v.as_bool(),
            };
            let tokens = match user.get("access_tokens") {
                None => Vec::new(),
                Some(v) => v
                    .as_array()?
                    .iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect::<Option<_>>()?,
            };
            Some(Expected {
                user: PlatformUser {
                    platform_id: user.get("platform_id")?.as_integer()?,
                    username: text("username")?,
                    enterprise_name: text("enterprise")?,
                    enterprise_admin: flag("enterprise_admin")?,
                    first_name: optional_text("first_name")?,
                    last_name: optional_text("last_name")?,
                    zero_touch: flag("zero_touch")?,
                },
                password: text("password")?,
                tokens,
            })
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = StaticPlatform::parse(text);
    let reference = toml::from_str::<Table>(text).ok();
    let expected = reference.as_ref().and_then(documented);
    match (parsed, expected) {
        (Ok(platform), Some(users)) => check_accepted(&platform, &users),
        (Ok(_), None) => panic!("accepted a file outside the documented schema"),
        (Err(message), expected) => check_refused(text, &message, expected.as_deref()),
    }
});

fn check_accepted(platform: &StaticPlatform, users: &[Expected]) {
    assert_eq!(platform.len(), users.len());
    assert_eq!(platform.is_empty(), users.is_empty());
    let names: HashSet<&str> = users.iter().map(|u| u.user.username.as_str()).collect();
    assert_eq!(names.len(), users.len(), "accepted a username twice");

    for expected in users {
        let name = expected.user.username.as_str();
        let found = ready(platform.verify_password(name, &Secret::new(&expected.password)))
            .expect("the static platform does not fail");
        assert_eq!(
            found.as_ref(),
            Some(&expected.user),
            "{name} signs in as written"
        );

        let wrong = format!("{}x", expected.password);
        let refused = ready(platform.verify_password(name, &Secret::new(&wrong)))
            .expect("the static platform does not fail");
        assert_eq!(refused, None, "{name} signed in with another password");

        for token in &expected.tokens {
            let owner = users
                .iter()
                .find(|u| u.tokens.contains(token))
                .map(|u| &u.user);
            let found = ready(platform.introspect(&Secret::new(token)))
                .expect("the static platform does not fail");
            assert_eq!(
                found.as_ref(),
                owner,
                "a token belongs to the first user listing it"
            );
        }
    }
    let unknown = ready(platform.verify_password("\u{0}nobody", &Secret::new("")))
        .expect("the static platform does not fail");
    assert!(names.contains("\u{0}nobody") || unknown.is_none());
}

fn check_refused(text: &str, message: &str, expected: Option<&[Expected]>) {
    const TOML_TAIL: &str = ": expected [[users]] with the documented keys";
    if let Some(users) = expected {
        // The schema holds, so only a second username may be the reason, and it is named.
        let mut seen = HashSet::new();
        let twice = users
            .iter()
            .map(|u| u.user.username.as_str())
            .find(|name| !seen.insert(*name))
            .expect("refused a file of the documented schema without a repeated username");
        assert_eq!(message, format!("user {twice} appears twice"));
        return;
    }
    let offset = message
        .strip_prefix("TOML error")
        .and_then(|rest| rest.strip_suffix(TOML_TAIL))
        .unwrap_or_else(|| panic!("a refusal that may quote the file: {message:?}"));
    if !offset.is_empty() {
        let at: usize = offset
            .strip_prefix(" at byte ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("not a byte offset: {offset:?}"));
        assert!(
            at <= text.len(),
            "offset {at} past the end ({})",
            text.len()
        );
    }
}
