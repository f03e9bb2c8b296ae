//! `roomlink`: the service and its admin commands. See `docs/operations.md`.

use clap::{Parser, Subcommand};
use roomlink::settings::Settings;
use roomlink::{commands, init_logging};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "roomlink",
    version,
    about = "Provision and control video-conferencing room systems"
)]
struct Cli {
    /// Configuration file (default: roomlink.toml in the working directory, if present).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate if needed, then serve HTTP until SIGINT/SIGTERM (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Create enterprises and service users.
    Admin {
        #[command(subcommand)]
        what: Admin,
    },
}

#[derive(Subcommand)]
enum Admin {
    Enterprise {
        #[command(subcommand)]
        action: EnterpriseAction,
    },
    User {
        #[command(subcommand)]
        action: UserAction,
    },
}

#[derive(Subcommand)]
enum EnterpriseAction {
    /// Create an enterprise.
    Create {
        name: String,
        /// Maximum number of endpoints (default 10000).
        #[arg(long)]
        endpoint_limit: Option<u32>,
    },
}

#[derive(Subcommand)]
enum UserAction {
    /// Create a service user; the password is read from standard input.
    Create {
        #[arg(long)]
        enterprise: String,
        #[arg(long)]
        username: String,
        /// ROLE_READWRITE or ROLE_READONLY.
        #[arg(long)]
        role: String,
        /// Read the password from standard input (required: passwords never go on the command line).
        #[arg(long, required = true)]
        password_stdin: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let settings = match Settings::load(cli.config.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("roomlink: configuration: {e}");
            return ExitCode::FAILURE;
        }
    };
    init_logging(&settings);
    let outcome = actix_web::rt::System::new()
        .block_on(run(cli.command.unwrap_or(Command::Serve), &settings));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the error and its causes.
            eprintln!("roomlink: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::print_stdout)] // the admin commands report to the operator on stdout
async fn run(command: Command, settings: &Settings) -> anyhow::Result<()> {
    match command {
        Command::Serve => commands::serve(settings).await,
        Command::Migrate => {
            let applied = commands::migrate(settings).await?;
            if applied.is_empty() {
                println!("the database is up to date");
            } else {
                println!(
                    "applied {} migration(s): {}",
                    applied.len(),
                    applied.join(", ")
                );
            }
            Ok(())
        }
        Command::Admin {
            what:
                Admin::Enterprise {
                    action:
                        EnterpriseAction::Create {
                            name,
                            endpoint_limit,
                        },
                },
        } => {
            println!(
                "{}",
                commands::create_enterprise(settings, &name, endpoint_limit).await?
            );
            Ok(())
        }
        Command::Admin {
            what:
                Admin::User {
                    action:
                        UserAction::Create {
                            enterprise,
                            username,
                            role,
                            password_stdin: _,
                        },
                },
        } => {
            let password = commands::password_from_stdin()?;
            println!(
                "{}",
                commands::create_user(settings, &enterprise, &username, &role, password).await?
            );
            Ok(())
        }
    }
}
