//! Prints the OpenAPI document (`cargo xtask openapi` writes it to `docs/openapi.json`).

use std::io::Write;

fn main() -> std::io::Result<()> {
    std::io::stdout().write_all(roomlink_http::openapi_json().as_bytes())
}
