//! Reconnect delays: exponential from the initial delay up to the maximum, each wait drawn at
//! random in [delay/2, delay] so that many listeners cut off together do not return together.

use std::time::Duration;

#[derive(Debug)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            next: initial,
        }
    }

    /// After a connection that stayed up long enough: start again from the initial delay.
    pub fn reset(&mut self) {
        self.next = self.initial;
    }

    /// After a refusal (wrong secret, unknown id): retrying soon would not help.
    pub fn to_max(&mut self) {
        self.next = self.max;
    }

    /// The next wait; the delay after it doubles.
    pub fn next_wait(&mut self) -> Duration {
        let delay = self.next;
        self.next = (delay * 2).min(self.max);
        jitter(delay, random_unit())
    }
}

/// A wait in [delay/2, delay] for `unit` in [0, 1].
fn jitter(delay: Duration, unit: f64) -> Duration {
    let half = delay / 2;
    half + (delay - half).mul_f64(unit.clamp(0.0, 1.0))
}

/// A random number in [0, 1]; without randomness (no OS source), the full delay.
fn random_unit() -> f64 {
    getrandom::u64().map_or(1.0, |n| (n >> 11) as f64 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_maximum_within_their_jitter() {
        let ms = Duration::from_millis;
        let mut b = Backoff::new(ms(500), ms(30_000));
        for delay in [500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000] {
            let wait = b.next_wait();
            assert!(
                wait >= ms(delay / 2) && wait <= ms(delay),
                "{wait:?} for {delay}"
            );
        }
        b.reset();
        assert!(b.next_wait() <= ms(500));
        b.to_max();
        assert!(b.next_wait() >= ms(15_000));
    }

    #[test]
    fn jitter_spans_half_the_delay_to_the_delay() {
        let d = Duration::from_millis(1_000);
        assert_eq!(jitter(d, 0.0), Duration::from_millis(500));
        assert_eq!(jitter(d, 1.0), d);
        assert_eq!(jitter(d, 7.0), d);
    }
}
