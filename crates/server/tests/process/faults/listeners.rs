//! Misbehaving listeners (see the target's doc).

use super::*;
use crate::raw_listener::{answer_info, read_head};

/// The command timeout of the listener-fault test.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(1500);

/// The catalog rows the listener faults answer (docs/listener-protocol.md).
const TIMED_OUT: (u16, &str, i64) = (504, "CommandTimedOut", 1331991805);
const MESSAGING: (u16, &str, i64) = (502, "MessagingException", 72013363);
const OFFLINE: (u16, &str, i64) = (503, "ListenerOffline", 208581637);

/// How a raw listener misbehaves on commands (it answers `/v1/info` correctly).
#[derive(Debug, Clone, Copy)]
enum Misbehaviour {
    /// Reads the command and never answers.
    Hang,
    /// Closes the connection without answering.
    Close,
    /// Answers 200 with a body that is not JSON.
    GarbageBody,
    /// Answers bytes that are not HTTP at all.
    GarbageBytes,
}

/// A listener on loopback that misbehaves; stops accepting when dropped.
struct RawListener {
    base_url: String,
    stop: Arc<AtomicBool>,
    /// Commands whose request head arrived (before the misbehaviour).
    heard: Arc<AtomicUsize>,
}

impl Drop for RawListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn raw_listener(mode: Misbehaviour) -> RawListener {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let heard = Arc::new(AtomicUsize::new(0));
    let (stopped, counted) = (stop.clone(), heard.clone());
    std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    let (stopped, counted) = (stopped.clone(), counted.clone());
                    std::thread::spawn(move || serve_raw(stream, mode, &stopped, &counted));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    RawListener {
        base_url,
        stop,
        heard,
    }
}

fn serve_raw(stream: TcpStream, mode: Misbehaviour, stop: &AtomicBool, heard: &AtomicUsize) {
    let Some((request_line, mut stream)) = read_head(stream) else {
        return;
    };
    if request_line.starts_with("GET /v1/info ") {
        answer_info(&mut stream);
        return;
    }
    heard.fetch_add(1, Ordering::SeqCst);
    match mode {
        Misbehaviour::Hang => {
            // Hold the connection, answering nothing, until the client gives up.
            let mut sink = [0u8; 1024];
            while !stop.load(Ordering::Relaxed) {
                match stream.read(&mut sink) {
                    Ok(0) => return,
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => return,
                }
            }
        }
        Misbehaviour::Close => drop(stream),
        Misbehaviour::GarbageBody => {
            let body = "<<<this is not JSON>>>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Listener-Version: 2.25.0\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Misbehaviour::GarbageBytes => {
            let _ = stream.write_all(b"\x00\xffSSH-2.0-garbage\r\n\x13\x37 not http\r\n\r\n");
        }
    }
}

/// A failing join's outcome.
struct Faulty {
    what: String,
    expected: (u16, &'static str, i64),
    status: StatusCode,
    body: Value,
    elapsed: Duration,
    finished: Instant,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_listeners_fail_within_the_command_timeout() {
    let _serial = SERIAL.lock().await;
    tokio::time::timeout(Duration::from_secs(120), misbehaving_listeners())
        .await
        .expect("the test finishes within its bound");
}

async fn misbehaving_listeners() {
    let timeout_ms = COMMAND_TIMEOUT.as_millis().to_string();
    let app = Arc::new(
        TestApp::spawn_with(
            Backend::Sqlite,
            &[(
                "ROOMLINK__LISTENER__COMMAND_TIMEOUT_MS",
                timeout_ms.as_str(),
            )],
        )
        .await
        .unwrap(),
    );
    let (token, _) = app.tenant("acme").await;
    let listener = |name: &str, base_url: &str| {
        let (app, token) = (app.clone(), token.clone());
        let body = json!({"name": name, "baseUrl": base_url});
        async move {
            let (status, created) = app
                .call(Method::POST, "/api/listenerservices", &token, Some(body))
                .await;
            assert_eq!(status, StatusCode::OK, "{created}");
            created["id"].as_str().unwrap().to_owned()
        }
    };
    let endpoint = |name: &str, address: &str, listener: &str| {
        let (app, token) = (app.clone(), token.clone());
        let body = json!({
            "name": name, "ipAddress": address, "port": 22, "controlProtocol": "TANDBERG_SSH",
            "listenerServiceId": listener, "username": "admin", "password": "room-pw"
        });
        async move {
            app.create_endpoint(&token, body).await["id"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };

    // A healthy simulator; three of its rooms have listener faults.
    let (sim_address, _sim) = roomlink_listener_sim::start("127.0.0.1:0", SimConfig::default())
        .await
        .unwrap();
    let sim = format!("http://{sim_address}");
    let sim_listener = listener("Simulator", &sim).await;
    let healthy = endpoint("Healthy", "127.77.0.1", &sim_listener).await;
    let mut cases: Vec<(String, String, (u16, &'static str, i64))> = Vec::new();
    for (i, (fault, expected)) in [
        ("listener_hang", TIMED_OUT),
        ("listener_garbage", MESSAGING),
        ("listener_reset", OFFLINE),
    ]
    .into_iter()
    .enumerate()
    {
        let address = format!("127.77.0.{}", i + 2);
        let set = app
            .client
            .put(format!("{sim}/sim/endpoints/{address}/fault"))
            .json(&json!({"fault": fault}))
            .send()
            .await
            .unwrap();
        assert!(set.status().is_success(), "{fault}: {}", set.status());
        let id = endpoint(fault, &address, &sim_listener).await;
        cases.push((format!("simulator {fault}"), id, expected));
    }
    // Raw listeners that answer /v1/info and then misbehave on the command itself.
    let mut raw = Vec::new();
    for (i, (mode, expected)) in [
        (Misbehaviour::Hang, TIMED_OUT),
        (Misbehaviour::Close, OFFLINE),
        (Misbehaviour::GarbageBody, MESSAGING),
        (Misbehaviour::GarbageBytes, OFFLINE),
    ]
    .into_iter()
    .enumerate()
    {
        let server = raw_listener(mode);
        let id = listener(&format!("{mode:?}"), &server.base_url).await;
        let room = endpoint(&format!("raw {mode:?}"), &format!("127.77.1.{i}"), &id).await;
        cases.push((format!("raw listener {mode:?}"), room, expected));
        raw.push(server);
    }

    let join = |id: &str| {
        let (app, token) = (app.clone(), token.clone());
        let path = format!("/api/endpoints/{id}/join?meetingid=123456789");
        async move { app.call(Method::POST, &path, &token, None).await }
    };
    // The healthy room works (and its listener's info is cached) before the faults start.
    assert_eq!(join(&healthy).await.0, StatusCode::NO_CONTENT);

    let sim_commands = || {
        let client = app.client.clone();
        let url = format!("{sim}/sim/stats");
        async move {
            let stats: Value = client.get(url).send().await.unwrap().json().await.unwrap();
            stats["commandRequests"].as_u64().unwrap()
        }
    };
    let sim_before = sim_commands().await;
    let bound = COMMAND_TIMEOUT + Duration::from_secs(4);
    let running: Vec<_> = cases
        .into_iter()
        .map(|(what, id, expected)| {
            let call = join(&id);
            tokio::spawn(async move {
                let started = Instant::now();
                let (status, body) = tokio::time::timeout(bound, call)
                    .await
                    .unwrap_or_else(|_| panic!("{what}: no answer within {bound:?}"));
                Faulty {
                    what,
                    expected,
                    status,
                    body,
                    elapsed: started.elapsed(),
                    finished: Instant::now(),
                }
            })
        })
        .collect();

    // Meanwhile the rest of the service answers at its usual pace: measured once every faulty
    // command has reached its listener (the simulator counts a command before its fault; the
    // raw listeners once its request head arrived), so the healthy requests run beside them.
    let deadline = Instant::now() + bound;
    // The three simulator faults and the four raw listeners.
    while sim_commands().await < sim_before + 3
        || raw
            .iter()
            .map(|r| r.heard.load(Ordering::SeqCst))
            .sum::<usize>()
            < 4
    {
        assert!(
            Instant::now() < deadline,
            "the faulty commands reach their listeners"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut slowest = Duration::ZERO;
    for _ in 0..3 {
        let started = Instant::now();
        let (status, list) = app.call(Method::GET, "/api/endpoints", &token, None).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(list.as_array().unwrap().len(), 8);
        slowest = slowest.max(started.elapsed());
        let started = Instant::now();
        let (status, body) = join(&healthy).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        slowest = slowest.max(started.elapsed());
    }
    let healthy_done = Instant::now();
    assert!(
        slowest < COMMAND_TIMEOUT,
        "healthy requests waited behind the faulty ones: {slowest:?}"
    );

    for task in running {
        let f = task.await.unwrap();
        let (status, name, code) = f.expected;
        assert_eq!(
            (f.status.as_u16(), f.body["errorName"].as_str()),
            (status, Some(name)),
            "{}: {}",
            f.what,
            f.body
        );
        assert_error(f.status, &f.body, status, name, code);
        assert!(f.elapsed < bound, "{}: {:?}", f.what, f.elapsed);
        if name == "CommandTimedOut" {
            assert_eq!(f.body["errorDetails"]["commandName"], "join", "{}", f.body);
            assert!(
                f.finished > healthy_done,
                "{}: the healthy requests finished only after the hung command gave up",
                f.what
            );
        }
        let _ = writeln!(
            std::io::stderr(),
            "{}: {} {} after {:?}",
            f.what,
            f.status.as_u16(),
            name,
            f.elapsed
        );
    }
    // Nothing is left poisoned.
    assert_eq!(join(&healthy).await.0, StatusCode::NO_CONTENT);
    drop(raw);
}
