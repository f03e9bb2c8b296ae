//! The Endpoint entity (a room system record) and its field table.
//!
//! `endpoint_fields!` below is the one list of provisioned fields: their wire names, value
//! types and bounds. JSON decoding (POST, PUT, PATCH), CSV decoding and encoding, response
//! serialization and the storage record are all generated from it, so they cannot disagree.
//! `id` and the write-only `password` are not in the table: they have rules of their own.

pub mod page;
pub mod value;

use crate::enums::{
    AddressStyle, CalendarType, ControlProtocol, DialStyle, MeetingPrivacyMode, RegisterToSipProxy,
    SignalingProtocol, Toggle, ZeroTouchType,
};
use crate::error::Error;
use crate::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use crate::secret::SealedSecret;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use value::{
    Address, CustomData, Elevation, FieldValue, Geolocation, HttpUrl, Port, Reference, Text,
};

/// Free text fields: names and labels (255), locations (1024), e-mail-like ids (320).
pub type ShortText = Text<255>;
pub type LongText = Text<1024>;
pub type EmailText = Text<320>;

macro_rules! endpoint_fields {
    ($( $variant:ident, $field:ident: $ty:ty = $json:literal; )*) => {
        /// A provisioned field of an endpoint (everything but `id` and `password`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Field { $($variant),* }

        impl Field {
            /// Every field, in wire order.
            pub const ALL: &'static [Field] = &[$(Field::$variant),*];

            /// The JSON property name (camelCase). The CSV column is the same name in any case.
            pub const fn json_name(self) -> &'static str {
                match self { $(Field::$variant => $json),* }
            }

            /// What the field's values look like (for API descriptions).
            pub const fn shape(self) -> value::Shape {
                match self { $(Field::$variant => <$ty as FieldValue>::SHAPE),* }
            }

            /// The field with this exact JSON property name.
            pub fn from_json_name(name: &str) -> Option<Field> {
                match name { $($json => Some(Field::$variant),)* _ => None }
            }

            /// The field with this CSV column name (case-insensitive, surrounding blanks ignored).
            pub fn from_csv_name(name: &str) -> Option<Field> {
                let name = name.trim();
                Field::ALL.iter().copied().find(|f| f.json_name().eq_ignore_ascii_case(name))
            }
        }

        /// The provisioned fields of an endpoint, each validated against its bounds.
        /// Fields are private: a profile only comes from the decoders below or from storage.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct EndpointProfile { $($field: Option<$ty>,)* }

        impl EndpointProfile {
            $(pub fn $field(&self) -> Option<&$ty> { self.$field.as_ref() })*

            /// Sets `field` from a JSON value; null or "" clears it.
            pub(crate) fn set_json(&mut self, field: Field, value: &Value) -> Result<(), Error> {
                match field {
                    $(Field::$variant => {
                        self.$field = if value.is_null() { None } else { <$ty>::from_json($json, value)? };
                    })*
                }
                Ok(())
            }

            /// Sets `field` to its value in `from`.
            pub(crate) fn copy_field(&mut self, from: &Self, field: Field) {
                match field {
                    $(Field::$variant => self.$field = from.$field.clone(),)*
                }
            }

            /// Sets `field` from CSV text; a blank text clears it.
            pub(crate) fn set_text(&mut self, field: Field, text: &str) -> Result<(), Error> {
                match field {
                    $(Field::$variant => {
                        self.$field = if text.trim().is_empty() { None } else { Some(<$ty>::from_text($json, text)?) };
                    })*
                }
                Ok(())
            }

            /// The field as CSV text ("" when unset).
            pub fn text(&self, field: Field) -> String {
                match field {
                    $(Field::$variant => self.$field.as_ref().map(FieldValue::to_text).unwrap_or_default(),)*
                }
            }

            /// Writes every field as `"jsonName": value` entries of a JSON object.
            pub(crate) fn serialize_fields<M: serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                $(map.serialize_entry($json, &value::JsonOf(self.$field.as_ref()))?;)*
                Ok(())
            }

            /// The field as JSON (null when unset).
            pub fn json(&self, field: Field) -> Value {
                match field {
                    $(Field::$variant => self.$field.as_ref().map_or(Value::Null, FieldValue::to_json),)*
                }
            }

            /// The plain form a storage adapter keeps.
            pub fn to_record(&self) -> EndpointRecord {
                EndpointRecord { $($field: self.$field.as_ref().map(FieldValue::to_stored),)* }
            }

            /// Rebuilds a profile from what a storage adapter kept.
            pub fn from_record(record: EndpointRecord) -> Result<Self, Error> {
                Ok(EndpointProfile {
                    $($field: record.$field.map(|v| <$ty>::from_stored($json, v)).transpose()?,)*
                })
            }
        }

        /// The storage form of a profile: plain strings and numbers, one per column.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct EndpointRecord { $(pub $field: Option<<$ty as FieldValue>::Stored>,)* }
    };
}

endpoint_fields! {
    Name, name: ShortText = "name";
    IpAddress, ip_address: Address = "ipAddress";
    Port, port: Port = "port";
    ListenerServiceId, listener_service_id: Reference = "listenerServiceId";
    ControlProtocol, control_protocol: ControlProtocol = "controlProtocol";
    SignalingProtocol, signaling_protocol: SignalingProtocol = "signalingProtocol";
    DialStyle, dial_style: DialStyle = "dialStyle";
    AddressStyle, address_style: AddressStyle = "addressStyle";
    Username, username: ShortText = "username";
    CalendarId, calendar_id: EmailText = "calendarId";
    CalendarType, calendar_type: CalendarType = "calendarType";
    CustomData, custom_data: CustomData = "customData";
    AnnouncementId, announcement_id: Reference = "announcementId";
    AssetId, asset_id: ShortText = "assetId";
    AutoJoinMode, auto_join_mode: Toggle = "autoJoinMode";
    CalendarPushMode, calendar_push_mode: Toggle = "calendarPushMode";
    ContactListId, contact_list_id: Reference = "contactListId";
    Elevation, elevation: Elevation = "elevation";
    ExternalId, external_id: ShortText = "externalId";
    Geolocation, geolocation: Geolocation = "geolocation";
    InMeetingControls, in_meeting_controls: Toggle = "inMeetingControls";
    Location, location: LongText = "location";
    ManualMeetingDialer, manual_meeting_dialer: Toggle = "manualMeetingDialer";
    MeetingPrivacyMode, meeting_privacy_mode: MeetingPrivacyMode = "meetingPrivacyMode";
    MeshBaseUri, mesh_base_uri: HttpUrl = "meshBaseUri";
    PointOfContact, point_of_contact: EmailText = "pointOfContact";
    RegisterToSipProxy, register_to_sip_proxy: RegisterToSipProxy = "registerToSipProxy";
    ValidatePasscodes, validate_passcodes: Toggle = "validatePasscodes";
    ZeroTouchType, zero_touch_type: ZeroTouchType = "zeroTouchType";
}

impl EndpointProfile {
    /// The listener service this endpoint is controlled through, if any.
    pub fn listener(&self) -> Option<ListenerServiceId> {
        self.listener_service_id()
            .map(|r| ListenerServiceId::from_trusted(r.as_str().to_owned()))
    }

    /// The whole-entity checks that single fields cannot make: a name is required.
    pub(crate) fn check_complete(&self) -> Result<(), Error> {
        if self.name.is_none() {
            return Err(Error::invalid("name: is required"));
        }
        Ok(())
    }
}

/// A provisioned room system of one enterprise.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    id: EndpointId,
    enterprise_id: EnterpriseId,
    profile: EndpointProfile,
    password: Option<SealedSecret>,
}

impl Endpoint {
    /// A complete endpoint; `Invalid` if the profile lacks a required field.
    pub fn new(
        id: EndpointId,
        enterprise_id: EnterpriseId,
        profile: EndpointProfile,
        password: Option<SealedSecret>,
    ) -> Result<Self, Error> {
        profile.check_complete()?;
        Ok(Endpoint {
            id,
            enterprise_id,
            profile,
            password,
        })
    }

    pub fn id(&self) -> &EndpointId {
        &self.id
    }
    pub fn enterprise_id(&self) -> &EnterpriseId {
        &self.enterprise_id
    }
    pub fn profile(&self) -> &EndpointProfile {
        &self.profile
    }
    /// The sealed password; it never leaves the service except toward the room system.
    pub fn password(&self) -> Option<&SealedSecret> {
        self.password.as_ref()
    }
    pub fn name(&self) -> &str {
        self.profile.name().map_or("", Text::as_str)
    }
}

/// The response shape: `id`, every provisioned field (null when unset) and `password: null`,
/// as the predecessor answered. Serialized straight from the entity, without a JSON tree.
impl Serialize for Endpoint {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Field::ALL.len() + 2))?;
        map.serialize_entry("id", &self.id)?;
        self.profile.serialize_fields(&mut map)?;
        map.serialize_entry("password", &Value::Null)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_csv_names_cover_every_field() {
        for f in Field::ALL {
            assert_eq!(Field::from_json_name(f.json_name()), Some(*f));
            let lower = f.json_name().to_ascii_lowercase();
            assert_eq!(Field::from_csv_name(&lower), Some(*f));
        }
        assert_eq!(
            Field::from_json_name("ipaddress"),
            None,
            "JSON names are exact"
        );
        assert_eq!(Field::from_json_name("password"), None);
    }

    #[test]
    fn record_round_trip_keeps_every_field() {
        let mut p = EndpointProfile::default();
        let values = json!({
            "name": "Boardroom", "ipAddress": "127.77.0.1", "port": 443,
            "listenerServiceId": "550c9289e4b0c0c6485f4cfa", "controlProtocol": "TANDBERG_SSH",
            "signalingProtocol": "SIP", "dialStyle": "ANNEX_O", "addressStyle": "HOSTNAME",
            "username": "admin", "calendarId": "board@corp.example", "calendarType": "GOOGLE",
            "customData": {"correlationId": "x"}, "announcementId": "a1", "assetId": "tag-7",
            "autoJoinMode": "ENABLED", "calendarPushMode": "ENABLED", "contactListId": "c1",
            "elevation": 102.0, "externalId": "ext", "geolocation": {"latitude": 1.5, "longitude": -2.0},
            "inMeetingControls": "ENABLED", "location": "Floor 3", "manualMeetingDialer": "ENABLED",
            "meetingPrivacyMode": "REDACTED", "meshBaseUri": "https://mesh.example",
            "pointOfContact": "it@corp.example", "registerToSipProxy": "AUTO",
            "validatePasscodes": "ENABLED", "zeroTouchType": "STATIC"
        });
        for (k, v) in values.as_object().unwrap() {
            p.set_json(Field::from_json_name(k).unwrap(), v).unwrap();
        }
        for f in Field::ALL {
            assert_ne!(p.json(*f), Value::Null, "{f:?} not set by the sample");
        }
        let back = EndpointProfile::from_record(p.to_record()).unwrap();
        assert_eq!(back, p);
        let e = Endpoint::new(
            EndpointId::from_trusted("e1".into()),
            EnterpriseId::from_trusted("x".into()),
            p,
            None,
        )
        .unwrap();
        // Written in place, in the table's order, exactly as each field's JSON form.
        let text = serde_json::to_string(&e).unwrap();
        let mut expected = "{\"id\":\"e1\"".to_owned();
        for f in Field::ALL {
            expected += &format!(",\"{}\":{}", f.json_name(), e.profile().json(*f));
        }
        expected += ",\"password\":null}";
        assert_eq!(text, expected);
        let mut wire = serde_json::to_value(&e).unwrap();
        assert_eq!(wire["password"], Value::Null);
        assert_eq!(wire["id"], "e1");
        wire.as_object_mut().unwrap().remove("password");
        wire.as_object_mut().unwrap().remove("id");
        assert_eq!(wire, values);
    }

    #[test]
    fn a_name_is_required() {
        let e = Endpoint::new(
            EndpointId::from_trusted("e1".into()),
            EnterpriseId::from_trusted("x".into()),
            EndpointProfile::default(),
            None,
        )
        .unwrap_err();
        assert!(e.message().contains("name"));
    }
}
