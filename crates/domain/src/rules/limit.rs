//! The endpoint limit: an enterprise holds at most `endpoint_limit` endpoints.
//!
//! One rule for every writer: the CSV plan asks [`EndpointLimit::room`] to skip rows past the
//! limit, and each storage adapter asks [`EndpointLimit::admit`] inside the transaction that
//! locks the enterprise, so the limit holds under concurrent inserts and uploads.

use crate::error::Error;
use crate::ids::EndpointId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointLimit(pub u32);

impl EndpointLimit {
    /// A limit as a database stores it (a signed integer); out-of-range values saturate.
    pub fn from_stored(limit: i64) -> EndpointLimit {
        EndpointLimit(u32::try_from(limit.max(0)).unwrap_or(u32::MAX))
    }

    /// How many endpoints may still be created while `count` exist.
    pub fn room(self, count: usize) -> usize {
        usize::try_from(self.0)
            .unwrap_or(usize::MAX)
            .saturating_sub(count)
    }

    /// `LimitReached` unless `adding` more endpoints fit beside the `count` that exist.
    pub fn admit(self, count: usize, adding: usize) -> Result<(), Error> {
        if adding > self.room(count) {
            Err(Error::limit_reached(EndpointId::ENTITY_CLASS, self.0))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn room_and_admission_agree_at_the_boundary() {
        let limit = EndpointLimit(3);
        assert_eq!(limit.room(0), 3);
        assert_eq!(limit.room(3), 0);
        assert_eq!(
            limit.room(7),
            0,
            "a lowered limit leaves no room, never a wrap"
        );
        assert!(limit.admit(2, 1).is_ok());
        assert!(limit.admit(3, 0).is_ok(), "updates only add nothing");
        let e = limit.admit(2, 2).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitReached);
        assert_eq!(e.details()["entityClass"], "Endpoint");
    }

    #[test]
    fn stored_limits_saturate() {
        assert_eq!(EndpointLimit::from_stored(-1), EndpointLimit(0));
        assert_eq!(
            EndpointLimit::from_stored(i64::MAX),
            EndpointLimit(u32::MAX)
        );
        assert_eq!(EndpointLimit::from_stored(250), EndpointLimit(250));
    }
}
