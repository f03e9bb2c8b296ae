//! Parameters of `join`: which meeting to dial.
//!
//! `meetingid` is the numeric, user-facing meeting id (1 to 20 digits); without it the endpoint
//! dials the IVR. `passcode` is 1 to 32 letters or digits and needs a meeting id. `cluster`
//! defaults to PROD. `meetingtype`, when omitted, is guessed: MEETME for any meeting id (the
//! only kind of id a user reads off an invitation), none for the IVR.

use crate::enums::{Cluster, MeetingType, shorten};
use crate::error::Error;

/// Serialized as `join`'s parameters are named in JSON (a room's meetings show it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JoinRequest {
    pub meeting_id: Option<String>,
    pub passcode: Option<String>,
    pub cluster: Cluster,
    pub meeting_type: Option<MeetingType>,
}

/// The query parameters as they arrived (empty strings count as omitted).
#[derive(Debug, Clone, Default)]
pub struct JoinParams<'a> {
    pub meeting_id: Option<&'a str>,
    pub passcode: Option<&'a str>,
    pub cluster: Option<&'a str>,
    pub meeting_type: Option<&'a str>,
}

fn present(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

impl JoinRequest {
    pub fn from_params(params: &JoinParams<'_>) -> Result<Self, Error> {
        let meeting_id = present(params.meeting_id)
            .map(|id| {
                if (1..=20).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit()) {
                    Ok(id.to_owned())
                } else {
                    Err(Error::invalid(format!(
                        "meetingid: '{}' is not a numeric meeting id of 1 to 20 digits",
                        shorten(id)
                    )))
                }
            })
            .transpose()?;
        let passcode = present(params.passcode)
            .map(|p| {
                if (1..=32).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    Ok(p.to_owned())
                } else {
                    Err(Error::invalid(
                        "passcode: must be 1 to 32 letters or digits",
                    ))
                }
            })
            .transpose()?;
        if passcode.is_some() && meeting_id.is_none() {
            return Err(Error::invalid(
                "passcode: needs a meetingid (the IVR takes no passcode)",
            ));
        }
        let cluster = present(params.cluster)
            .map(Cluster::parse)
            .transpose()?
            .unwrap_or(Cluster::Prod);
        let meeting_type = match present(params.meeting_type) {
            Some(t) => Some(MeetingType::parse(t)?),
            None => guess_meeting_type(meeting_id.as_deref()),
        };
        if meeting_type.is_some() && meeting_id.is_none() {
            return Err(Error::invalid("meetingtype: needs a meetingid"));
        }
        Ok(JoinRequest {
            meeting_id,
            passcode,
            cluster,
            meeting_type,
        })
    }

    /// True when no meeting id was given and the endpoint dials the IVR.
    pub fn dials_ivr(&self) -> bool {
        self.meeting_id.is_none()
    }
}

/// The meeting type assumed when the caller names none.
pub fn guess_meeting_type(meeting_id: Option<&str>) -> Option<MeetingType> {
    meeting_id.map(|_| MeetingType::MeetMe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn no_meeting_id_dials_the_ivr_on_prod() {
        let j = JoinRequest::from_params(&JoinParams::default()).unwrap();
        assert!(j.dials_ivr());
        assert_eq!(j.cluster, Cluster::Prod);
        assert_eq!(j.meeting_type, None);
        let j = JoinRequest::from_params(&JoinParams {
            meeting_id: Some(""),
            ..Default::default()
        })
        .unwrap();
        assert!(j.dials_ivr(), "an empty meetingid counts as omitted");
    }

    #[test]
    fn meeting_type_is_guessed_or_taken() {
        let j = JoinRequest::from_params(&JoinParams {
            meeting_id: Some("123456789"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(j.meeting_type, Some(MeetingType::MeetMe));
        let j = JoinRequest::from_params(&JoinParams {
            meeting_id: Some("1"),
            meeting_type: Some("broadcast_attendee"),
            cluster: Some("QA"),
            passcode: Some("4321"),
        })
        .unwrap();
        assert_eq!(j.meeting_type, Some(MeetingType::BroadcastAttendee));
        assert_eq!(j.cluster, Cluster::Qa);
        assert_eq!(j.passcode.as_deref(), Some("4321"));
    }

    #[test]
    fn bad_parameters_are_invalid() {
        let cases = [
            JoinParams {
                meeting_id: Some("12ab"),
                ..Default::default()
            },
            JoinParams {
                meeting_id: Some(&"1".repeat(21)),
                ..Default::default()
            },
            JoinParams {
                passcode: Some("1234"),
                ..Default::default()
            },
            JoinParams {
                meeting_id: Some("1"),
                passcode: Some("12 34"),
                ..Default::default()
            },
            JoinParams {
                meeting_id: Some("1"),
                cluster: Some("DEV"),
                ..Default::default()
            },
            JoinParams {
                meeting_id: Some("1"),
                meeting_type: Some("SKYPE"),
                ..Default::default()
            },
            JoinParams {
                meeting_type: Some("MEETME"),
                ..Default::default()
            },
        ];
        for c in cases {
            assert_eq!(
                JoinRequest::from_params(&c).unwrap_err().kind(),
                ErrorKind::Invalid,
                "{c:?}"
            );
        }
    }
}
