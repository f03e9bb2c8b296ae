//! `roomlink`: the service and its admin commands. See `docs/operations.md`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use roomlink::settings::Settings;
use roomlink::{admin, commands, init_logging};
use roomlink_domain::access::Role;
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
    /// Manage enterprises and service users (exit codes: 0 ok, 1 refused, 2 usage, 3 unavailable).
    Admin {
        #[command(subcommand)]
        what: Admin,
    },
}

#[derive(Subcommand)]
enum Admin {
    /// Create, list, show, limit and delete enterprises (tenants).
    Enterprise {
        #[command(subcommand)]
        action: EnterpriseAction,
    },
    /// Create, list, disable, enable, re-password and delete service users (Basic auth).
    User {
        #[command(subcommand)]
        action: UserAction,
    },
}

#[derive(Subcommand)]
enum EnterpriseAction {
    /// Create an enterprise (the only admin command that may create a new SQLite database).
    Create {
        /// Enterprise name: 1 to 64 letters, digits, '.', '_' or '-'.
        name: String,
        /// Maximum number of endpoints (default 10000).
        #[arg(long, value_name = "N")]
        endpoint_limit: Option<u32>,
    },
    /// List every enterprise with its endpoint, listener, user and token counts.
    List {
        /// Print a JSON array instead of one line per enterprise.
        #[arg(long)]
        json: bool,
    },
    /// Show one enterprise with its counts.
    Show {
        /// Enterprise name.
        name: String,
        /// Print a JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Set an enterprise's endpoint limit (not below the endpoints it has).
    SetLimit {
        /// Enterprise name.
        name: String,
        /// The new maximum number of endpoints.
        limit: u32,
    },
    /// Delete an enterprise with everything it owns: endpoints, listeners, tokens, users.
    Delete {
        /// Enterprise name.
        name: String,
        /// Confirm deleting an enterprise that still has endpoints.
        #[arg(long)]
        yes: bool,
    },
}

/// The roles a service user may have.
#[derive(Clone, Copy, ValueEnum)]
enum ServiceRole {
    /// Read and change everything of the enterprise.
    #[value(name = "ROLE_READWRITE")]
    ReadWrite,
    /// Read only.
    #[value(name = "ROLE_READONLY")]
    ReadOnly,
}

impl From<ServiceRole> for Role {
    fn from(role: ServiceRole) -> Role {
        match role {
            ServiceRole::ReadWrite => Role::ReadWrite,
            ServiceRole::ReadOnly => Role::ReadOnly,
        }
    }
}

/// A service user, named by its enterprise and username.
#[derive(Args)]
struct UserName {
    /// Name of the user's enterprise.
    #[arg(long, value_name = "NAME")]
    enterprise: String,
    /// The user's username (what it signs in with).
    #[arg(long, value_name = "U")]
    username: String,
}

#[derive(Subcommand)]
enum UserAction {
    /// Create a service user; the password is read from standard input.
    Create {
        #[command(flatten)]
        user: UserName,
        /// The user's role.
        #[arg(long, value_enum, ignore_case = true)]
        role: ServiceRole,
        /// Read the password from standard input (required: passwords never go on the command line).
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// List service users (all enterprises' unless --enterprise), never their passwords.
    List {
        /// Only this enterprise's users.
        #[arg(long, value_name = "NAME")]
        enterprise: Option<String>,
        /// Print a JSON array instead of one line per user.
        #[arg(long)]
        json: bool,
    },
    /// Disable a user: it can no longer sign in, and the tokens it created are revoked.
    Disable {
        #[command(flatten)]
        user: UserName,
    },
    /// Enable a disabled user again (revoked tokens stay revoked).
    Enable {
        #[command(flatten)]
        user: UserName,
    },
    /// Replace a user's password (read from standard input); revokes the tokens it created.
    SetPassword {
        #[command(flatten)]
        user: UserName,
        /// Read the password from standard input (required).
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// Delete a user and revoke the tokens it created.
    Delete {
        #[command(flatten)]
        user: UserName,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let settings = match Settings::load(cli.config.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            // A refused setting fails the same way every time: refused, not unavailable.
            eprintln!("roomlink: configuration: {e}");
            return ExitCode::from(admin::EXIT_REFUSED);
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
            ExitCode::from(admin::exit_code(&e))
        }
    }
}

#[allow(clippy::print_stdout)] // the admin commands report to the operator on stdout
async fn run(command: Command, settings: &Settings) -> anyhow::Result<()> {
    let output = match command {
        Command::Serve => return commands::serve(settings).await,
        Command::Migrate => {
            let applied = commands::migrate(settings).await?;
            if applied.is_empty() {
                "the database is up to date".to_owned()
            } else {
                format!(
                    "applied {} migration(s): {}",
                    applied.len(),
                    applied.join(", ")
                )
            }
        }
        Command::Admin {
            what: Admin::Enterprise { action },
        } => enterprise(action, settings).await?,
        Command::Admin {
            what: Admin::User { action },
        } => user(action, settings).await?,
    };
    if !output.is_empty() {
        println!("{output}");
    }
    Ok(())
}

async fn enterprise(action: EnterpriseAction, settings: &Settings) -> anyhow::Result<String> {
    match action {
        EnterpriseAction::Create {
            name,
            endpoint_limit,
        } => commands::create_enterprise(settings, &name, endpoint_limit).await,
        EnterpriseAction::List { json } => admin::list_enterprises(settings, json).await,
        EnterpriseAction::Show { name, json } => {
            admin::show_enterprise(settings, &name, json).await
        }
        EnterpriseAction::SetLimit { name, limit } => {
            admin::set_limit(settings, &name, limit).await
        }
        EnterpriseAction::Delete { name, yes } => {
            admin::delete_enterprise(settings, &name, yes).await
        }
    }
}

async fn user(action: UserAction, settings: &Settings) -> anyhow::Result<String> {
    match action {
        UserAction::Create { user, role, .. } => {
            let password = commands::password_from_stdin()?;
            commands::create_user(
                settings,
                &user.enterprise,
                &user.username,
                role.into(),
                password,
            )
            .await
        }
        UserAction::List { enterprise, json } => {
            admin::list_users(settings, enterprise.as_deref(), json).await
        }
        UserAction::Disable { user } => {
            admin::set_disabled(settings, &user.enterprise, &user.username, true).await
        }
        UserAction::Enable { user } => {
            admin::set_disabled(settings, &user.enterprise, &user.username, false).await
        }
        UserAction::SetPassword { user, .. } => {
            let password = commands::password_from_stdin()?;
            admin::set_password(settings, &user.enterprise, &user.username, password).await
        }
        UserAction::Delete { user } => {
            admin::delete_user(settings, &user.enterprise, &user.username).await
        }
    }
}
