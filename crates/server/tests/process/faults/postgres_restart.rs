//! PostgreSQL restarted under write load (see the target's doc).

use super::*;

/// A PostgreSQL cluster of this test alone, in a temporary directory, on a free loopback port;
/// run as the `postgres` OS user when the test runs as root. Stopped when dropped.
pub(super) struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    /// `runuser -u postgres --` in front of every command (the tests run as root).
    as_postgres: bool,
}

impl Cluster {
    /// A cluster not yet made: its own temporary directory (given to the `postgres` user when
    /// running as root) and a free loopback port.
    fn place(bin: PathBuf, as_postgres: bool) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("roomlink-pg-")
            .tempdir()
            .expect("a temporary directory for the cluster");
        if as_postgres {
            let chowned = Command::new("chown")
                .args(["postgres:", &dir.path().display().to_string()])
                .status()
                .expect("chown runs");
            assert!(
                chowned.success(),
                "cannot give the temp dir to the postgres user"
            );
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Cluster {
            dir,
            bin,
            port,
            as_postgres,
        }
    }

    /// A started cluster, or why there cannot be one here: only a machine without the server
    /// binaries (or, as root, without their user) has none. Any other failure to set one up
    /// fails the test, which must not pass having tested nothing.
    pub(super) fn start() -> Result<Cluster, String> {
        let bin = postgres_bin_dir().ok_or("no PostgreSQL server binaries (initdb, pg_ctl)")?;
        let root = command_output("id", &["-u"]).is_some_and(|uid| uid.trim() == "0");
        if root && command_output("id", &["-u", "postgres"]).is_none() {
            return Err("running as root and there is no `postgres` OS user".to_owned());
        }
        let cluster = Cluster::place(bin, root);
        let data = cluster.data_dir();
        let init = cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert!(
            init.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        if let Err(reason) = cluster.pg_ctl_start() {
            panic!("{reason}");
        }
        Ok(cluster)
    }

    /// A streaming replica of this cluster (`pg_basebackup -R`: it follows this one as its
    /// primary), started on a port of its own.
    pub(super) fn standby(&self) -> Cluster {
        let standby = Cluster::place(self.bin.clone(), self.as_postgres);
        let data = standby.data_dir();
        let primary_port = self.port.to_string();
        let copied = standby.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &primary_port,
                "-U",
                "postgres",
                "-D",
                &data,
                "-R",
                "-X",
                "stream",
                "--no-sync",
            ],
        );
        assert!(
            copied.status.success(),
            "pg_basebackup failed: {}",
            String::from_utf8_lossy(&copied.stderr)
        );
        if let Err(reason) = standby.pg_ctl_start() {
            panic!("the standby does not start: {reason}");
        }
        standby
    }

    /// The first column of the first row `sql` answers (psql, unaligned), or why not.
    pub(super) fn psql(&self, sql: &str) -> Result<String, String> {
        let port = self.port.to_string();
        let out = self.run(
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-tAc",
                sql,
            ],
        );
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    pub(super) fn data_dir(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    pub(super) fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    pub(super) fn run(&self, program: &str, args: &[&str]) -> Output {
        let program = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("a PostgreSQL tool runs")
    }

    pub(super) fn pg_ctl_start(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=40 -c shared_buffers=16MB",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log").display().to_string();
        let data = self.data_dir();
        let started = self.run(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-o", &options, "-w", "-t", "60", "start",
            ],
        );
        if started.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl start failed: {}{}",
                String::from_utf8_lossy(&started.stdout),
                std::fs::read_to_string(&log).unwrap_or_default()
            ))
        }
    }

    pub(super) fn pg_ctl_stop(&self, mode: &str) -> bool {
        let data = self.data_dir();
        self.run(
            "pg_ctl",
            &["-D", &data, "-m", mode, "-w", "-t", "60", "stop"],
        )
        .status
        .success()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.pg_ctl_stop("immediate");
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` with initdb and pg_ctl, or their directory
/// on the PATH.
fn postgres_bin_dir() -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| has_tools(bin))
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|dir| has_tools(dir))
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What one write saw.
#[derive(Debug)]
pub(super) struct WriteOutcome {
    pub(super) name: String,
    pub(super) started: Instant,
    pub(super) finished: Instant,
    /// The status and catalog name, or what went wrong below HTTP (a hang or a dropped
    /// connection).
    pub(super) answer: Result<(u16, Value), String>,
}

/// How long one write may take even while the database is away: the pool's checkout timeout
/// (set to 1 s below) plus generous slack for a loaded machine.
const WRITE_BOUND: Duration = Duration::from_secs(15);

pub(super) async fn writer(
    app: Arc<TestApp>,
    token: String,
    writer: usize,
    stop: Arc<AtomicBool>,
) -> Vec<WriteOutcome> {
    let mut writes = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let name = format!("w{writer}-{i}");
        i += 1;
        let started = Instant::now();
        let request = app
            .with_token(Method::POST, "/api/endpoints", &token)
            .json(&json!({"name": name, "ipAddress": "127.77.0.1", "password": "room-pw"}))
            .send();
        let answer = match tokio::time::timeout(WRITE_BOUND, request).await {
            Err(_) => Err(format!("no answer within {WRITE_BOUND:?}")),
            Ok(Err(e)) => Err(format!("transport: {e}")),
            Ok(Ok(response)) => {
                let (status, body) = json(response).await;
                Ok((status.as_u16(), body))
            }
        };
        writes.push(WriteOutcome {
            name,
            started,
            finished: Instant::now(),
            answer,
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    writes
}

/// roomlink serving on the PostgreSQL `url` (one server, or several in a multi-host URL), with
/// a short connect timeout so that refusals come fast while there is no server.
pub(super) async fn roomlink_on(url: &str) -> Arc<TestApp> {
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        &[
            ("ROOMLINK__DATABASE__URL", url),
            ("ROOMLINK__DATABASE__CONNECT_TIMEOUT_MS", "1000"),
            ("ROOMLINK__DATABASE__MAX_CONNECTIONS", "8"),
            // Refusals come fast while the database is away; the abuse limits are not tested here.
            ("ROOMLINK__LIMITS__TOKEN_RATE_PER_SEC", "0"),
            ("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", "0"),
        ],
    )
    .await
    .expect("roomlink on the throwaway cluster");
    Arc::new(app)
}

/// Every write in `acknowledged` (endpoint names) is stored, and no endpoint twice.
pub(super) async fn assert_stored_once(app: &TestApp, token: &str, acknowledged: &[&str]) {
    let (status, list) = app.call(Method::GET, "/api/endpoints", token, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let stored: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(stored.len(), names.len(), "a write was stored twice");
    for name in acknowledged {
        assert!(stored.contains(name), "acknowledged write {name} was lost");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restart_under_write_load() {
    let _serial = SERIAL.lock().await;
    let cluster = match tokio::task::spawn_blocking(Cluster::start).await.unwrap() {
        Ok(cluster) => Arc::new(cluster),
        Err(reason) => return skipped("postgres_restart_under_write_load", &reason),
    };
    tokio::time::timeout(Duration::from_secs(240), restart_under_load(cluster))
        .await
        .expect("the test finishes within its bound");
}

async fn restart_under_load(cluster: Arc<Cluster>) {
    let url = cluster.url();
    let app = roomlink_on(&url).await;
    let (token, _) = app.tenant("acme").await;

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| tokio::spawn(writer(app.clone(), token.clone(), w, stop.clone())))
        .collect();

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let stopping = Instant::now();
    let c = cluster.clone();
    assert!(
        tokio::task::spawn_blocking(move || c.pg_ctl_stop("fast"))
            .await
            .unwrap(),
        "pg_ctl stop"
    );
    let down = Instant::now();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let starting = Instant::now();
    let c = cluster.clone();
    tokio::task::spawn_blocking(move || c.pg_ctl_start())
        .await
        .unwrap()
        .expect("the cluster starts again");
    let up = Instant::now();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    stop.store(true, Ordering::Relaxed);

    let mut writes = Vec::new();
    for w in writers {
        writes.extend(w.await.unwrap());
    }

    // Every write was answered, in time, with a success or StorageUnavailable.
    let mut acknowledged = Vec::new();
    let mut refused = 0;
    for write in &writes {
        let (status, body) = match &write.answer {
            Ok(answer) => answer,
            Err(e) => panic!("{}: {e}", write.name),
        };
        assert!(
            write.finished - write.started < WRITE_BOUND,
            "{}",
            write.name
        );
        match status {
            200 => acknowledged.push(write.name.as_str()),
            _ => {
                assert_error(
                    StatusCode::from_u16(*status).unwrap(),
                    body,
                    503,
                    "StorageUnavailable",
                    1900000007,
                );
                refused += 1;
            }
        }
    }
    // Writes made while the server was down failed; there were some.
    let during: Vec<_> = writes
        .iter()
        .filter(|w| w.started >= down && w.finished <= starting)
        .collect();
    assert!(
        !during.is_empty(),
        "no write was made during the outage: {writes:?}"
    );
    for w in &during {
        assert!(
            matches!(w.answer, Ok((503, _))),
            "{} succeeded with the database down",
            w.name
        );
    }
    // roomlink recovered by itself: writes made a moment after the server was back succeed.
    let after: Vec<_> = writes
        .iter()
        .filter(|w| w.started >= up + Duration::from_millis(500))
        .collect();
    assert!(!after.is_empty(), "no write after the restart");
    for w in &after {
        assert!(
            matches!(w.answer, Ok((200, _))),
            "{} failed after the restart: {:?}",
            w.name,
            w.answer
        );
    }
    let fresh = app
        .create_endpoint(&token, json!({"name": "after-restart", "password": "pw"}))
        .await;
    assert_eq!(fresh["name"], "after-restart");

    // Every acknowledged write is stored, once.
    assert_stored_once(&app, &token, &acknowledged).await;
    let _ = writeln!(
        std::io::stderr(),
        "postgres restart: {} writes, {} acknowledged, {} StorageUnavailable ({} while down), \
         stop took {:?}, outage {:?}",
        writes.len(),
        acknowledged.len(),
        refused,
        during.len(),
        down - stopping,
        up - stopping
    );
}
