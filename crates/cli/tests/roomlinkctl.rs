//! `roomlinkctl` against a real roomlink served in-process on loopback (SQLite in a temp dir):
//! the binary as an operator runs it.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use roomlink::settings::Settings;
use roomlink_domain::access::Role;
use roomlink_domain::rules::csv::{neutralize, restore};
use roomlink_domain::secret::Secret;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_roomlinkctl");

/// A served roomlink with enterprise `bulk` (endpoint limit 30,000) and its user `ops`.
struct Service {
    url: String,
    dir: TempDir,
}

fn serve() -> Service {
    let dir = tempfile::tempdir().unwrap();
    let env: HashMap<String, String> = [
        ("ROOMLINK__SERVER__BIND", "127.0.0.1:0".to_owned()),
        ("ROOMLINK__SERVER__WORKERS", "2".to_owned()),
        (
            "ROOMLINK__DATABASE__URL",
            format!("sqlite://{}", dir.path().join("roomlink.db").display()),
        ),
        (
            "ROOMLINK__SECURITY__SERVICE_KEY_FILE",
            dir.path().join("service.key").display().to_string(),
        ),
        ("ROOMLINK__SECURITY__BCRYPT_COST", "4".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    // Its own runtime on its own thread: the CLI under test is blocking.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let settings = Settings::load_with_env(None, Some(env)).unwrap();
            let wiring = roomlink::services(&settings, true).await.unwrap();
            let services = &wiring.services;
            services
                .admin
                .create_enterprise("bulk", Some(30_000))
                .await
                .unwrap();
            services
                .admin
                .create_user("bulk", "ops", Role::ReadWrite, Secret::new("ops-password"))
                .await
                .unwrap();
            let running = roomlink::commands::start_with(&settings, wiring)
                .await
                .unwrap();
            tx.send(format!("http://{}", running.address)).unwrap();
            let _background = running.background;
            running.server.await.unwrap();
        });
    });
    let url = rx.recv().unwrap();
    Service { url, dir }
}

impl Service {
    /// `roomlinkctl` with this service's URL, an empty home (no stray config file).
    fn ctl(&self) -> Command {
        let mut command = Command::new(BIN);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("ROOMLINKCTL_URL", &self.url);
        command
    }

    fn token(&self) -> String {
        let out = run(self
            .ctl()
            .env("ROOMLINKCTL_USERNAME", "ops")
            .env("ROOMLINKCTL_PASSWORD", "ops-password")
            .args(["token", "create", "--client-name", "tests"]));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let token = text(&out.stdout).trim().to_owned();
        assert_eq!(token.len(), 32, "the token alone on stdout");
        assert!(text(&out.stderr).contains("expires"), "details on stderr");
        token
    }
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json_out(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stdout)))
}

const COLUMNS: &str = "id,name,ipaddress,port,listenerserviceid,controlprotocol,signalingprotocol,dialstyle,addressstyle,username,password,calendarid,calendartype,customdata,location,elevation,assetid";

/// One good row: canonical values (upper-case enums, compact JSON), so that what comes back
/// must be byte-for-byte what went in. Some names would be formulas in a spreadsheet.
fn good_row(i: usize) -> Vec<String> {
    const PROTOCOLS: [&str; 4] = ["TANDBERG_SSH", "POLYCOM_TELNET", "MESH", ""];
    const DIAL: [&str; 5] = ["ANNEX_O", "IP_HASH", "SIP_URI", "E164", ""];
    let name = match i % 97 {
        0 => format!("=Room {i}"),
        1 => format!("+Room {i}"),
        2 => format!("-Room {i}"),
        3 => format!("@Room {i}"),
        4 => format!("'=Room {i}"),
        5 => format!("Room \"{i}\", east"),
        _ => format!("Room {i:05}"),
    };
    let calendar = if i.is_multiple_of(3) {
        format!("room{i}@corp.example")
    } else {
        String::new()
    };
    vec![
        String::new(),
        name,
        format!("10.{}.{}.{}", i / 65536, i / 256 % 256, i % 256),
        if i.is_multiple_of(5) {
            String::new()
        } else {
            (1 + i % 65535).to_string()
        },
        String::new(),
        PROTOCOLS[i % 4].to_owned(),
        ["SIP", "H323", ""][i % 3].to_owned(),
        DIAL[i % 5].to_owned(),
        ["HOSTNAME", "IP_ADDRESS"][i % 2].to_owned(),
        format!("admin{}", i % 10),
        // Passwords are sealed (not hashed): cheap enough for every row.
        format!("pw-{i}"),
        calendar.clone(),
        if calendar.is_empty() {
            String::new()
        } else {
            "GOOGLE".to_owned()
        },
        if i.is_multiple_of(7) {
            format!("{{\"n\":{i},\"tag\":\"=x\"}}")
        } else {
            String::new()
        },
        format!("Floor {}", i % 40),
        if i.is_multiple_of(2) {
            format!("-{}.5", i % 400)
        } else {
            String::new()
        },
        format!("tag-{i}"),
    ]
}

/// A quoted line, every cell but the password guarded as the export does: `'=Room` in a file
/// means `=Room`, so a value that itself starts with `'=` must be written `''=`.
fn csv_line(cells: &[String]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let c = if i == 10 {
                c.clone()
            } else {
                neutralize(c).into_owned()
            };
            format!("\"{}\"", c.replace('"', "\"\""))
        })
        .collect();
    format!("{}\n", quoted.join(","))
}

const ROWS: usize = 24_000;

/// ~3 MB: the good rows plus three that cannot apply. Returns the file, the good rows, and
/// the lines of the bad ones with a word their reason must contain.
fn big_file(path: &Path) -> (Vec<Vec<String>>, Vec<(u64, &'static str)>) {
    let mut body = format!("{COLUMNS}\n");
    let mut good = Vec::new();
    let mut bad = Vec::new();
    let mut line = 1u64;
    for i in 0..ROWS {
        let row = good_row(i);
        body.push_str(&csv_line(&row));
        line += 1;
        good.push(row);
        if i == 10 {
            let mut r = good_row(900_000);
            r[10].clear();
            body.push_str(&csv_line(&r));
            line += 1;
            bad.push((line, "password"));
        }
        if i == 12_000 {
            let mut r = good_row(900_001);
            r[3] = "99999".into();
            body.push_str(&csv_line(&r));
            line += 1;
            bad.push((line, "port"));
        }
        if i == 23_000 {
            let mut r = good_row(900_002);
            r[11] = "room3@corp.example".into(); // row 3's, in the first part
            body.push_str(&csv_line(&r));
            line += 1;
            bad.push((line, "duplicate of line"));
        }
    }
    std::fs::write(path, body).unwrap();
    (good, bad)
}

#[test]
fn three_megabytes_validate_upload_in_parts_and_export_losslessly() {
    let service = serve();
    let token = service.token();
    let file = service.dir.path().join("rooms.csv");
    let (good, bad) = big_file(&file);
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 2_600_000, "about 3 MB: {size}");
    let bad_lines: Vec<u64> = bad.iter().map(|(l, _)| *l).collect();
    let details_lines = |report: &Value| -> Vec<u64> {
        report["details"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["line"].as_u64().unwrap())
            .collect()
    };

    // Offline validation: the plan, row by row, without the service.
    let started = Instant::now();
    let report = json_out(&run(service
        .ctl()
        .args(["csv", "validate", "--json"])
        .arg(&file)));
    eprintln!("csv validate: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(report["offline"], true);
    assert_eq!(report["create"], ROWS);
    assert_eq!(report["skip"], 3);
    assert!(report["parts"].as_u64().unwrap() >= 3, "{report}");
    assert_eq!(details_lines(&report), bad_lines);
    for ((_, word), detail) in bad.iter().zip(report["details"].as_array().unwrap()) {
        let reason = detail["reason"].as_str().unwrap();
        assert!(reason.contains(word), "{reason}");
    }

    // Upload: split at row boundaries, applied part by part, then compared with the answer.
    let started = Instant::now();
    let report = json_out(&run(service
        .ctl()
        .env("ROOMLINKCTL_TOKEN", &token)
        .args(["csv", "upload", "--json"])
        .arg(&file)));
    eprintln!(
        "csv upload of {size} bytes in {} parts: {:.1} s",
        report["parts"],
        started.elapsed().as_secs_f64()
    );
    assert!(report["parts"].as_u64().unwrap() >= 3, "{report}");
    assert_eq!(report["created"], ROWS);
    assert_eq!(report["notApplied"], 3);
    assert_eq!(report["endpoints"], ROWS);
    assert_eq!(details_lines(&report), bad_lines);

    // Export, and every field of every uploaded row comes back as it went.
    let exported = service.dir.path().join("export.csv");
    let started = Instant::now();
    let out = run(service
        .ctl()
        .env("ROOMLINKCTL_TOKEN", &token)
        .args(["csv", "export", "-o"])
        .arg(&exported));
    eprintln!("csv export: {:.1} s", started.elapsed().as_secs_f64());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("exported {ROWS} endpoints")));
    // With --inventory: the same rows, and the read-only inventory columns after them (blank:
    // these rooms were never read).
    let with_inventory = service.dir.path().join("export-inventory.csv");
    let out = run(service
        .ctl()
        .env("ROOMLINKCTL_TOKEN", &token)
        .args(["csv", "export", "--inventory", "-o"])
        .arg(&with_inventory));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("exported {ROWS} endpoints")));
    let head = std::fs::read_to_string(&with_inventory).unwrap();
    let head = head.lines().next().unwrap().to_owned();
    assert!(
        head.ends_with(",inventory.readat,inventory.lastfailure"),
        "{head}"
    );
    let mut reader = csv::Reader::from_path(&exported).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let columns: Vec<&str> = COLUMNS.split(',').collect();
    let index: Vec<usize> = columns
        .iter()
        .map(|c| header.iter().position(|h| h == c).unwrap())
        .collect();
    let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
    for record in reader.records() {
        let cells: Vec<String> = record
            .unwrap()
            .iter()
            .map(|c| restore(c).to_owned())
            .collect();
        assert!(
            cells
                .iter()
                .enumerate()
                .all(|(i, c)| header[i] != "password" || c.is_empty()),
            "passwords blank"
        );
        by_name.insert(cells[index[1]].clone(), cells);
    }
    assert_eq!(by_name.len(), ROWS);
    for row in &good {
        let exported = by_name
            .get(&row[1])
            .unwrap_or_else(|| panic!("{} missing", row[1]));
        for (c, column) in columns.iter().enumerate() {
            let value = &exported[index[c]];
            match *column {
                "id" => assert_eq!(value.len(), 24, "ids are filled"),
                "password" => assert_eq!(value, ""),
                _ => assert_eq!(value, &row[c], "{column} of {}", row[1]),
            }
        }
    }

    // The export, uploaded back as it is, changes nothing.
    let report = json_out(&run(service
        .ctl()
        .env("ROOMLINKCTL_TOKEN", &token)
        .args(["csv", "validate", "--against-service", "--json"])
        .arg(&exported)));
    assert_eq!(report["update"], ROWS);
    assert_eq!(report["skip"], 0);
}

#[test]
fn tokens_endpoints_config_and_one_line_errors() {
    let service = serve();
    let token = service.token();
    let config = service.dir.path().join("ctl.toml");
    std::fs::write(
        &config,
        format!("url = \"{}\"\ntoken = \"{token}\"\n", service.url),
    )
    .unwrap();
    let ctl = || {
        let mut c = Command::new(BIN);
        c.env_clear()
            .env("HOME", service.dir.path())
            .arg("--config")
            .arg(&config);
        c
    };

    // A small upload through the config file's credentials; then list and get.
    let small = service.dir.path().join("small.csv");
    std::fs::write(
        &small,
        "name,password,ipaddress\n=Board room,pw,127.77.0.1\nNo password,,\n",
    )
    .unwrap();
    let out = run(ctl().args(["csv", "upload"]).arg(&small));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("created 1, updated 0, 1 row did not apply"),
        "{report}"
    );
    assert!(
        report.contains("a new endpoint needs a password"),
        "{report}"
    );
    let out = run(ctl().args(["csv", "upload", "--strict"]).arg(&small));
    assert_eq!(out.status.code(), Some(3), "--strict: rows did not apply");

    let list = json_out(&run(ctl().args(["endpoints", "list", "--json"])));
    let id = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["name"], "=Board room");
    let out = run(ctl().args(["endpoints", "list"]));
    let table = text(&out.stdout);
    assert!(table.starts_with("ID "), "{table}");
    assert!(table.contains("=Board room") && table.contains(&id));
    let out = run(ctl().args(["endpoints", "get", &id]));
    assert!(text(&out.stdout).contains("127.77.0.1"));

    // Catalog errors: one line, exit status 1.
    let out = run(ctl().args(["endpoints", "get", "ffffffffffffffffffffffff"]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("roomlinkctl: NotFound ("), "{err}");
    assert!(err.contains("[HTTP 404]"), "{err}");
    let out = run(ctl().args(["endpoints", "join", &id, "--meeting", "123456789"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
    let out = run(ctl().args(["endpoints", "status"]));
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Tokens: list without values, delete by id.
    let tokens = json_out(&run(ctl().args(["token", "list", "--json"])));
    let listed = tokens.as_array().unwrap();
    assert!(listed.iter().all(|t| t["accessToken"].is_null()));
    let out = run(ctl().args(["token", "list"]));
    assert!(
        !text(&out.stdout).contains(&token),
        "values are never listed"
    );
    let other = service.token();
    let other_id = json_out(&run(service
        .ctl()
        .env("ROOMLINKCTL_TOKEN", &other)
        .args(["token", "list", "--json"])))
    .as_array()
    .unwrap()
    .iter()
    .find(|t| t["clientName"] == "tests" && t["id"] != listed[0]["id"])
    .map(|t| t["id"].as_str().unwrap().to_owned())
    .unwrap();
    let out = run(ctl().args(["token", "delete", &other_id]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(service
        .ctl()
        .env("ROOMLINKCTL_TOKEN", &other)
        .args(["endpoints", "list"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("[HTTP 401]"),
        "{}",
        text(&out.stderr)
    );
    // It names the service it asked and where the URL and the token are set.
    for hint in [
        service.url.as_str(),
        "ROOMLINKCTL_URL",
        "--url",
        "ROOMLINKCTL_TOKEN",
    ] {
        assert!(
            text(&out.stderr).contains(hint),
            "{hint}: {}",
            text(&out.stderr)
        );
    }
    assert!(!text(&out.stderr).contains(&other), "no token in errors");

    // A file that cannot be parsed at all, and an unreachable service.
    let broken = service.dir.path().join("broken.csv");
    std::fs::write(&broken, "id,colour\n,red\n").unwrap();
    let out = run(service.ctl().args(["csv", "validate"]).arg(&broken));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown column 'colour'"));
    let out = run(service
        .ctl()
        .env("ROOMLINKCTL_URL", "http://127.0.0.1:9")
        .env("ROOMLINKCTL_TOKEN", "secret-token-value")
        .args(["endpoints", "list"]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.contains("secret-token-value"));
}

#[test]
fn usage_as_a_table_as_json_and_its_sessions_as_csv() {
    let service = serve();
    let token = service.token();
    let ctl = || {
        let mut c = service.ctl();
        c.env("ROOMLINKCTL_TOKEN", &token);
        c
    };
    // A new enterprise has no call yet: the headers and the zero totals.
    let out = run(ctl().args(["usage", "--since", "7d"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with("ROOM "), "{shown}");
    assert!(shown.contains("0 calls, 0.0 minutes in call"), "{shown}");
    let out = run(ctl().args(["usage", "--by", "hour"]));
    assert!(
        text(&out.stdout).starts_with("HOUR "),
        "{}",
        text(&out.stdout)
    );
    let answer = json_out(&run(ctl().args(["usage", "--by", "weekday", "--json"])));
    assert_eq!(answer["groupBy"], "weekday");
    assert_eq!(answer["groups"], serde_json::json!([]));
    let out = run(ctl().args(["usage", "--sessions", "--since", "24h"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "endpointId,startedAt,endedAt,durationSeconds,source\n"
    );
    // Refused before anything is sent, and the service's own refusal in one line.
    let out = run(ctl().args(["usage", "--by", "month"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = run(ctl().args(["usage", "--since", "1000", "--until", "10"]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("roomlinkctl: Invalid ("), "{err}");
}

#[test]
fn without_credentials_the_error_says_how_to_give_a_token() {
    let home = tempfile::tempdir().unwrap();
    // Nothing listens on port 9: the error must come before any request.
    let ctl = || {
        let mut c = Command::new(BIN);
        c.env_clear()
            .env("HOME", home.path())
            .env("ROOMLINKCTL_URL", "http://127.0.0.1:9");
        c
    };
    for args in [
        &["endpoints", "list"][..],
        &["csv", "export"],
        &["token", "list"],
        &["endpoints", "status"],
    ] {
        let out = run(ctl().args(args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            err.trim_end(),
            format!("roomlinkctl: {}", roomlink_cli::NO_CREDENTIALS)
        );
        assert!(
            err.contains("--token") && err.contains("ROOMLINKCTL_TOKEN"),
            "{err}"
        );
    }
    // The offline plan needs none.
    let file = home.path().join("rooms.csv");
    std::fs::write(&file, "name,password\nBoardroom,pw\n").unwrap();
    let out = run(ctl().args(["csv", "validate"]).arg(&file));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn templates_are_created_listed_shown_and_planned() {
    let service = serve();
    let token = service.token();
    let ctl = || {
        let mut c = service.ctl();
        c.env("ROOMLINKCTL_TOKEN", &token);
        c
    };
    let out = run(ctl().args([
        "template",
        "create",
        "--name",
        "Oslo rooms",
        "--set",
        "time_zone=europe/oslo",
        "--set",
        "standby.delay_minutes=15",
        "--set",
        "cisco:audio ultrasound maxvolume=40",
    ]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let created = text(&out.stdout);
    let id = created
        .trim()
        .strip_prefix("created template ")
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();

    // A value outside its key's space: the service's refusal, naming the space, in one line.
    let out = run(ctl().args([
        "template",
        "create",
        "--name",
        "Loud",
        "--set",
        "audio.default_volume=150",
    ]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("roomlinkctl: Invalid ("), "{err}");
    assert!(
        err.contains("150 is not a whole number from 0 to 100"),
        "{err}"
    );

    let listed = text(&run(ctl().args(["template", "list"])).stdout);
    assert!(listed.starts_with("ID "), "{listed}");
    assert!(listed.contains("Oslo rooms"), "{listed}");
    assert!(!listed.contains("Loud"), "{listed}");
    let shown = text(&run(ctl().args(["template", "show", &id])).stdout);
    assert!(shown.contains("time_zone"), "{shown}");
    assert!(
        shown.contains("Europe/Oslo"),
        "the catalog's spelling: {shown}"
    );
    let template = json_out(&run(ctl().args(["template", "show", &id, "--json"])));
    assert_eq!(template["settings"]["standby.delay_minutes"], 15);
    // A raw Cisco path, in Cisco's spelling.
    assert_eq!(template["settings"]["cisco:Audio Ultrasound MaxVolume"], 40);

    // The enterprise has no room yet: an empty plan, and its summary.
    let out = run(ctl().args(["template", "plan", &id, "--all"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = text(&out.stdout);
    assert!(plan.starts_with("ROOM "), "{plan}");
    assert!(plan.contains("0 rooms: 0 to change"), "{plan}");
    let plan = json_out(&run(
        ctl().args(["template", "plan", &id, "--all", "--json"])
    ));
    assert_eq!(plan["summary"]["rooms"], 0);
    // No rooms chosen: refused before anything is sent.
    let out = run(ctl().args(["template", "plan", &id]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--all, --listener ID, --location TEXT or --endpoint"));

    // Applied to a room no listener serves: the job runs in the service, the command watches
    // it to its end, and the room is reported unreachable (exit 3 with --strict).
    let file = service.dir.path().join("lobby.csv");
    std::fs::write(&file, "name,password\nLobby,pw\n").unwrap();
    let out = run(ctl().args(["csv", "upload", "--strict"]).arg(&file));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(ctl().args(["template", "apply", &id, "--all", "--strict"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.starts_with("ROOM "), "{report}");
    assert!(
        report.contains("Lobby") && report.contains("EndpointHasNoListenerService"),
        "{report}"
    );
    assert!(report.contains("1/1 rooms done, 1 unreachable"), "{report}");
    let jobs = json_out(&run(ctl().args(["template", "jobs", "--json"])));
    let job = jobs[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(jobs[0]["state"], "finished", "{jobs}");
    let listed = text(&run(ctl().args(["template", "jobs"])).stdout);
    assert!(
        listed.contains(&job) && listed.contains("Oslo rooms"),
        "{listed}"
    );
    // Nothing was written, so there is nothing to undo: the service's refusal in one line.
    let out = run(ctl().args(["template", "undo", &job]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("roomlinkctl: Conflict (") && err.contains("nothing to undo"),
        "{err}"
    );
    // Without waiting: the job's id, and the job read back once it has ended.
    let out = run(ctl().args(["template", "apply", &id, "--all", "--no-wait"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let started = text(&out.stdout);
    assert!(started.starts_with("started job "), "{started}");
    let second = started.split_whitespace().nth(2).unwrap().to_owned();
    let shown = json_out(&run(ctl().args(["template", "job", &second, "--json"])));
    assert_eq!(shown["id"], second.as_str());
    assert_eq!(shown["kind"], "apply");

    // Assigned to the room, the template is checked there: unreachable, said why, so there
    // is nothing to re-apply; unassigned, it has no rooms.
    let out = run(ctl().args(["template", "assign", &id, "--all"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let assigned = text(&out.stdout);
    assert!(assigned.starts_with("ROOM "), "{assigned}");
    assert!(
        assigned.contains("1 rooms assigned: 0 in line"),
        "{assigned}"
    );
    let checked = text(&run(ctl().args(["template", "rooms", &id, "--check"])).stdout);
    assert!(
        checked.contains("Lobby") && checked.contains("unreachable"),
        "{checked}"
    );
    assert!(
        checked.contains("EndpointHasNoListenerService"),
        "{checked}"
    );
    let rooms = json_out(&run(ctl().args(["template", "rooms", &id, "--json"])));
    assert_eq!(rooms["counts"]["unreachable"], 1, "{rooms}");
    let out = run(ctl().args(["template", "reapply", &id]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("nothing to re-apply"),
        "{}",
        text(&out.stderr)
    );
    let out = run(ctl().args(["template", "unassign", &id, "--all", "--json"]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_out(&out)["counts"]["assigned"], 0);
}
