//! Pages of the endpoint list: keyset paging in creation order, with an opaque cursor.

use super::Endpoint;
use crate::error::{Error, Result};

/// A position in an enterprise's endpoint list (after the endpoint created at this point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListPosition(pub i64);

impl ListPosition {
    /// The cursor clients send back. Opaque to them; stable across restarts.
    pub fn to_cursor(self) -> String {
        format!("{:x}", self.0)
    }

    /// `Invalid` for anything [`ListPosition::to_cursor`] did not write.
    pub fn from_cursor(cursor: &str) -> Result<ListPosition> {
        let valid = (1..=16).contains(&cursor.len())
            && cursor
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        valid
            .then(|| u64::from_str_radix(cursor, 16).ok())
            .flatten()
            .and_then(|n| i64::try_from(n).ok())
            .map(ListPosition)
            .ok_or_else(|| Error::invalid("cursor: not one this service returned"))
    }
}

/// One page: the endpoints and, when more may follow, where the next page starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EndpointPage {
    pub endpoints: Vec<Endpoint>,
    pub next: Option<ListPosition>,
}

/// The most endpoints one page may hold (also the default page size).
pub const MAX_PAGE_SIZE: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_forgeries() {
        for n in [0, 1, 255, i64::MAX] {
            let p = ListPosition(n);
            assert_eq!(ListPosition::from_cursor(&p.to_cursor()).unwrap(), p);
        }
        for bad in [
            "",
            "xyz",
            "FF",
            "-1",
            "ffffffffffffffff",
            "00000000000000000",
        ] {
            assert!(ListPosition::from_cursor(bad).is_err(), "{bad}");
        }
    }
}
