//! Commands and writes flowing through every instance while the cluster test breaks parts of
//! the deployment (the holding instance SIGKILLed, nats-server stopped and started): what each
//! caller saw, so that the test can show every answer was one a client can act on, nothing hung,
//! and no acknowledged write was lost.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;

/// The pause between two requests of one flow: steady traffic without flooding two cores.
const PAUSE: Duration = Duration::from_millis(20);

/// What one request met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seen {
    /// Answered with this status and (for an error) the catalog's `errorName`.
    Answered(u16, Option<String>),
    /// The instance could not be reached (connection refused or reset): the caller knows.
    Unreachable,
    /// No answer in time: what must never happen.
    Hung,
}

/// One request: the instance asked (index into the bases) and what it met.
pub(super) type Request = (usize, Seen);

pub(super) struct Traffic {
    stop: Arc<AtomicBool>,
    commands: JoinHandle<Vec<Request>>,
    writes: JoinHandle<Vec<(u64, Request)>>,
}

/// What flowed, once stopped.
pub(super) struct Flowed {
    pub commands: Vec<Request>,
    /// Each write's number (the name it set is `chaos write {n}`) and what it met.
    pub writes: Vec<(u64, Request)>,
}

impl Traffic {
    /// Mute and unmute commands to `room`, and PATCHes of `writable`'s name, each flow going
    /// round the instances at `bases` with the token `token`; `wait` bounds each request.
    pub(super) fn start(
        http: &reqwest::Client,
        token: &str,
        bases: &[String],
        room: &str,
        writable: &str,
        wait: Duration,
    ) -> Traffic {
        let stop = Arc::new(AtomicBool::new(false));
        let flow = Flow {
            http: http.clone(),
            token: token.to_owned(),
            bases: bases.to_vec(),
            stop: stop.clone(),
            wait,
        };
        let mute = format!("/api/endpoints/{room}/mutemicrophone");
        let unmute = format!("/api/endpoints/{room}/unmutemicrophone");
        let commands = flow.clone().run(Method::POST, move |n| {
            let path = if n % 2 == 0 { &unmute } else { &mute };
            (path.clone(), None)
        });
        let write = format!("/api/endpoints/{writable}");
        let writes = flow.run(Method::PATCH, move |n| {
            (
                write.clone(),
                Some(json!({"name": format!("chaos write {n}")})),
            )
        });
        Traffic {
            commands: tokio::spawn(
                async move { commands.await.into_iter().map(|(_, r)| r).collect() },
            ),
            writes: tokio::spawn(writes),
            stop,
        }
    }

    pub(super) async fn stop(self) -> Flowed {
        self.stop.store(true, Ordering::Relaxed);
        Flowed {
            commands: self.commands.await.unwrap(),
            writes: self.writes.await.unwrap(),
        }
    }
}

/// One flow of requests, one after another until stopped.
#[derive(Clone)]
struct Flow {
    http: reqwest::Client,
    token: String,
    bases: Vec<String>,
    stop: Arc<AtomicBool>,
    wait: Duration,
}

impl Flow {
    /// Request `n` (from 1) is `make(n)`'s path and body, sent to instance `n % bases`.
    async fn run(
        self,
        method: Method,
        make: impl Fn(u64) -> (String, Option<Value>),
    ) -> Vec<(u64, Request)> {
        let mut seen = Vec::new();
        let mut n = 0u64;
        while !self.stop.load(Ordering::Relaxed) {
            n += 1;
            let at = n as usize % self.bases.len();
            let (path, body) = make(n);
            let mut request = self
                .http
                .request(method.clone(), format!("{}{path}", self.bases[at]))
                .header("X-Access-Token", &self.token)
                .timeout(self.wait);
            if let Some(body) = body {
                request = request.json(&body);
            }
            seen.push((n, (at, meet(request).await)));
            tokio::time::sleep(PAUSE).await;
        }
        seen
    }
}

async fn meet(request: reqwest::RequestBuilder) -> Seen {
    match request.send().await {
        Ok(response) => {
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let name = body["errorName"].as_str().map(str::to_owned);
            Seen::Answered(status.as_u16(), name)
        }
        Err(e) if e.is_timeout() => Seen::Hung,
        Err(_) => Seen::Unreachable,
    }
}

impl Flowed {
    /// Asserts what every caller saw: commands done or refused with `ListenerOffline` or
    /// `CommandTimedOut`, writes acknowledged, and only the instance `killed` unreachable (after
    /// its death, which the test knows); nothing hung. Returns a line of figures for the log.
    pub(super) fn check(&self, killed: usize) -> String {
        let done = StatusCode::NO_CONTENT.as_u16();
        let mut offline = 0;
        let mut timed_out = 0;
        let mut unreachable = 0;
        for (at, seen) in &self.commands {
            match seen {
                Seen::Answered(status, _) if *status == done => {}
                Seen::Answered(503, Some(name)) if name == "ListenerOffline" => offline += 1,
                Seen::Answered(504, Some(name)) if name == "CommandTimedOut" => timed_out += 1,
                Seen::Unreachable if *at == killed => unreachable += 1,
                other => panic!("a command through instance {at} met {other:?}"),
            }
        }
        let mut acknowledged = 0;
        for (n, (at, seen)) in &self.writes {
            match seen {
                Seen::Answered(200, _) => acknowledged += 1,
                Seen::Unreachable if *at == killed => {}
                other => panic!("write {n} through instance {at} met {other:?}"),
            }
        }
        let commands = self.commands.len();
        let done = commands - offline - timed_out - unreachable;
        format!(
            "{commands} commands ({done} done, {offline} ListenerOffline, {timed_out} \
             CommandTimedOut, {unreachable} to the killed instance unreachable); {} writes, \
             {acknowledged} acknowledged",
            self.writes.len()
        )
    }

    /// The last write acknowledged: the name the endpoint must have now, unless a later write
    /// whose answer was lost with the killed instance won.
    pub(super) fn expected_names(&self) -> Vec<String> {
        let last = self
            .writes
            .iter()
            .rev()
            .position(|(_, (_, seen))| matches!(seen, Seen::Answered(200, _)))
            .map(|from_end| self.writes.len() - 1 - from_end)
            .expect("a write was acknowledged");
        self.writes[last..]
            .iter()
            .filter(|(_, (_, seen))| matches!(seen, Seen::Answered(200, _) | Seen::Unreachable))
            .map(|(n, _)| format!("chaos write {n}"))
            .collect()
    }
}
