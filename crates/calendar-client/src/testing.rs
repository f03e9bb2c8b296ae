//! A real CalDAV server for tests: Radicale (from PyPI: `pip install radicale`; `.ci/run`
//! installs it), started on a free loopback port with its own storage and htpasswd file, and
//! killed when dropped. For this crate's tests and the service's.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PYTHON: &str = "python3.11";
/// The one user of every test server.
pub const USER: &str = "roomlink-svc";
pub const PASSWORD: &str = "calendar-pw-5d1e";

pub struct Radicale {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Radicale {
    /// Starts one and waits until it listens. Panics (the test's failure) when it cannot.
    pub fn start() -> Radicale {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let users = dir.path().join("users");
        std::fs::write(&users, format!("{USER}:{PASSWORD}\n")).expect("the htpasswd file");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new(PYTHON)
            .args(["-m", "radicale", "--config", ""])
            .args(["--server-hosts", &format!("127.0.0.1:{port}")])
            .arg("--storage-filesystem-folder")
            .arg(dir.path().join("collections"))
            .args(["--auth-type", "htpasswd", "--auth-htpasswd-filename"])
            .arg(&users)
            .args(["--auth-htpasswd-encryption", "plain"])
            .args([
                "--rights-type",
                "authenticated",
                "--logging-level",
                "warning",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{PYTHON} -m radicale starts (pip install radicale): {e}"));
        let radicale = Radicale {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "Radicale did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        radicale
    }

    /// The collection whose children are the rooms' calendars: a calendar account's base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/rooms/", self.port)
    }

    /// Creates the rooms' parent collection (once), the room's calendar, then PUTs each
    /// (name, iCalendar object) into it.
    pub async fn calendar(&self, room: &str, objects: &[(&str, String)]) {
        let http = reqwest::Client::new();
        let collection = format!("{}{room}/", self.base_url());
        let parent = http
            .request(method("PROPFIND"), self.base_url())
            .basic_auth(USER, Some(PASSWORD))
            .header("Depth", "0")
            .send()
            .await
            .expect("Radicale answers");
        let mut steps = Vec::new();
        if parent.status().as_u16() == 404 {
            steps.push(("MKCOL", self.base_url(), String::new()));
        }
        steps.push(("MKCALENDAR", collection.clone(), String::new()));
        for (name, ics) in objects {
            steps.push(("PUT", format!("{collection}{name}.ics"), ics.clone()));
        }
        for (verb, url, body) in steps {
            let answer = http
                .request(method(verb), &url)
                .basic_auth(USER, Some(PASSWORD))
                .header("Content-Type", "text/calendar; charset=utf-8")
                .body(body)
                .send()
                .await
                .expect("Radicale answers");
            assert!(
                answer.status().is_success(),
                "{verb} {url}: {}",
                answer.status()
            );
        }
    }
}

impl Radicale {
    /// PUTs one more (name, iCalendar object) into the room's existing calendar.
    pub async fn put(&self, room: &str, name: &str, ics: &str) {
        let url = format!("{}{room}/{name}.ics", self.base_url());
        let answer = reqwest::Client::new()
            .put(&url)
            .basic_auth(USER, Some(PASSWORD))
            .header("Content-Type", "text/calendar; charset=utf-8")
            .body(ics.to_owned())
            .send()
            .await
            .expect("Radicale answers");
        assert!(
            answer.status().is_success(),
            "PUT {url}: {}",
            answer.status()
        );
    }
}

fn method(name: &str) -> reqwest::Method {
    reqwest::Method::from_bytes(name.as_bytes()).expect("an HTTP method name")
}

impl Drop for Radicale {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A VCALENDAR of `body` (components written with `\n`; sent with CRLF as RFC 5545 says).
pub fn vcalendar(body: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//roomlink tests//EN\r\n{}END:VCALENDAR\r\n",
        body.replace('\n', "\r\n")
    )
}
