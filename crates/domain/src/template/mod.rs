//! Configuration templates (issue #36), part one: the catalog of template settings.
//! Besides the neutral keys below, a template may set raw Cisco paths ([`cisco_paths`]).
//!
//! A template sets vendor-neutral keys; each driver maps the keys it supports onto its device's
//! configuration (the Cisco mapping: the listener's `drivers::cisco_config`, checked against
//! Cisco's published schemas; docs/drivers.md). A value space here is one a user can rely on for
//! every vendor: inside what Cisco's schemas allow in CE 9.15, RoomOS 11.27 and RoomOS 26.4, and,
//! where Poly's integrator manuals (HDX, RealPresence Group Series) document the setting, inside
//! what they allow too.
//!
//! | key | value space | why |
//! |---|---|---|
//! | `time_zone` | an IANA name of [`time_zones`] | the names every Cisco generation lists (596; RoomOS 26.4's extra `America/Coyhaique` left out); Poly's Telnet API documents no time zone command, so its driver maps names later or says unsupported |
//! | `system.name` | text, 1 to 50 characters | Cisco `SystemUnit Name` takes 0 to 50; Poly `systemname` documents no bound; an empty name is refused |
//! | `standby.delay_minutes` | 1, 3, 15, 30, 60, 120, 240 or 480 | Poly `sleeptime` takes exactly these (and 0, "never", which Cisco's `Standby Delay`, 1 to 480, lacks) |
//! | `audio.default_volume` | 0 to 100 | Cisco `Audio DefaultVolume` 0 to 100; Poly documents only the current volume (`volume set`, 0 to 50), which its driver would scale |
//! | `sip.display_name` | text, 0 to 50 characters | Cisco `SIP DisplayName` takes 0 to 550; 50 keeps it as short as a system name, room for any vendor; empty clears it |
//! | `proximity.mode` | `off`, `on` | Cisco `Proximity Mode` `Off`/`On`; a Cisco feature (Poly has none by that name) |
//! | `auto_answer.mode` | `off`, `on` | Cisco `Conference AutoAnswer Mode` `Off`/`On`; Poly `autoanswer` `no`/`yes` (its `donotdisturb` is another feature, left out) |
//! | `auto_answer.mute` | `off`, `on` | Cisco `Conference AutoAnswer Mute` `Off`/`On`; Poly `muteautoanswer` `no`/`yes` |
//! | `welcome.message` | text, 0 to 128 characters | Cisco `UserInterface OSD HalfwakeMessage` (the text greeting people on the halfwake screen) takes 0 to 128 in every generation |
//!
//! Texts refuse control characters (a line break would end a command line on Cisco's SSH and
//! Poly's Telnet API) and `"` (both write texts in double quotes and neither documents an
//! escape). Literals and time zone names are taken in any case and kept in the catalog's
//! spelling; numbers must be JSON whole numbers (`70` or `70.0`, as JSON Schema's `integer`
//! admits; not `"70"` or `70.5`).
//!
//! Every refusal is the catalog's `Invalid` (400), as the endpoint PATCH rules refuse an unknown
//! field: an unknown key, a value of the wrong type, a value outside its space, each naming the
//! key, the value (shortened) and the space. No I/O: [`TemplateSettings::from_json`] reads a
//! JSON value the HTTP adapter has parsed.
//!
//! Templates are stored per enterprise ([`record`]: the bodies of create, replace and merge
//! patch; `ports::TemplateStore`); [`settings_catalog`] answers the catalog for forms. A
//! [`plan`] compares rooms with a template; a [`job`] applies it, room by room
//! ([`room_work`], [`room_outcome`]), and can be undone (`ports::TemplateJobStore` keeps jobs in the forms of
//! [`job_json`]). A template assigned to rooms is checked for [`drift`]
//! (`ports::TemplateAssignmentStore`).

mod catalog;
pub mod cisco_paths;
pub mod drift;
pub mod job;
pub mod job_json;
mod key;
mod outcome;
pub mod plan;
pub mod record;
pub mod room_outcome;
pub mod room_work;
mod settings;
mod space;
pub mod time_zones;

pub use catalog::settings_catalog;
pub use key::{STANDBY_DELAYS, SettingKey};
pub use outcome::{SettingOutcome, SettingOutcomes, WriteMode, all_unsupported};
pub use record::{Template, TemplateDraft};
pub use settings::TemplateSettings;
pub use space::{SettingValue, ValueSpace};
