//! The one HTTP client of xtask, for setup and readiness requests to services on loopback (load
//! comes from wrk, never from here): a thin layer over ureq, plain HTTP only.
//!
//! A new connection per request (`Connection: close`, no pool kept between calls) and never a
//! proxy: a measured request costs the same every time. The whole exchange has one deadline,
//! whatever the server does.

use base64::prelude::{BASE64_STANDARD, Engine as _};
use std::time::Duration;
use ureq::http::HeaderMap;

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header `name` (any case), if its value is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> Result<serde_json::Value, String> {
        serde_json::from_slice(&self.body)
            .map_err(|e| format!("the answer is not JSON ({e}): {}", self.excerpt()))
    }

    /// The string member `key` at the top level of the JSON object of the body (a nested
    /// member of the same name does not count).
    pub fn json_string(&self, key: &str) -> Result<String, String> {
        self.json()?
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("no string \"{key}\" in {}", self.excerpt()))
    }

    /// The start of the body, for error messages about answers that may be long.
    fn excerpt(&self) -> String {
        const MAX: usize = 300;
        let text = self.text();
        match text.char_indices().nth(MAX) {
            Some((at, _)) => format!("{}...", &text[..at]),
            None => text,
        }
    }

    /// The response when its status is 2xx; otherwise an error naming `what`, with the status
    /// and the start of the body.
    pub fn ok(self, what: &str) -> Result<Response, String> {
        if (200..300).contains(&self.status) {
            Ok(self)
        } else {
            Err(format!(
                "{what}: HTTP {}: {}",
                self.status,
                self.text().chars().take(400).collect::<String>()
            ))
        }
    }
}

/// The `Authorization` value of HTTP Basic credentials (RFC 7617).
pub fn basic(username: &str, password: &str) -> String {
    format!(
        "Basic {}",
        BASE64_STANDARD.encode(format!("{username}:{password}"))
    )
}

/// Sends `method path` with `headers` and `body` to `address` (`host:port`) and reads the whole
/// answer, all within `timeout`. `Host`, `Connection: close` and `Content-Length` are added.
/// Any status is an answer (see [`Response::ok`]); redirects are not followed.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Result<Response, String> {
    let url = format!("http://{address}{path}");
    let context = |e: String| format!("{method} {url}: {e}");
    let error = |e: ureq::Error| match e {
        ureq::Error::Timeout(_) => format!("no complete answer within {timeout:?}"),
        e => e.to_string(),
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .build()
        .into();
    let mut builder = ureq::http::Request::builder()
        .method(method)
        .uri(&url)
        .header("Connection", "close");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let request = builder.body(body).map_err(|e| context(e.to_string()))?;
    let (parts, mut answer) = agent
        .run(request)
        .map_err(|e| context(error(e)))?
        .into_parts();
    // No size limit: the benchmark fetches lists of tens of megabytes through here.
    let body = answer
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()
        .map_err(|e| context(error(e)))?;
    Ok(Response {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Instant;

    /// A one-shot server on loopback: reads one request, answers `answer`, closes. Returns its
    /// address and the request it read.
    fn serve_once(answer: &'static [u8]) -> (String, std::thread::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 1024];
            // Until the head and the body its Content-Length announces are in.
            loop {
                let n = stream.read(&mut buffer).unwrap();
                request.extend_from_slice(&buffer[..n]);
                if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&request[..end]).to_lowercase();
                    let length: usize = head
                        .split("content-length: ")
                        .nth(1)
                        .and_then(|rest| rest.split("\r\n").next())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length || n == 0 {
                        break;
                    }
                }
            }
            stream.write_all(answer).unwrap();
            request
        });
        (address, server)
    }

    #[test]
    fn a_request_over_loopback() {
        let (address, server) = serve_once(
            b"HTTP/1.1 201 Created\r\nX-Id: 7\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n",
        );
        let response = request(
            &address,
            "POST",
            "/api/things?x=1",
            &[
                ("X-Access-Token", "t0k"),
                ("Content-Type", "application/json"),
            ],
            b"{\"name\": \"n\"}",
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(response.status, 201);
        assert_eq!(response.header("x-id"), Some("7"));
        assert_eq!(response.text(), "{\"a\":1}");
        // Header names go out in lower case (HTTP/1.1 names are case-insensitive).
        let sent = String::from_utf8(server.join().unwrap())
            .unwrap()
            .to_lowercase();
        assert!(
            sent.starts_with("post /api/things?x=1 http/1.1\r\n"),
            "{sent}"
        );
        for line in [
            format!("host: {address}"),
            "connection: close".to_owned(),
            "content-length: 13".to_owned(),
            "x-access-token: t0k".to_owned(),
            "content-type: application/json".to_owned(),
        ] {
            assert!(
                sent.contains(&format!("\r\n{line}\r\n")),
                "{line} in {sent}"
            );
        }
        assert!(sent.ends_with("\r\n\r\n{\"name\": \"n\"}"), "{sent}");
    }

    fn answer(body: &str) -> Response {
        Response {
            status: 200,
            headers: HeaderMap::new(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_string_member_is_taken_from_the_top_level_only() {
        // The nested "id" comes first in the text: a text search would find it.
        let json = r#"{"owner": {"id": "nested"}, "id": "top\u0041", "n": 1}"#;
        assert_eq!(answer(json).json_string("id").as_deref(), Ok("topA"));
        assert!(answer(json).json_string("n").is_err(), "not a string");
        assert!(
            answer(r#"{"owner": {"id": "nested"}}"#)
                .json_string("id")
                .is_err()
        );
        assert!(answer("[]").json_string("id").is_err());
        assert!(answer("not json").json_string("id").is_err());
    }

    #[test]
    fn long_answers_are_shortened_in_errors() {
        let long = format!("{{\"pad\": \"{}\"}}", "x".repeat(10_000));
        let error = answer(&long).json_string("id").unwrap_err();
        assert!(error.len() < 400 && error.ends_with("..."), "{error}");
        let error = answer(&"x".repeat(10_000)).json().unwrap_err();
        assert!(error.len() < 500 && error.ends_with("..."), "{error}");
    }

    #[test]
    fn basic_credentials_are_padded_base64() {
        assert_eq!(basic("checker", "pw"), "Basic Y2hlY2tlcjpwdw==");
        assert_eq!(
            basic("Aladdin", "open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
    }

    #[test]
    fn an_error_status_is_an_error_from_ok() {
        let (address, server) =
            serve_once(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nno such x");
        let response = request(&address, "GET", "/x", &[], b"", Duration::from_secs(10)).unwrap();
        server.join().unwrap();
        assert_eq!(response.status, 404);
        assert_eq!(
            response.ok("fetch x").err().as_deref(),
            Some("fetch x: HTTP 404: no such x")
        );
    }

    #[test]
    fn a_connection_closed_mid_body_is_an_error() {
        let (address, server) =
            serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
        let error = request(&address, "GET", "/", &[], b"", Duration::from_secs(10)).unwrap_err();
        server.join().unwrap();
        assert!(
            error.starts_with(&format!("GET http://{address}/: ")),
            "{error}"
        );
    }

    #[test]
    fn a_silent_server_runs_into_the_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        // Accepted by the kernel's backlog, never answered.
        let started = Instant::now();
        let error =
            request(&address, "GET", "/", &[], b"", Duration::from_millis(300)).unwrap_err();
        assert!(error.contains("no complete answer within"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(5));
        drop(listener);
    }

    #[test]
    fn a_closed_port_is_an_error() {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        assert!(request(&address, "GET", "/", &[], b"", Duration::from_secs(5)).is_err());
        assert!(
            request(
                "not an address",
                "GET",
                "/",
                &[],
                b"",
                Duration::from_secs(5)
            )
            .is_err()
        );
    }
}
