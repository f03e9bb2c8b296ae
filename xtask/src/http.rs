//! The one HTTP/1.1 client of xtask (std only), for setup and readiness requests to services on
//! loopback; load comes from wrk, never from here.
//!
//! One request per connection (`Connection: close`): the answer is complete when the server
//! closes, so no keep-alive bookkeeping is needed, and a length or chunk stream that ends early
//! is reported as truncated. The whole exchange has one deadline, whatever the server does.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
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

/// Sends `method path` with `headers` and `body` to `address` (`host:port`) and reads the whole
/// answer, all within `timeout`. `Host`, `Connection: close` and `Content-Length` are added.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Result<Response, String> {
    let context = |e: String| format!("{method} http://{address}{path}: {e}");
    let deadline = Instant::now() + timeout;
    // The time left, or an error once it is gone (a zero socket timeout would mean "none").
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("no complete answer within {timeout:?}"))
    };
    let io = |e: std::io::Error| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => {
            format!("no complete answer within {timeout:?}")
        }
        _ => e.to_string(),
    };

    let mut stream = connect(address, left().map_err(context)?).map_err(context)?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream
        .set_write_timeout(Some(left().map_err(context)?))
        .and_then(|()| stream.write_all(head.as_bytes()))
        .and_then(|()| stream.write_all(body))
        .map_err(|e| context(io(e)))?;

    let mut raw = Vec::new();
    // Large reads: the benchmark fetches lists of tens of megabytes through here.
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        stream
            .set_read_timeout(Some(left().map_err(context)?))
            .map_err(|e| context(io(e)))?;
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(context(io(e))),
        }
    }
    parse(&raw).map_err(context)
}

/// The first address of `address` that accepts a connection within `timeout`.
fn connect(address: &str, timeout: Duration) -> Result<TcpStream, String> {
    let mut last = format!("{address} resolves to no address");
    let addresses = address
        .to_socket_addrs()
        .map_err(|e| format!("bad address {address}: {e}"))?;
    for socket in addresses {
        match TcpStream::connect_timeout(&socket, timeout) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// A complete answer: status line, headers, and a body framed by chunks, by `Content-Length`
/// or by the end of the connection.
fn parse(raw: &[u8]) -> Result<Response, String> {
    let end = find(raw, b"\r\n\r\n").ok_or("the answer ends before its headers do")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| {
            let mut words = line.split(' ');
            let version = words.next()?;
            let code = words.next()?;
            (version.starts_with("HTTP/1.") && code.len() == 3)
                .then(|| code.parse().ok())
                .flatten()
        })
        .ok_or("the answer has no HTTP/1.x status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    let rest = &raw[end + 4..];
    // Chunked is the last transfer coding when present, and overrides any length.
    let chunked = response
        .header("transfer-encoding")
        .and_then(|codings| codings.rsplit(',').next())
        .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
    response.body = if chunked {
        dechunk(rest)?
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| format!("bad Content-Length {length:?}"))?;
        rest.get(..length)
            .ok_or_else(|| {
                format!(
                    "the answer ends after {} of {length} body bytes",
                    rest.len()
                )
            })?
            .to_vec()
    } else {
        rest.to_vec()
    };
    Ok(response)
}

/// The body of a chunked transfer: `SIZE[;extension]CRLF DATA CRLF ... 0 CRLF [trailers] CRLF`.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::with_capacity(rest.len());
    loop {
        let line_end = find(rest, b"\r\n").ok_or("the answer ends inside a chunk size line")?;
        let line = String::from_utf8_lossy(&rest[..line_end]);
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            // Trailers, if any, carry nothing this client needs.
            return Ok(body);
        }
        let data = rest.get(..size).ok_or("the answer ends inside a chunk")?;
        if size.checked_add(2).and_then(|end| rest.get(size..end)) != Some(b"\r\n") {
            return Err("a chunk does not end with CRLF".to_owned());
        }
        body.extend_from_slice(data);
        rest = &rest[size + 2..];
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn reads_plain_and_chunked_responses() {
        let plain = parse(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}").unwrap();
        assert_eq!((plain.status, plain.body.as_slice()), (200, &b"{}"[..]));
        let chunked = parse(
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((chunked.status, chunked.text().as_str()), (201, "abcde"));
        assert_eq!(chunked.header("content-type"), Some("a/b"));
        assert!(parse(b"garbage").is_err());
    }

    #[test]
    fn chunk_extensions_trailers_and_codings() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n\
                    A;name=\"quoted;semicolon\";other\r\n0123456789\r\n1 \r\n!\r\n0;last\r\nX-Trailer: t\r\n\r\n";
        assert_eq!(parse(raw).unwrap().body, b"0123456789!");
        // Chunked wins over a length (which a proxy might have left behind).
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n";
        assert_eq!(parse(raw).unwrap().body, b"x");
    }

    #[test]
    fn framing_without_a_length_or_with_extra_bytes() {
        // No length: the body is what came before the server closed.
        let raw = b"HTTP/1.0 200 OK\r\nServer: x\r\n\r\nuntil close";
        assert_eq!(parse(raw).unwrap().body, b"until close");
        let raw = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse(raw).unwrap().body, b"");
        // Bytes past the length are not part of the body.
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef";
        assert_eq!(parse(raw).unwrap().body, b"abc");
    }

    #[test]
    fn truncated_or_malformed_answers_are_errors() {
        for (raw, why) in [
            (&b""[..], "empty"),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", "head not finished"),
            (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "short body"),
            (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad length"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "inside a chunk"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", "no last chunk"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", "chunk longer than its size"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad size"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\nab\r\n", "size overflows"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nab\r\n", "size near usize::MAX"),
            (b"SSH-2.0-OpenSSH\r\n\r\n", "not HTTP"),
            (b"HTTP/1.1 2000 OK\r\n\r\n", "bad status"),
        ] {
            assert!(parse(raw).is_err(), "{why}");
        }
    }

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
                if let Some(end) = find(&request, b"\r\n\r\n") {
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
        let sent = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(
            sent.starts_with("POST /api/things?x=1 HTTP/1.1\r\n"),
            "{sent}"
        );
        for line in [
            format!("Host: {address}"),
            "Connection: close".to_owned(),
            "Content-Length: 13".to_owned(),
            "X-Access-Token: t0k".to_owned(),
            "Content-Type: application/json".to_owned(),
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
            headers: Vec::new(),
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
        assert!(error.contains("ends after 7 of 100"), "{error}");
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
