//! `roomlink`: the service and its admin commands. See `docs/operations.md`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use roomlink::settings::Settings;
use roomlink::{admin, commands, init_logging, maintenance};
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
    /// Manage enterprises, service users, the service key and backups (exit codes: 0 ok,
    /// 1 refused, 2 usage, 3 unavailable).
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
    /// Make a new service key current and re-seal every endpoint password and listener
    /// secret under it, online (the old key stays readable until done).
    RotateKey {
        /// Keep the current key and only re-seal what is still under a previous one (finishes
        /// an interrupted run, or one where instances had not reloaded yet).
        #[arg(long)]
        resume: bool,
        /// Afterwards, remove the previous keys from the key file (once nothing uses them).
        #[arg(long)]
        forget_previous: bool,
    },
    /// Copy the embedded SQLite database to FILE, online and consistent.
    Backup {
        /// The copy to write (must not exist).
        file: PathBuf,
    },
    /// Replace the embedded SQLite database with a backup (stop every instance first); the
    /// database it replaces is kept beside it.
    Restore {
        /// The backup to restore.
        file: PathBuf,
        /// Confirm replacing the database.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand)]
enum EnterpriseAction {
    /// Create an enterprise.
    Create {
        /// Enterprise name: 1 to 64 letters, digits, '.', '_' or '-'.
        name: String,
        /// Maximum number of endpoints (default 10000).
        #[arg(long, value_name = "N")]
        endpoint_limit: Option<u32>,
        /// Start a new SQLite database (and key) if there is none yet. Without it, a missing
        /// database is refused: usually the command runs from the wrong directory.
        #[arg(long)]
        create_database: bool,
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
    let log = init_logging(&settings);
    let outcome = actix_web::rt::System::new()
        .block_on(run(cli.command.unwrap_or(Command::Serve), &settings));
    // Every queued log line out before the last word.
    drop(log);
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
        Command::Admin {
            what:
                Admin::RotateKey {
                    resume,
                    forget_previous,
                },
        } => maintenance::rotate_key(settings, resume, forget_previous).await?,
        Command::Admin {
            what: Admin::Backup { file },
        } => maintenance::backup(settings, &file).await?,
        Command::Admin {
            what: Admin::Restore { file, yes },
        } => maintenance::restore(settings, &file, yes).await?,
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
            create_database,
        } => commands::create_enterprise(settings, &name, endpoint_limit, create_database).await,
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
