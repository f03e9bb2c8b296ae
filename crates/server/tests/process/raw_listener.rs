//! The parts of a hand-written listener service that the fault and shutdown tests share: they
//! misbehave on purpose, which no real listener (or the simulator) would do.

use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Reads a request's head (200 ms per read): its request line and the stream, or `None` when
/// the client went away first. The body, if any, is never needed.
pub fn read_head(stream: TcpStream) -> Option<(String, TcpStream)> {
    stream.set_nonblocking(false).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .ok()?;
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    Some((request_line, reader.into_inner()))
}

/// Answers `GET /v1/info` as listener 2.25.0 with the usual commands would, then closes.
pub fn answer_info(stream: &mut TcpStream) {
    let info = json!({
        "version": "2.25.0", "protocol": 1,
        "commands": ["join", "hangup", "senddtmf", "mutemicrophone", "unmutemicrophone", "status"],
        "controlProtocols": ["TANDBERG_SSH", "TANDBERG_HTTP", "POLYCOM_HTTP_HDX", "MESH"],
        "capabilities": ["JOIN", "HANGUP", "STATUS"]
    })
    .to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Listener-Version: 2.25.0\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{info}",
        info.len()
    );
}
