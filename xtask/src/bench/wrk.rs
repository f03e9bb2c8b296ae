//! Running wrk and reading its report.

use super::procs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One wrk run.
pub struct Load {
    pub url: String,
    pub threads: u32,
    pub connections: u32,
    pub duration: Duration,
    pub headers: Vec<String>,
    /// A Lua script (method, body, delay between requests).
    pub script: Option<PathBuf>,
}

impl Load {
    pub fn get(url: String, connections: u32, duration: Duration) -> Load {
        Load {
            url,
            threads: 1,
            connections,
            duration,
            headers: Vec::new(),
            script: None,
        }
    }

    pub fn header(mut self, header: String) -> Load {
        self.headers.push(header);
        self
    }

    pub fn script(mut self, script: PathBuf) -> Load {
        self.script = Some(script);
        self
    }

    /// A command that runs this load (for running several at once).
    pub fn command(&self) -> Command {
        let mut command = Command::new("wrk");
        command
            .arg("--latency")
            .args(["-t", &self.threads.to_string()])
            .args(["-c", &self.connections.to_string()])
            .args(["-d", &format!("{}s", self.duration.as_secs().max(1))])
            .args(["--timeout", "10s"]);
        for header in &self.headers {
            command.args(["-H", header]);
        }
        if let Some(script) = &self.script {
            command.arg("-s").arg(script);
        }
        command.arg(&self.url);
        command
    }

    pub fn deadline(&self) -> Duration {
        self.duration + Duration::from_secs(30)
    }

    pub fn run(&self, scratch: &Path) -> Result<Report, String> {
        let finished = procs::run(self.command(), None, self.deadline(), scratch)?.ok("wrk")?;
        Report::parse(&finished.stdout)
    }
}

/// What a wrk run reported.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub requests: u64,
    pub requests_per_sec: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub non_2xx: u64,
    pub socket_errors: u64,
}

impl Report {
    pub fn parse(text: &str) -> Result<Report, String> {
        let mut report = Report::default();
        let mut seen_rate = false;
        for line in text.lines().map(str::trim) {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["Requests/sec:", rate] => {
                    report.requests_per_sec = rate.parse().unwrap_or(0.0);
                    seen_rate = true;
                }
                ["50%", value] => report.p50_ms = milliseconds(value)?,
                ["99%", value] => report.p99_ms = milliseconds(value)?,
                [count, "requests", "in", ..] => report.requests = count.parse().unwrap_or(0),
                ["Non-2xx", "or", "3xx", "responses:", count] => {
                    report.non_2xx = count.parse().unwrap_or(0);
                }
                ["Socket", "errors:", rest @ ..] => {
                    report.socket_errors = rest
                        .iter()
                        .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
                        .sum();
                }
                _ => {}
            }
        }
        if !seen_rate {
            return Err(format!("wrk printed no Requests/sec:\n{text}"));
        }
        Ok(report)
    }

    /// Fails when any answer was not 2xx/3xx or when no request completed.
    pub fn checked(self, what: &str) -> Result<Report, String> {
        if self.requests == 0 {
            return Err(format!("{what}: no request completed"));
        }
        if self.non_2xx > 0 {
            return Err(format!(
                "{what}: {} of {} answers were not 2xx/3xx",
                self.non_2xx, self.requests
            ));
        }
        Ok(self)
    }
}

/// wrk's durations: `635.00us`, `2.03ms`, `1.10s`, `2.00m`.
fn milliseconds(value: &str) -> Result<f64, String> {
    let split = value
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("wrk duration without a unit: {value}"))?;
    let (number, unit) = value.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("wrk duration: {value}"))?;
    let factor = match unit {
        "us" => 0.001,
        "ms" => 1.0,
        "s" => 1000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(format!("wrk duration unit: {value}")),
    };
    Ok(number * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "Running 3s test @ http://127.0.0.1:1/x
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   805.53us  300.12us   8.35ms   90.00%
    Req/Sec    19.61k     1.22k   21.10k    80.00%
  Latency Distribution
     50%  750.00us
     75%  830.00us
     90%    1.00ms
     99%    2.03ms
  58525 requests in 3.00s, 28.10MB read
  Socket errors: connect 0, read 0, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  19508.33
Transfer/sec:      9.37MB
";

    #[test]
    fn reads_the_report() {
        let r = Report::parse(SAMPLE).unwrap();
        assert_eq!(r.requests, 58525);
        assert!((r.requests_per_sec - 19508.33).abs() < 1e-6);
        assert!((r.p50_ms - 0.75).abs() < 1e-9);
        assert!((r.p99_ms - 2.03).abs() < 1e-9);
        assert_eq!(r.non_2xx, 7);
        assert_eq!(r.socket_errors, 3);
        assert!(r.checked("x").is_err());
    }

    #[test]
    fn durations_have_units() {
        assert!((milliseconds("1.10s").unwrap() - 1100.0).abs() < 1e-9);
        assert!(milliseconds("12").is_err());
    }
}
