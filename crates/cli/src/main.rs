//! `roomlinkctl`: see the crate documentation and `docs/roomlinkctl.md`.

use clap::Parser;
use roomlink_cli::{Cli, run};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = std::io::stderr();
    let result = run(&cli, &mut out, &mut err);
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(status), Ok(())) => ExitCode::from(status),
        (Err(e), _) => {
            let _ = writeln!(err, "roomlinkctl: {e}");
            ExitCode::from(1)
        }
        (Ok(_), Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        (Ok(_), Err(e)) => {
            let _ = writeln!(err, "roomlinkctl: cannot write the output: {e}");
            ExitCode::from(1)
        }
    }
}
