//! How many rounds of a background task have ended. A test that shows a round did *not* act
//! (nothing dialled before the lead time, nothing pushed twice) waits until a round that began
//! after its change has ended, instead of sleeping and hoping one ran; operators see the same
//! rounds in the logs.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Rounds(AtomicU64);

impl Rounds {
    /// How many rounds have ended so far (whatever they did, failures included).
    pub fn ended(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    pub(crate) fn end(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}
