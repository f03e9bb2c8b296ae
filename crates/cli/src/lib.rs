//! `roomlinkctl`: batch and scripting client of the roomlink API.
//!
//! It reuses the domain's CSV rules (parse, plan, export format) so that `csv validate` says
//! exactly what the service will do, and it knows nothing of the service's adapters.

pub mod audit;
pub mod client;
pub mod commands;
pub mod config;
pub mod csvcmd;
pub mod inventory;
pub mod output;
pub mod split;
pub mod templates;
pub mod usage;
pub mod webhooks;

use clap::{Args, Parser, Subcommand};
use client::{CliError, Client};
use csvcmd::PlanOptions;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "roomlinkctl",
    version,
    about = "Batch and scripting client of the roomlink API",
    after_help = "Exit status: 0 done; 1 failed (one line on stderr: the service's error name, code and message, or the reason); 2 bad usage; 3 --strict and some rows do not (or did not) apply."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Global {
    /// The service's base URL [default: http://127.0.0.1:8080]
    #[arg(long, env = "ROOMLINKCTL_URL", global = true)]
    pub url: Option<String>,
    /// An access token (wins over a username and password)
    #[arg(long, env = "ROOMLINKCTL_TOKEN", global = true, hide_env_values = true)]
    pub token: Option<String>,
    /// A service user, for Basic authentication (and `token create`)
    #[arg(long, env = "ROOMLINKCTL_USERNAME", global = true)]
    pub username: Option<String>,
    /// The service user's password (prefer the variable or the config file: flags show in `ps`)
    #[arg(
        long,
        env = "ROOMLINKCTL_PASSWORD",
        global = true,
        hide_env_values = true
    )]
    pub password: Option<String>,
    /// A TOML file with url, token, username, password, timeout_secs
    /// [default: ~/.config/roomlinkctl.toml when it exists]
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Seconds before a request is given up [default: 300]
    #[arg(long, global = true)]
    pub timeout: Option<u64>,
    /// Machine-readable output
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Bulk load and export of endpoints as CSV
    #[command(subcommand)]
    Csv(CsvCommand),
    /// Access tokens
    #[command(subcommand)]
    Token(TokenCommand),
    /// Endpoints: list, inspect, control
    #[command(subcommand)]
    Endpoints(EndpointCommand),
    /// The audit trail: who changed what and drove which room, newest first (ROLE_READWRITE)
    Audit {
        /// Only entries about this endpoint, listener or token id
        #[arg(long)]
        target: Option<String>,
        /// Only entries by this username or token id
        #[arg(long)]
        actor: Option<String>,
        /// From this time: milliseconds since the epoch, or an age such as 24h or 7d
        #[arg(long)]
        since: Option<String>,
        /// Until this time (same forms as --since)
        #[arg(long)]
        until: Option<String>,
        /// At most this many entries
        #[arg(long, default_value_t = 100, conflicts_with = "all")]
        limit: usize,
        /// Every entry that matches
        #[arg(long)]
        all: bool,
    },
    /// How the rooms were used: calls and minutes in call per room, day, hour or weekday (UTC)
    Usage {
        /// From this time: milliseconds since the epoch, or an age such as 7d [default: 30d]
        #[arg(long)]
        since: Option<String>,
        /// Until this time (same forms as --since) [default: now]
        #[arg(long)]
        until: Option<String>,
        /// What to sum by
        #[arg(long, default_value = "room", value_parser = ["room", "day", "hour", "weekday"])]
        by: String,
        /// Every call session of the period as CSV instead
        #[arg(long, conflicts_with = "by")]
        sessions: bool,
    },
    /// What the rooms say about themselves: model, software, serial number, peripherals
    Inventory {
        /// Only rooms on exactly this software version
        #[arg(long)]
        software_version: Option<String>,
        /// Only rooms of exactly this model (the platform, else the product name)
        #[arg(long)]
        model: Option<String>,
        /// Only rooms of this listener service (its id)
        #[arg(long)]
        listener: Option<String>,
    },
    /// Webhook subscriptions and their deliveries (ROLE_READWRITE), and a local receiver
    #[command(subcommand)]
    Webhooks(WebhookCommand),
    /// Configuration templates: the same settings on many rooms
    #[command(subcommand)]
    Template(TemplateCommand),
}

/// The rooms a `template` command is for: exactly one way of choosing them.
#[derive(Debug, Args)]
pub struct RoomChoice {
    /// Every room of the enterprise
    #[arg(long, conflicts_with_all = ["listener", "location", "endpoint"])]
    all: bool,
    /// The rooms of this listener service (its id)
    #[arg(long, conflicts_with_all = ["location", "endpoint"])]
    listener: Option<String>,
    /// The rooms whose location is this text (case and surrounding spaces set aside)
    #[arg(long, conflicts_with = "endpoint")]
    location: Option<String>,
    /// These rooms (endpoint ids; repeat or comma-separate)
    #[arg(long, value_delimiter = ',')]
    endpoint: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum TemplateCommand {
    /// List the enterprise's templates
    List,
    /// One template's settings
    Show { id: String },
    /// Create a template from key=value settings (`roomlinkctl template create --name Oslo
    /// --set time_zone=Europe/Oslo --set standby.delay_minutes=15`)
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        description: Option<String>,
        /// A setting as key=value (repeat); digits are a number, anything else a text
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
    },
    /// What applying a template would change, read from the rooms: a row per room and setting
    Plan {
        id: String,
        #[command(flatten)]
        rooms: RoomChoice,
    },
    /// Apply a template to rooms as a job, watched with a progress bar until it ends; a row
    /// per room and setting with its outcome
    Apply {
        id: String,
        #[command(flatten)]
        rooms: RoomChoice,
        /// Start the job and print its id without waiting for it
        #[arg(long)]
        no_wait: bool,
        /// Exit 3 when a room was unreachable or refused a setting
        #[arg(long)]
        strict: bool,
    },
    /// Cancel a running job: no room is begun after this
    Cancel { job: String },
    /// Undo a finished (or cancelled) apply job: restore what it replaced, where the rooms
    /// still hold it
    Undo {
        job: String,
        #[arg(long)]
        no_wait: bool,
        /// Exit 3 when a room was unreachable or refused a setting
        #[arg(long)]
        strict: bool,
    },
    /// The enterprise's recent template jobs
    Jobs,
    /// One job: a row per room and setting with its outcome
    Job { id: String },
    /// Assign a template to rooms, to check them for drift from it (a room has one template)
    Assign {
        id: String,
        #[command(flatten)]
        rooms: RoomChoice,
    },
    /// End a template's assignment to rooms
    Unassign {
        id: String,
        #[command(flatten)]
        rooms: RoomChoice,
    },
    /// The rooms a template is assigned to, and their drift as last checked
    Rooms {
        id: String,
        /// Check every assigned room now first
        #[arg(long)]
        check: bool,
    },
    /// Re-apply a template to its assigned rooms found drifted, as a job
    Reapply {
        id: String,
        #[arg(long)]
        no_wait: bool,
        /// Exit 3 when a room was unreachable or refused a setting
        #[arg(long)]
        strict: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// List the enterprise's subscriptions
    List,
    /// Subscribe a URL to events; prints the signing secret, shown this once
    Create {
        url: String,
        /// Event types, comma-separated (room.offline, room.degraded, room.online,
        /// listener.offline, listener.online, call.started, call.ended, command.failed,
        /// inventory.changed, calendar.unreadable, calendar.readable, template.drifted)
        #[arg(long, value_delimiter = ',', required = true)]
        events: Vec<String>,
        #[arg(long)]
        description: Option<String>,
    },
    /// A subscription's deliveries, newest first
    Deliveries {
        id: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Send a test delivery to one subscription
    Test { id: String },
    /// Stop deliveries (events keep queueing)
    Pause { id: String },
    /// Restart deliveries: what queued goes out, oldest first
    Resume { id: String },
    /// Delete a subscription and its deliveries
    Delete { id: String },
    /// Receive deliveries here: check each signature, answer 204, print the event
    Listen {
        /// Where to listen
        #[arg(long, default_value = "127.0.0.1:9100")]
        bind: String,
        /// The subscription's signing secret (whsec_...)
        #[arg(long, env = "ROOMLINKCTL_WEBHOOK_SECRET", hide_env_values = true)]
        secret: String,
        /// Stop after this many deliveries
        #[arg(long)]
        count: Option<usize>,
    },
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The CSV file
    pub file: PathBuf,
    /// List every row, not only those that do not apply
    #[arg(long)]
    pub all: bool,
    /// Exit with status 3 when some rows do not apply
    #[arg(long)]
    pub strict: bool,
    /// Largest upload part in bytes [default and maximum: the service's bound, 1048576]
    #[arg(long)]
    pub max_part_bytes: Option<usize>,
}

#[derive(Debug, Subcommand)]
pub enum CsvCommand {
    /// Show what an upload would do, row by row, without changing anything
    Validate {
        #[command(flatten)]
        plan: PlanArgs,
        /// Check against the service's current endpoints, listeners and endpoint limit
        /// (otherwise every id and listener the file names is assumed to exist)
        #[arg(long)]
        against_service: bool,
    },
    /// Upload (split into parts under the size bound), then report rows that did not apply
    Upload {
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Download every endpoint as CSV (passwords blank)
    Export {
        /// Write to this file instead of standard output
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Add read-only inventory.* columns: what each room reported at its last inventory
        /// read (csv upload ignores them)
        #[arg(long)]
        inventory: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token from the username and password; prints the token
    Create {
        /// Lifetime (as the service accepts it, e.g. milliseconds)
        #[arg(long)]
        duration: Option<String>,
        /// A name for the client the token is for
        #[arg(long)]
        client_name: Option<String>,
    },
    /// List the enterprise's tokens (without their values)
    List,
    /// Delete a token by id (from `token list`) or by value
    Delete {
        // Not named `token`: that is the global --token's id, which clap would merge with it.
        #[arg(value_name = "ID_OR_TOKEN")]
        key: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum EndpointCommand {
    /// List the enterprise's endpoints
    List,
    /// Show one endpoint
    Get { id: String },
    /// Dial into a meeting (no --meeting: the IVR)
    Join {
        id: String,
        /// The numeric meeting id
        #[arg(long)]
        meeting: Option<String>,
        #[arg(long)]
        passcode: Option<String>,
        /// PROD, STAGE or QA
        #[arg(long)]
        cluster: Option<String>,
        /// MEETME, BROADCAST_ATTENDEE, ... (default: guessed from the meeting id)
        #[arg(long)]
        meeting_type: Option<String>,
    },
    /// Hang up
    Hangup { id: String },
    /// Send DTMF tones (digits, # and *)
    Dtmf { id: String, digits: String },
    /// Mute the microphone
    Mute { id: String },
    /// Unmute the microphone
    Unmute { id: String },
    /// Call status of one endpoint, or of all
    Status { id: Option<String> },
}

/// The error of a command that talks to the service when no credentials were given.
pub const NO_CREDENTIALS: &str = "no access token: give one with --token or the ROOMLINKCTL_TOKEN environment variable (or `token` in the config file), or a service user with --username and --password (ROOMLINKCTL_USERNAME, ROOMLINKCTL_PASSWORD)";

fn client(global: &Global) -> Result<Client, CliError> {
    let connection = config::resolve(&config::Given {
        config: global.config.clone(),
        url: global.url.clone(),
        token: global.token.clone(),
        username: global.username.clone(),
        password: global.password.clone(),
        timeout_secs: global.timeout,
    })?;
    // Every request needs credentials: say where they go instead of letting the service
    // answer NotAuthenticated.
    if matches!(connection.auth, client::Auth::None) {
        return Err(CliError::other(NO_CREDENTIALS));
    }
    Client::new(
        &connection.url,
        connection.auth,
        Duration::from_secs(connection.timeout_secs.max(1)),
    )
}

fn plan_options<'a>(plan: &'a PlanArgs, global: &Global) -> PlanOptions<'a> {
    PlanOptions {
        file: &plan.file,
        max_part_bytes: plan.max_part_bytes,
        all: plan.all,
        strict: plan.strict,
        as_json: global.json,
    }
}

/// Runs a command; `Ok` holds the exit status (0, or 3 under `--strict`).
pub fn run(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    let g = &cli.global;
    match &cli.command {
        Command::Csv(CsvCommand::Validate {
            plan,
            against_service,
        }) => {
            let service = if *against_service {
                Some(client(g)?)
            } else {
                None
            };
            csvcmd::validate(service.as_ref(), &plan_options(plan, g), out)
        }
        Command::Csv(CsvCommand::Upload { plan }) => {
            csvcmd::upload(&client(g)?, &plan_options(plan, g), out)
        }
        Command::Csv(CsvCommand::Export { output, inventory }) => {
            csvcmd::export(&client(g)?, output.as_deref(), *inventory, out)
        }
        Command::Token(command) => {
            let c = client(g)?;
            match command {
                TokenCommand::Create {
                    duration,
                    client_name,
                } => commands::token_create(
                    &c,
                    duration.as_deref(),
                    client_name.as_deref(),
                    g.json,
                    out,
                    err,
                ),
                TokenCommand::List => commands::token_list(&c, g.json, out),
                TokenCommand::Delete { key } => commands::token_delete(&c, key, g.json, out),
            }
            .map(|()| 0)
        }
        Command::Endpoints(command) => {
            let c = client(g)?;
            match command {
                EndpointCommand::List => commands::endpoints_list(&c, g.json, out),
                EndpointCommand::Get { id } => commands::endpoints_get(&c, id, g.json, out),
                EndpointCommand::Join {
                    id,
                    meeting,
                    passcode,
                    cluster,
                    meeting_type,
                } => {
                    let query: Vec<(&str, &str)> = [
                        ("meetingid", meeting),
                        ("passcode", passcode),
                        ("cluster", cluster),
                        ("meetingtype", meeting_type),
                    ]
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, v.as_deref()?)))
                    .collect();
                    commands::control(&c, id, "join", &query, g.json, out)
                }
                EndpointCommand::Hangup { id } => {
                    commands::control(&c, id, "hangup", &[], g.json, out)
                }
                EndpointCommand::Dtmf { id, digits } => {
                    commands::control(&c, id, "senddtmf", &[("dtmfString", digits)], g.json, out)
                }
                EndpointCommand::Mute { id } => {
                    commands::control(&c, id, "mutemicrophone", &[], g.json, out)
                }
                EndpointCommand::Unmute { id } => {
                    commands::control(&c, id, "unmutemicrophone", &[], g.json, out)
                }
                EndpointCommand::Status { id } => commands::status(&c, id.as_deref(), g.json, out),
            }
            .map(|()| 0)
        }
        Command::Audit {
            target,
            actor,
            since,
            until,
            limit,
            all,
        } => {
            if *limit == 0 {
                return Err(CliError::other("--limit must be at least 1"));
            }
            let query = audit::AuditQuery {
                target: target.as_deref(),
                actor: actor.as_deref(),
                since: since.as_deref(),
                until: until.as_deref(),
                limit: (!*all).then_some(*limit),
            };
            audit::audit(&client(g)?, &query, g.json, out).map(|()| 0)
        }
        Command::Usage {
            since,
            until,
            by,
            sessions,
        } => {
            let args = usage::UsageArgs {
                since: since.as_deref(),
                until: until.as_deref(),
                by,
                sessions: *sessions,
            };
            usage::usage(&client(g)?, &args, g.json, out).map(|()| 0)
        }
        Command::Webhooks(WebhookCommand::Listen {
            bind,
            secret,
            count,
        }) => webhooks::listen(bind, secret, *count, out).map(|()| 0),
        Command::Webhooks(command) => {
            use webhooks::WebhookAction as A;
            let action = match command {
                WebhookCommand::List => A::List,
                WebhookCommand::Create {
                    url,
                    events,
                    description,
                } => A::Create {
                    url,
                    events,
                    description: description.as_deref(),
                },
                WebhookCommand::Deliveries { id, limit } => A::Deliveries { id, limit: *limit },
                WebhookCommand::Test { id } => A::Test { id },
                WebhookCommand::Pause { id } => A::Pause { id },
                WebhookCommand::Resume { id } => A::Resume { id },
                WebhookCommand::Delete { id } => A::Delete { id },
                WebhookCommand::Listen { .. } => unreachable!("handled above"),
            };
            webhooks::webhooks(&client(g)?, &action, g.json, out).map(|()| 0)
        }
        Command::Template(command) => {
            use templates::TemplateAction as A;
            let mut strict_job = false;
            let action = match command {
                TemplateCommand::List => A::List,
                TemplateCommand::Show { id } => A::Show { id },
                TemplateCommand::Create {
                    name,
                    description,
                    settings,
                } => A::Create {
                    name,
                    description: description.as_deref(),
                    settings,
                },
                TemplateCommand::Plan { id, rooms } => A::Plan {
                    id,
                    rooms: rooms_of("plan", rooms)?,
                },
                TemplateCommand::Apply {
                    id,
                    rooms,
                    no_wait,
                    strict,
                } => {
                    strict_job = *strict;
                    A::Apply {
                        id,
                        rooms: rooms_of("apply", rooms)?,
                        wait: !no_wait,
                    }
                }
                TemplateCommand::Undo {
                    job,
                    no_wait,
                    strict,
                } => {
                    strict_job = *strict;
                    A::Undo {
                        job,
                        wait: !no_wait,
                    }
                }
                TemplateCommand::Cancel { job } => A::Cancel { job },
                TemplateCommand::Jobs => A::Jobs,
                TemplateCommand::Job { id } => A::Job { id },
                TemplateCommand::Assign { id, rooms } => A::Assign {
                    id,
                    rooms: rooms_of("assign", rooms)?,
                },
                TemplateCommand::Unassign { id, rooms } => A::Unassign {
                    id,
                    rooms: rooms_of("unassign", rooms)?,
                },
                TemplateCommand::Rooms { id, check } => A::AssignedRooms { id, check: *check },
                TemplateCommand::Reapply {
                    id,
                    no_wait,
                    strict,
                } => {
                    strict_job = *strict;
                    A::Reapply { id, wait: !no_wait }
                }
            };
            let end = templates::templates(&client(g)?, &action, g.json, out)?;
            Ok(if strict_job && end == templates::JobEnd::Incomplete {
                3
            } else {
                0
            })
        }
        Command::Inventory {
            software_version,
            model,
            listener,
        } => {
            let filter = inventory::InventoryFilter {
                software_version: software_version.as_deref(),
                model: model.as_deref(),
                listener: listener.as_deref(),
            };
            inventory::inventory(&client(g)?, &filter, g.json, out).map(|()| 0)
        }
    }
}

/// The rooms `--all`, `--listener`, `--location` or `--endpoint` choose for `template <verb>`.
fn rooms_of<'a>(verb: &str, choice: &'a RoomChoice) -> Result<templates::Rooms<'a>, CliError> {
    use templates::Rooms;
    match (choice.all, &choice.listener, &choice.location) {
        (true, _, _) => Ok(Rooms::All),
        (false, Some(listener), _) => Ok(Rooms::Listener(listener)),
        (false, None, Some(location)) => Ok(Rooms::Location(location)),
        (false, None, None) if !choice.endpoint.is_empty() => {
            Ok(Rooms::Endpoints(&choice.endpoint))
        }
        (false, None, None) => Err(CliError::Other(format!(
            "template {verb}: choose rooms with --all, --listener ID, --location TEXT or \
             --endpoint ID[,ID...]"
        ))),
    }
}
