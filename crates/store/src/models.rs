//! Rows: the storage form of each entity, and the conversions both ways. Rows written with
//! multi-row INSERTs say `treat_none_as_default_value = false` (None is NULL, not DEFAULT),
//! without which diesel inserts them one by one on SQLite; `treat_none_as_null` makes an
//! update write NULL for None rather than skip the column. Restoring an entity
//! goes through the domain's own constructors and parsers, so a row that no longer makes sense
//! is an internal error rather than a half-valid entity.

use crate::error::corrupt;
use crate::schema::*;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sqlite::Sqlite;
use roomlink_domain::Error;
use roomlink_domain::access::{Role, RoleSet};
use roomlink_domain::audit::{Actor, ActorKind, AuditEntry, AuditRecord};
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::endpoint::value::{FieldValue, HttpUrl, TextValue};
use roomlink_domain::endpoint::{Endpoint, EndpointProfile, EndpointRecord};
use roomlink_domain::enterprise::{Enterprise, ServiceUser};
use roomlink_domain::enums::ClientDeviceType;
use roomlink_domain::ids::{
    EndpointId, EnterpriseId, FailureId, ListenerServiceId, PairingCodeId, TokenId, UserId,
};
use roomlink_domain::listener::{
    CheckError, LinkPresence, ListenerCheck, ListenerConnection, ListenerProfile, ListenerService,
};
use roomlink_domain::pairing::{PairedStatus, PairingCode};
use roomlink_domain::secret::SealedSecret;
use roomlink_domain::status::{EndpointStatus, Failure};
use roomlink_domain::token::{AccessToken, PairingGrant, TokenHash, TokenParts};

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = enterprises, check_for_backend(Pg, Sqlite))]
pub(crate) struct EnterpriseRow {
    pub id: String,
    pub name: String,
    pub endpoint_limit: i64,
    pub public_key: Option<String>,
}

impl EnterpriseRow {
    pub fn new(e: &Enterprise) -> Self {
        EnterpriseRow {
            id: e.id.as_str().to_owned(),
            name: e.name.clone(),
            endpoint_limit: i64::from(e.endpoint_limit),
            public_key: e.public_key.clone(),
        }
    }

    pub fn into_domain(self) -> Result<Enterprise, Error> {
        Ok(Enterprise {
            endpoint_limit: u32::try_from(self.endpoint_limit)
                .map_err(|_| corrupt(format!("enterprise {}: endpoint limit", self.id)))?,
            id: EnterpriseId::from_trusted(self.id),
            name: self.name,
            public_key: self.public_key,
        })
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = service_users, check_for_backend(Pg, Sqlite))]
pub(crate) struct UserRow {
    pub id: String,
    pub enterprise_id: String,
    pub username: String,
    pub password_hash: String,
    pub role: String,
    pub disabled: bool,
}

impl UserRow {
    pub fn new(u: &ServiceUser) -> Self {
        UserRow {
            id: u.id.as_str().to_owned(),
            enterprise_id: u.enterprise_id.as_str().to_owned(),
            username: u.username.clone(),
            password_hash: u.password_hash.clone(),
            role: u.role.as_str().to_owned(),
            disabled: u.disabled,
        }
    }

    pub fn into_domain(self) -> Result<ServiceUser, Error> {
        Ok(ServiceUser {
            role: Role::parse(&self.role).map_err(|e| corrupt(format!("user {}: {e}", self.id)))?,
            id: UserId::from_trusted(self.id),
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
            username: self.username,
            password_hash: self.password_hash,
            disabled: self.disabled,
        })
    }
}

/// A token as stored: its hash, never its value.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = access_tokens, check_for_backend(Pg, Sqlite))]
pub(crate) struct TokenRow {
    pub id: String,
    pub token_hash: String,
    pub enterprise_id: String,
    pub enterprise_name: String,
    pub creation_date: i64,
    pub expiration_date: i64,
    /// Role names, comma-separated.
    pub roles: String,
    pub client_name: Option<String>,
    pub creator: Option<String>,
    pub platform_id: Option<i64>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub pairing_code_id: Option<String>,
    pub pairing_endpoint_id: Option<String>,
    pub client_device_type: Option<String>,
}

impl TokenRow {
    pub fn new(t: &AccessToken) -> Self {
        let p = t.parts();
        let grant = p.pairing.as_ref();
        TokenRow {
            id: p.id.as_str().to_owned(),
            token_hash: p.hash.as_str().to_owned(),
            enterprise_id: p.enterprise_id.as_str().to_owned(),
            enterprise_name: p.enterprise_name.clone(),
            creation_date: p.creation_date,
            expiration_date: p.expiration_date,
            roles: p.roles.names().join(","),
            client_name: p.client_name.clone(),
            creator: p.creator.clone(),
            platform_id: p.platform_id,
            first_name: p.first_name.clone(),
            last_name: p.last_name.clone(),
            pairing_code_id: grant.map(|g| g.pairing_code_id.as_str().to_owned()),
            pairing_endpoint_id: grant.map(|g| g.endpoint_id.as_str().to_owned()),
            client_device_type: grant
                .and_then(|g| g.client_device_type)
                .map(|c| c.as_str().to_owned()),
        }
    }

    pub fn into_domain(self) -> Result<AccessToken, Error> {
        let bad = |what: &dyn std::fmt::Display| corrupt(format!("token {}: {what}", self.id));
        let roles = self
            .roles
            .split(',')
            .filter(|r| !r.is_empty())
            .map(Role::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(&e))?;
        let pairing = match (&self.pairing_code_id, &self.pairing_endpoint_id) {
            (Some(code), Some(endpoint)) => Some(PairingGrant {
                pairing_code_id: PairingCodeId::from_trusted(code.clone()),
                endpoint_id: EndpointId::from_trusted(endpoint.clone()),
                client_device_type: self
                    .client_device_type
                    .as_deref()
                    .map(ClientDeviceType::parse)
                    .transpose()
                    .map_err(|e| bad(&e))?,
            }),
            (None, None) => None,
            _ => return Err(bad(&"half a pairing grant")),
        };
        AccessToken::new(TokenParts {
            id: TokenId::from_trusted(self.id.clone()),
            hash: TokenHash::from_stored(self.token_hash.clone()),
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id.clone()),
            enterprise_name: self.enterprise_name.clone(),
            creation_date: self.creation_date,
            expiration_date: self.expiration_date,
            roles: RoleSet::from_roles(roles),
            client_name: self.client_name.clone(),
            creator: self.creator.clone(),
            platform_id: self.platform_id,
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            pairing,
        })
        .map_err(|e| bad(&e))
    }
}

/// Declares [`EndpointRow`] from the list of the domain's `EndpointRecord` fields (the struct
/// literals below fail to compile if the two lists differ), and `endpoint_upsert_changes!`,
/// the `SET column = excluded.column` list of the CSV upsert.
macro_rules! endpoint_row {
    ($($field:ident: $ty:ty,)*) => {
        /// An endpoint as stored: one column per profile field, the password only sealed.
        #[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
        #[diesel(
            table_name = endpoints,
            primary_key(id),
            check_for_backend(Pg, Sqlite),
            treat_none_as_null = true,
            treat_none_as_default_value = false
        )]
        pub(crate) struct EndpointRow {
            pub id: String,
            pub enterprise_id: String,
            $(pub $field: Option<$ty>,)*
            pub password_key_id: Option<String>,
            pub password_ciphertext: Option<Vec<u8>>,
        }

        impl EndpointRow {
            /// Bind parameters per row of a multi-row INSERT.
            pub const COLUMNS: usize = 4 + [$(stringify!($field)),*].len();

            pub fn new(e: &Endpoint) -> Self {
                let record = e.profile().to_record();
                let password = e.password();
                EndpointRow {
                    id: e.id().as_str().to_owned(),
                    enterprise_id: e.enterprise_id().as_str().to_owned(),
                    $($field: record.$field,)*
                    password_key_id: password.map(|p| p.key_id.clone()),
                    password_ciphertext: password.map(|p| p.ciphertext.clone()),
                }
            }

            pub fn into_domain(self) -> Result<Endpoint, Error> {
                let bad = |e: &dyn std::fmt::Display| corrupt(format!("endpoint {}: {e}", self.id));
                let record = EndpointRecord { $($field: self.$field,)* };
                let profile = EndpointProfile::from_record(record).map_err(|e| bad(&e))?;
                let password = match (self.password_key_id, self.password_ciphertext) {
                    (Some(key_id), Some(ciphertext)) => Some(SealedSecret { key_id, ciphertext }),
                    (None, None) => None,
                    _ => return Err(bad(&"half a sealed password")),
                };
                Endpoint::new(
                    EndpointId::from_trusted(self.id.clone()),
                    EnterpriseId::from_trusted(self.enterprise_id.clone()),
                    profile,
                    password,
                )
                .map_err(|e| bad(&e))
            }
        }

        /// [`EndpointRow`]s column by column: PostgreSQL inserts any number of them with one
        /// statement of one array parameter per column (`unnest`), instead of a statement per
        /// few thousand rows with a parameter per value.
        #[derive(Default)]
        pub(crate) struct EndpointColumns {
            id: Vec<String>,
            enterprise_id: Vec<String>,
            $($field: Vec<Option<$ty>>,)*
            password_key_id: Vec<Option<String>>,
            password_ciphertext: Vec<Option<Vec<u8>>>,
        }

        impl EndpointColumns {
            /// Every column with its PostgreSQL array type, in the order of the parameters.
            pub const PG_COLUMNS: &[(&str, &str)] = &[
                ("id", "text[]"),
                ("enterprise_id", "text[]"),
                $((stringify!($field), <$ty as PgColumn>::ARRAY),)*
                ("password_key_id", "text[]"),
                ("password_ciphertext", "bytea[]"),
            ];

            pub fn new(rows: &[EndpointRow]) -> Self {
                let mut columns = EndpointColumns::default();
                for r in rows {
                    columns.id.push(r.id.clone());
                    columns.enterprise_id.push(r.enterprise_id.clone());
                    $(columns.$field.push(r.$field.clone());)*
                    columns.password_key_id.push(r.password_key_id.clone());
                    columns.password_ciphertext.push(r.password_ciphertext.clone());
                }
                columns
            }

            /// Runs `sql`, whose parameters are the columns in the order of [`Self::PG_COLUMNS`].
            pub async fn execute_pg(
                self,
                sql: &str,
                c: &mut diesel_async::AsyncPgConnection,
            ) -> diesel::QueryResult<usize> {
                use diesel::sql_types::{Array, Binary, Nullable, Text};
                let query = diesel::sql_query(sql)
                    .bind::<Array<Text>, _>(self.id)
                    .bind::<Array<Text>, _>(self.enterprise_id)
                    $(.bind::<Array<Nullable<<$ty as PgColumn>::Sql>>, _>(self.$field))*
                    .bind::<Array<Nullable<Text>>, _>(self.password_key_id)
                    .bind::<Array<Nullable<Binary>>, _>(self.password_ciphertext);
                diesel_async::RunQueryDsl::execute(query, c).await
            }
        }

        macro_rules! endpoint_upsert_changes {
            () => {{
                use diesel::upsert::excluded;
                (
                    $(endpoints::$field.eq(excluded(endpoints::$field)),)*
                    endpoints::password_key_id.eq(excluded(endpoints::password_key_id)),
                    endpoints::password_ciphertext.eq(excluded(endpoints::password_ciphertext)),
                )
            }};
        }
        pub(crate) use endpoint_upsert_changes;
    };
}

/// The PostgreSQL types of a profile column's values.
pub(crate) trait PgColumn {
    type Sql: diesel::sql_types::SqlType + diesel::sql_types::SingleValue;
    const ARRAY: &str;
}

impl PgColumn for String {
    type Sql = diesel::sql_types::Text;
    const ARRAY: &str = "text[]";
}

impl PgColumn for i32 {
    type Sql = diesel::sql_types::Integer;
    const ARRAY: &str = "integer[]";
}

impl PgColumn for f64 {
    type Sql = diesel::sql_types::Double;
    const ARRAY: &str = "double precision[]";
}

endpoint_row! {
    name: String,
    ip_address: String,
    port: i32,
    listener_service_id: String,
    control_protocol: String,
    signaling_protocol: String,
    dial_style: String,
    address_style: String,
    username: String,
    calendar_id: String,
    calendar_type: String,
    custom_data: String,
    announcement_id: String,
    asset_id: String,
    auto_join_mode: String,
    calendar_push_mode: String,
    contact_list_id: String,
    elevation: f64,
    external_id: String,
    geolocation: String,
    in_meeting_controls: String,
    location: String,
    manual_meeting_dialer: String,
    meeting_privacy_mode: String,
    mesh_base_uri: String,
    point_of_contact: String,
    register_to_sip_proxy: String,
    validate_passcodes: String,
    zero_touch_type: String,
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = listener_services,
    primary_key(id),
    check_for_backend(Pg, Sqlite),
    treat_none_as_null = true
)]
pub(crate) struct ListenerRow {
    pub id: String,
    pub enterprise_id: String,
    pub name: String,
    pub base_url: String,
    pub asset_id: Option<String>,
    pub external_id: Option<String>,
    pub location: Option<String>,
    pub point_of_contact: Option<String>,
    pub secret_key_id: String,
    pub secret_ciphertext: Vec<u8>,
    pub connection: String,
}

/// The stored `connection`s.
const INBOUND: &str = "inbound";
const OUTBOUND: &str = "outbound";

/// `(connection, base_url)` as stored: an outbound listener's base_url is '' (the column
/// stays NOT NULL; see the outbound_listeners migration).
fn connection_columns(c: &ListenerConnection) -> (String, String) {
    match c {
        ListenerConnection::Inbound(url) => (INBOUND.to_owned(), url.to_stored()),
        ListenerConnection::Outbound => (OUTBOUND.to_owned(), String::new()),
    }
}

/// The inverse of [`connection_columns`]. Anything else fails like a field that no longer
/// parses: the caller reports the row as corrupt (an internal error).
fn connection_from_columns(
    connection: &str,
    base_url: String,
) -> Result<ListenerConnection, Error> {
    match connection {
        // Parsed again, not trusted like other stored text: '' is an outbound listener's
        // placeholder and must never become an inbound listener's URL.
        INBOUND => Ok(ListenerConnection::Inbound(HttpUrl::parse_text(
            "baseUrl", &base_url,
        )?)),
        OUTBOUND => Ok(ListenerConnection::Outbound),
        other => Err(Error::invalid(format!(
            "connection: '{other}' is neither {INBOUND} nor {OUTBOUND}"
        ))),
    }
}

impl ListenerRow {
    pub fn new(l: &ListenerService) -> Self {
        let p = &l.profile;
        let (connection, base_url) = connection_columns(&p.connection);
        ListenerRow {
            id: l.id.as_str().to_owned(),
            enterprise_id: l.enterprise_id.as_str().to_owned(),
            name: p.name.to_stored(),
            base_url,
            asset_id: p.asset_id.as_ref().map(FieldValue::to_stored),
            external_id: p.external_id.as_ref().map(FieldValue::to_stored),
            location: p.location.as_ref().map(FieldValue::to_stored),
            point_of_contact: p.point_of_contact.as_ref().map(FieldValue::to_stored),
            secret_key_id: l.secret.key_id.clone(),
            secret_ciphertext: l.secret.ciphertext.clone(),
            connection,
        }
    }

    pub fn into_domain(self) -> Result<ListenerService, Error> {
        fn opt<T: FieldValue<Stored = String>>(
            field: &str,
            v: Option<String>,
        ) -> Result<Option<T>, Error> {
            v.map(|v| T::from_stored(field, v)).transpose()
        }
        let id = self.id.clone();
        let restore = || -> Result<ListenerProfile, Error> {
            Ok(ListenerProfile {
                name: FieldValue::from_stored("name", self.name)?,
                connection: connection_from_columns(&self.connection, self.base_url)?,
                asset_id: opt("assetId", self.asset_id)?,
                external_id: opt("externalId", self.external_id)?,
                location: opt("location", self.location)?,
                point_of_contact: opt("pointOfContact", self.point_of_contact)?,
            })
        };
        let profile = restore().map_err(|e| corrupt(format!("listener {id}: {e}")))?;
        Ok(ListenerService {
            id: ListenerServiceId::from_trusted(id),
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
            profile,
            secret: SealedSecret {
                key_id: self.secret_key_id,
                ciphertext: self.secret_ciphertext,
            },
        })
    }
}

/// An outbound listener's connection ([`LinkPresence`]).
#[derive(Queryable, Selectable, Insertable)]
#[diesel(
    table_name = listener_links,
    check_for_backend(Pg, Sqlite),
    treat_none_as_default_value = false
)]
pub(crate) struct LinkRow {
    pub listener_id: String,
    pub instance: String,
    pub since_ms: i64,
    pub version: Option<String>,
    pub seen_ms: i64,
}

impl LinkRow {
    pub fn new(p: &LinkPresence) -> Self {
        LinkRow {
            listener_id: p.listener_id.as_str().to_owned(),
            instance: p.instance.clone(),
            since_ms: p.since_ms,
            version: p.version.clone(),
            seen_ms: p.seen_ms,
        }
    }

    pub fn into_domain(self) -> LinkPresence {
        LinkPresence {
            listener_id: ListenerServiceId::from_trusted(self.listener_id),
            instance: self.instance,
            since_ms: self.since_ms,
            version: self.version,
            seen_ms: self.seen_ms,
        }
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = listener_checks, check_for_backend(Pg, Sqlite))]
pub(crate) struct CheckRow {
    pub listener_id: String,
    pub checked_ms: i64,
    pub answered_ms: Option<i64>,
    pub version: Option<String>,
    pub error: Option<String>,
    pub error_message: Option<String>,
}

impl CheckRow {
    pub fn new(c: &ListenerCheck) -> Self {
        CheckRow {
            listener_id: c.listener_id.as_str().to_owned(),
            checked_ms: c.checked_ms,
            answered_ms: c.answered_ms,
            version: c.version.clone(),
            error: c.error.as_ref().map(|e| e.error_name.clone()),
            error_message: c.error.as_ref().map(|e| e.message.clone()),
        }
    }

    pub fn into_domain(self) -> ListenerCheck {
        ListenerCheck {
            listener_id: ListenerServiceId::from_trusted(self.listener_id),
            checked_ms: self.checked_ms,
            answered_ms: self.answered_ms,
            version: self.version,
            error: self.error.map(|error_name| CheckError {
                error_name,
                message: self.error_message.unwrap_or_default(),
            }),
        }
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = pairing_codes, check_for_backend(Pg, Sqlite))]
pub(crate) struct PairingCodeRow {
    pub id: String,
    pub enterprise_id: String,
    pub endpoint_id: String,
    pub code: String,
    pub created_at: i64,
}

impl PairingCodeRow {
    pub fn new(c: &PairingCode) -> Self {
        PairingCodeRow {
            id: c.id.as_str().to_owned(),
            enterprise_id: c.enterprise_id.as_str().to_owned(),
            endpoint_id: c.endpoint_id.as_str().to_owned(),
            code: c.code.clone(),
            created_at: c.created_at,
        }
    }

    pub fn into_domain(self) -> PairingCode {
        PairingCode {
            id: PairingCodeId::from_trusted(self.id),
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
            endpoint_id: EndpointId::from_trusted(self.endpoint_id),
            code: self.code,
            created_at: self.created_at,
        }
    }
}

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = paired_statuses,
    primary_key(token_id),
    check_for_backend(Pg, Sqlite),
    treat_none_as_null = true
)]
pub(crate) struct PairedRow {
    pub token_id: String,
    pub enterprise_id: String,
    pub endpoint_id: String,
    pub username: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub client_device_type: Option<String>,
    pub creation_date: i64,
    pub heartbeat_date: i64,
}

impl PairedRow {
    pub fn new(p: &PairedStatus) -> Self {
        PairedRow {
            token_id: p.token_id.as_str().to_owned(),
            enterprise_id: p.enterprise_id.as_str().to_owned(),
            endpoint_id: p.endpoint_id.as_str().to_owned(),
            username: p.username.clone(),
            first_name: p.first_name.clone(),
            last_name: p.last_name.clone(),
            client_device_type: p.client_device_type.map(|c| c.as_str().to_owned()),
            creation_date: p.creation_date,
            heartbeat_date: p.heartbeat_date,
        }
    }

    pub fn into_domain(self) -> Result<PairedStatus, Error> {
        Ok(PairedStatus {
            client_device_type: self
                .client_device_type
                .as_deref()
                .map(ClientDeviceType::parse)
                .transpose()
                .map_err(|e| corrupt(format!("paired status of token {}: {e}", self.token_id)))?,
            endpoint_id: EndpointId::from_trusted(self.endpoint_id),
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
            token_id: TokenId::from_trusted(self.token_id),
            username: self.username,
            first_name: self.first_name,
            last_name: self.last_name,
            creation_date: self.creation_date,
            heartbeat_date: self.heartbeat_date,
        })
    }
}

#[derive(Clone, Queryable, Selectable, Insertable)]
#[diesel(
    table_name = endpoint_statuses,
    check_for_backend(Pg, Sqlite),
    treat_none_as_default_value = false
)]
pub(crate) struct StatusRow {
    pub endpoint_id: String,
    pub enterprise_id: String,
    pub call_active: bool,
    pub reserved: bool,
    pub dialing: bool,
    pub microphone_muted: bool,
    pub last_dial_timestamp_millis: Option<i64>,
    pub timestamp: i64,
}

impl StatusRow {
    /// Bind parameters per row of a multi-row INSERT.
    pub const COLUMNS: usize = 8;

    pub fn new(enterprise: &EnterpriseId, s: &EndpointStatus) -> Self {
        StatusRow {
            endpoint_id: s.endpoint_id.as_str().to_owned(),
            enterprise_id: enterprise.as_str().to_owned(),
            call_active: s.call_active,
            reserved: s.reserved,
            dialing: s.dialing,
            microphone_muted: s.microphone_muted,
            last_dial_timestamp_millis: s.last_dial_timestamp_millis,
            timestamp: s.timestamp,
        }
    }

    pub fn into_domain(self) -> EndpointStatus {
        EndpointStatus {
            endpoint_id: EndpointId::from_trusted(self.endpoint_id),
            call_active: self.call_active,
            reserved: self.reserved,
            dialing: self.dialing,
            microphone_muted: self.microphone_muted,
            last_dial_timestamp_millis: self.last_dial_timestamp_millis,
            timestamp: self.timestamp,
        }
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = failures, check_for_backend(Pg, Sqlite))]
pub(crate) struct FailureRow {
    pub id: String,
    pub enterprise_id: String,
    pub subject_class: String,
    pub subject_id: String,
    pub error_date: i64,
    pub error_code: i64,
    pub error_name: String,
    pub error_message: String,
    /// A JSON object.
    pub error_details: String,
}

impl FailureRow {
    pub fn new(f: &Failure) -> Result<Self, Error> {
        Ok(FailureRow {
            id: f.id.as_str().to_owned(),
            enterprise_id: f.enterprise_id.as_str().to_owned(),
            subject_class: f.subject_class.clone(),
            subject_id: f.subject_id.clone(),
            error_date: f.error_date,
            error_code: f.error_code,
            error_name: f.error_name.clone(),
            error_message: f.error_message.clone(),
            error_details: serde_json::to_string(&f.error_details).map_err(Error::internal)?,
        })
    }

    pub fn into_domain(self) -> Result<Failure, Error> {
        Ok(Failure {
            error_details: serde_json::from_str(&self.error_details)
                .map_err(|e| corrupt(format!("failure {}: details: {e}", self.id)))?,
            id: FailureId::from_trusted(self.id),
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
            subject_class: self.subject_class,
            subject_id: self.subject_id,
            error_date: self.error_date,
            error_code: self.error_code,
            error_name: self.error_name,
            error_message: self.error_message,
        })
    }
}

/// An audit entry to append; `seq` is the database's.
#[derive(Insertable)]
#[diesel(table_name = audit_log, treat_none_as_default_value = false)]
pub(crate) struct NewAuditRow<'a> {
    pub enterprise_id: &'a str,
    pub at_ms: i64,
    pub actor_kind: &'a str,
    pub actor_id: &'a str,
    pub actor_username: Option<&'a str>,
    pub actor_roles: String,
    pub operation: &'a str,
    pub target_id: Option<&'a str>,
    pub outcome: &'a str,
    pub detail: Option<&'a str>,
}

impl<'a> NewAuditRow<'a> {
    pub fn new(e: &'a AuditEntry) -> Self {
        NewAuditRow {
            enterprise_id: e.enterprise_id.as_str(),
            at_ms: e.at,
            actor_kind: e.actor.kind.as_str(),
            actor_id: &e.actor.id,
            actor_username: e.actor.username.as_deref(),
            actor_roles: e.actor.roles.names().join(","),
            operation: &e.operation,
            target_id: e.target_id.as_deref(),
            outcome: &e.outcome,
            detail: e.detail.as_deref(),
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = audit_log, check_for_backend(Pg, Sqlite))]
pub(crate) struct AuditRow {
    pub seq: i64,
    pub enterprise_id: String,
    pub at_ms: i64,
    pub actor_kind: String,
    pub actor_id: String,
    pub actor_username: Option<String>,
    pub actor_roles: String,
    pub operation: String,
    pub target_id: Option<String>,
    pub outcome: String,
    pub detail: Option<String>,
}

impl AuditRow {
    pub fn into_domain(self) -> Result<AuditRecord, Error> {
        let bad =
            |what: &dyn std::fmt::Display| corrupt(format!("audit entry {}: {what}", self.seq));
        let kind = ActorKind::parse(&self.actor_kind).ok_or_else(|| bad(&"actor kind"))?;
        let roles = self
            .actor_roles
            .split(',')
            .filter(|r| !r.is_empty())
            .map(Role::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(&e))?;
        Ok(AuditRecord {
            position: ListPosition(self.seq),
            entry: AuditEntry {
                enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
                at: self.at_ms,
                actor: Actor {
                    kind,
                    id: self.actor_id,
                    username: self.actor_username,
                    roles: RoleSet::from_roles(roles),
                },
                operation: self.operation,
                target_id: self.target_id,
                outcome: self.outcome,
                detail: self.detail,
            },
        })
    }
}
