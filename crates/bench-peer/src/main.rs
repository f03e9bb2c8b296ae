//! The comparison peer of `cargo xtask bench` (see `docs/benchmarks.md`):
//!
//! - `bench-peer serve --bind ADDR --body FILE [--content-type TYPE] [--workers N]`: a bare
//!   actix-web server answering every `GET` with the bytes of `FILE`. It prints
//!   `listening on http://ADDR` once bound (port 0 picks a free port).
//! - `bench-peer bcrypt --cost N [--iterations N]`: hashes a password once at cost `N`, then
//!   times `N` verifies on one thread and prints `verify_ms <milliseconds per verify>`.

use actix_web::{App, HttpResponse, HttpServer, web};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("bcrypt") => time_bcrypt(&args[1..]),
        _ => Err(
            "usage: bench-peer serve --bind ADDR --body FILE [--content-type TYPE] [--workers N]\n       bench-peer bcrypt --cost N [--iterations N]"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("bench-peer: {reason}");
            ExitCode::FAILURE
        }
    }
}

/// The value following `--name`, if given.
fn option<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn number(args: &[String], name: &str, default: u32) -> Result<u32, String> {
    option(args, name).map_or(Ok(default), |text| {
        text.parse()
            .map_err(|_| format!("{name}: expected a whole number, got {text:?}"))
    })
}

fn serve(args: &[String]) -> Result<(), String> {
    let bind = option(args, "--bind").ok_or("serve: --bind ADDR is required")?;
    let file = option(args, "--body").ok_or("serve: --body FILE is required")?;
    let content_type = option(args, "--content-type")
        .unwrap_or("application/json")
        .to_owned();
    let workers = number(args, "--workers", 0)?;
    let body = web::Bytes::from(std::fs::read(file).map_err(|e| format!("{file}: {e}"))?);

    actix_web::rt::System::new().block_on(async move {
        let answer = move || {
            let body = body.clone();
            let content_type = content_type.clone();
            async move {
                HttpResponse::Ok()
                    .insert_header(("Content-Type", content_type))
                    .body(body)
            }
        };
        let mut server =
            HttpServer::new(move || App::new().default_service(web::get().to(answer.clone())));
        if workers > 0 {
            server = server.workers(workers as usize);
        }
        let server = server
            .bind(bind)
            .map_err(|e| format!("cannot listen on {bind}: {e}"))?;
        let addresses = server.addrs();
        let running = server.run();
        let mut out = std::io::stdout();
        for address in addresses {
            writeln!(out, "listening on http://{address}").map_err(|e| e.to_string())?;
        }
        out.flush().map_err(|e| e.to_string())?;
        running.await.map_err(|e| e.to_string())
    })
}

fn time_bcrypt(args: &[String]) -> Result<(), String> {
    let cost = number(args, "--cost", bcrypt::DEFAULT_COST)?;
    let iterations = number(args, "--iterations", 20)?.max(1);
    let password = "bench-peer-timing-password";
    let hash = bcrypt::hash(password, cost).map_err(|e| e.to_string())?;
    let started = Instant::now();
    for _ in 0..iterations {
        if !bcrypt::verify(password, &hash).map_err(|e| e.to_string())? {
            return Err("bcrypt verify failed on its own hash".to_owned());
        }
    }
    let per_verify = started.elapsed().as_secs_f64() * 1000.0 / f64::from(iterations);
    writeln!(std::io::stdout(), "verify_ms {per_verify:.3}").map_err(|e| e.to_string())
}
