//! Real CalDAV servers for tests, two independent implementations: Radicale and Xandikos (both
//! from PyPI: `pip install radicale xandikos`; `.ci/setup` installs them), each started on a
//! free loopback port with its own storage, and killed when dropped. For this crate's tests and
//! the service's.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PYTHON: &str = "python3.11";
/// The one user of every test server.
pub const USER: &str = "roomlink-svc";
pub const PASSWORD: &str = "calendar-pw-5d1e";

pub struct CalDavServer {
    child: Child,
    port: u16,
    name: &'static str,
    checks_passwords: bool,
    _dir: tempfile::TempDir,
}

impl CalDavServer {
    /// Radicale with an htpasswd file of [`USER`] and [`PASSWORD`]. Panics (the test's
    /// failure) when it cannot start.
    pub fn radicale() -> CalDavServer {
        Self::start("Radicale", true, |port, dir| {
            let users = dir.join("users");
            std::fs::write(&users, format!("{USER}:{PASSWORD}\n")).expect("the htpasswd file");
            let mut command = Command::new(PYTHON);
            command
                .args(["-m", "radicale", "--config", ""])
                .args(["--server-hosts", &format!("127.0.0.1:{port}")])
                .arg("--storage-filesystem-folder")
                .arg(dir.join("collections"))
                .args(["--auth-type", "htpasswd", "--auth-htpasswd-filename"])
                .arg(&users)
                .args(["--auth-htpasswd-encryption", "plain"])
                .args([
                    "--rights-type",
                    "authenticated",
                    "--logging-level",
                    "warning",
                ]);
            command
        })
    }

    /// Xandikos, a second implementation: it checks no passwords (it leaves authentication to a
    /// proxy in front of it), so a wrong password cannot be tested against it.
    pub fn xandikos() -> CalDavServer {
        Self::start("Xandikos", false, |port, dir| {
            let mut command = Command::new(PYTHON);
            command
                .args(["-m", "xandikos.web", "--autocreate", "-l", "127.0.0.1"])
                .args(["-p", &port.to_string()])
                .arg("-d")
                .arg(dir.join("collections"))
                .arg("--state-dir")
                .arg(dir.join("state"));
            command
        })
    }

    fn start(
        name: &'static str,
        checks_passwords: bool,
        command: impl FnOnce(u16, &Path) -> Command,
    ) -> CalDavServer {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = command(port, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} starts ({PYTHON} -m pip install it): {e}"));
        let server = CalDavServer {
            child,
            port,
            name,
            checks_passwords,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "{name} did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// Which implementation this is, for messages.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether it refuses a wrong password (Radicale does; Xandikos checks none).
    pub fn checks_passwords(&self) -> bool {
        self.checks_passwords
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
        // The parent once: a second MKCOL is refused with 405 (it exists). A PROPFIND cannot
        // tell, as Xandikos answers a missing collection with a 207 holding a 404.
        let parent = http
            .request(method("MKCOL"), self.base_url())
            .basic_auth(USER, Some(PASSWORD))
            .send()
            .await
            .expect("the CalDAV server answers");
        assert!(
            parent.status().is_success() || parent.status().as_u16() == 405,
            "MKCOL {}: {}",
            self.base_url(),
            parent.status()
        );
        let mut steps = Vec::new();
        steps.push(("MKCALENDAR", collection.clone(), String::new()));
        for (name, ics) in objects {
            steps.push(("PUT", format!("{collection}{name}.ics"), ics.clone()));
        }
        for (verb, url, body) in steps {
            let mut request = http
                .request(method(verb), &url)
                .basic_auth(USER, Some(PASSWORD));
            // Only a PUT has a calendar object: Xandikos refuses an empty MKCALENDAR that says
            // it carries one (415).
            if verb == "PUT" {
                request = request.header("Content-Type", "text/calendar; charset=utf-8");
            }
            let answer = request
                .body(body)
                .send()
                .await
                .expect("the CalDAV server answers");
            assert!(
                answer.status().is_success(),
                "{verb} {url}: {}",
                answer.status()
            );
        }
    }
}

impl CalDavServer {
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
            .expect("the CalDAV server answers");
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

impl Drop for CalDavServer {
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
