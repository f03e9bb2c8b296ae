//! The ANNEX_O rule: an endpoint whose dial style is ANNEX_O cannot change it.
//!
//! The spec says only that ANNEX_O "exists and cannot be modified". We read it as: once an
//! endpoint's dialStyle is ANNEX_O, no write may change or clear it (`Unmodifiable` naming the
//! endpoint); writing ANNEX_O onto another endpoint is allowed (docs/decisions.md explains why).

use crate::endpoint::{Endpoint, EndpointProfile};
use crate::enums::DialStyle;
use crate::error::Error;
use crate::ids::EndpointId;

pub fn check_unchanged(current: &Endpoint, next: &EndpointProfile) -> Result<(), Error> {
    let was_annex_o = current.profile().dial_style() == Some(&DialStyle::AnnexO);
    if was_annex_o && next.dial_style() != Some(&DialStyle::AnnexO) {
        return Err(Error::unmodifiable(
            EndpointId::ENTITY_CLASS,
            current.id().as_str(),
            "The ANNEX_O dialStyle",
        ));
    }
    Ok(())
}
