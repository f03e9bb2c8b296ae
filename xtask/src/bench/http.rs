//! Just enough HTTP/1.1 (std only) for the benchmark's setup requests: one request per
//! connection, a deadline on each, chunked answers decoded. Load itself comes from wrk.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub struct Response {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body, or an error naming `what` when the status is not 2xx.
    pub fn ok(self, what: &str) -> Result<Response, String> {
        if (200..300).contains(&self.status) {
            Ok(self)
        } else {
            let text = self.text();
            Err(format!(
                "{what}: HTTP {}: {}",
                self.status,
                text.chars().take(400).collect::<String>()
            ))
        }
    }
}

/// Sends one request to `address` (`host:port`) and reads the whole answer within `timeout`.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Result<Response, String> {
    let started = Instant::now();
    let fail = |e: std::io::Error| format!("{method} http://{address}{path}: {e}");
    let mut stream = TcpStream::connect(address).map_err(fail)?;
    stream.set_read_timeout(Some(timeout)).map_err(fail)?;
    stream.set_write_timeout(Some(timeout)).map_err(fail)?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).map_err(fail)?;
    stream.write_all(body).map_err(fail)?;

    let mut raw = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        if started.elapsed() > timeout {
            return Err(format!(
                "{method} http://{address}{path}: no complete answer within {timeout:?}"
            ));
        }
        let n = stream.read(&mut buffer).map_err(fail)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buffer[..n]);
    }
    parse(&raw).map_err(|e| format!("{method} http://{address}{path}: {e}"))
}

fn parse(raw: &[u8]) -> Result<Response, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer has no header end")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("the answer has no status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(rest)?
    } else {
        rest.to_vec()
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::with_capacity(rest.len());
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk has no size line")?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            return Err("the answer ends inside a chunk".to_owned());
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// Every string value of `"key":"..."` in compact JSON, in order (no escapes expected).
pub fn json_strings(json: &str, key: &str) -> Vec<String> {
    let pattern = format!("\"{key}\":\"");
    json.match_indices(&pattern)
        .filter_map(|(at, _)| {
            let start = at + pattern.len();
            json[start..]
                .find('"')
                .map(|len| json[start..start + len].to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_answers_are_decoded() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        let response = parse(raw).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.body, b"abcde");
        assert_eq!(response.header("content-type"), Some("a/b"));
    }

    #[test]
    fn json_strings_finds_only_the_exact_key() {
        let json = r#"[{"id":"a1","listenerServiceId":"x"},{"id":"b2"}]"#;
        assert_eq!(json_strings(json, "id"), ["a1", "b2"]);
    }
}
