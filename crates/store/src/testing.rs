//! Test support for crates that need a real PostgreSQL (feature `testing`): a fresh database
//! per test on the server named by `ROOMLINK_TEST_DATABASE_URL`, dropped afterwards.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use std::io::Write;
use std::sync::Once;

/// The environment variable naming the PostgreSQL server the tests may create databases on.
pub const PG_URL_VAR: &str = "ROOMLINK_TEST_DATABASE_URL";

/// A database created for one test on the server of `ROOMLINK_TEST_DATABASE_URL`, dropped
/// (forcibly, best effort) when this value is, even when the test failed.
pub struct TestDatabase {
    url: String,
    admin_url: String,
    name: String,
}

impl TestDatabase {
    /// A new, empty database; `None` (after saying so once, loudly) when the variable is unset.
    /// Under CI (`CI` set), which provides the server, an unset variable fails the test.
    pub async fn create() -> Option<TestDatabase> {
        let Ok(admin_url) = std::env::var(PG_URL_VAR) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI runs the PostgreSQL tests: set {PG_URL_VAR}"
            );
            static SAY: Once = Once::new();
            SAY.call_once(|| {
                // Straight to stderr: the test harness captures print!/eprint! of passing tests.
                let _ = writeln!(
                    std::io::stderr(),
                    "\n\n*** SKIPPED: PostgreSQL contract tests ({PG_URL_VAR} unset) ***\n"
                );
            });
            return None;
        };
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("the OS random source");
        let name = format!(
            "rl_test_{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let mut admin = AsyncPgConnection::establish(&admin_url)
            .await
            .expect("the test PostgreSQL server answers");
        diesel::sql_query(format!("CREATE DATABASE \"{name}\""))
            .execute(&mut admin)
            .await
            .expect("a test database can be created");
        Some(TestDatabase {
            url: with_database(&admin_url, &name),
            admin_url,
            name,
        })
    }

    /// The database's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Drops the database now, disconnecting whoever uses it.
    pub async fn drop_now(&self) {
        let mut admin = AsyncPgConnection::establish(&self.admin_url)
            .await
            .expect("the test PostgreSQL server answers");
        diesel::sql_query(format!("DROP DATABASE \"{}\" WITH (FORCE)", self.name))
            .execute(&mut admin)
            .await
            .expect("the test database can be dropped");
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Its own thread and runtime: this may run inside (or after) the test's runtime.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut admin = AsyncPgConnection::establish(&admin_url).await.ok()?;
                diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .execute(&mut admin)
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(_))) {
            let _ = writeln!(
                std::io::stderr(),
                "could not drop test database {}",
                self.name
            );
        }
    }
}

/// `url` with its database (the path) replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{name}{query}", &base[..authority_end])
}
