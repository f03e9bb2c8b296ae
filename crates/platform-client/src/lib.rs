//! Adapters of the domain's `PlatformIdentity` port (the companion meeting platform).
//!
//! [`StaticPlatform`] reads users from a TOML file (`platform.static_file`): the embedded
//! default and the test double. Without a file it knows nobody, so platform credentials are
//! simply refused.

mod static_file;

pub use static_file::{PlatformFileError, StaticPlatform};
