//! The companion platform's identity service.

use crate::error::Result;
use crate::secret::Secret;
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// Who a companion-platform user is, as the platform says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformUser {
    pub platform_id: i64,
    /// The platform username, which is also the e-mail address.
    pub username: String,
    pub enterprise_name: String,
    pub enterprise_admin: bool,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// Whether Zero Touch pairing is enabled for the user.
    pub zero_touch: bool,
}

/// The companion meeting platform's identity service.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait PlatformIdentity: Send + Sync {
    /// The user if the platform accepts this username and password; `None` if it refuses them.
    async fn verify_password(
        &self,
        username: &str,
        password: &Secret,
    ) -> Result<Option<PlatformUser>>;
    /// The user a platform access token belongs to; `None` if the token is unknown or expired.
    async fn introspect(&self, token: &Secret) -> Result<Option<PlatformUser>>;
}
