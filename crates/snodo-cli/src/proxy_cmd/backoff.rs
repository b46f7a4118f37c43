//! The pause before a backend's next connection attempt: [`FIRST_PAUSE`]
//! after a failure, doubling with each failure in a row up to
//! [`LONGEST_PAUSE`], each pause moved by up to a fifth either way at
//! random (backends that failed together do not all try again together).
//! A backend that went down before it had been up for [`STABLE`] counts as
//! a failure too, so that one crashing soon after each start backs off like
//! one that does not start; one that stayed up that long starts again from
//! [`FIRST_PAUSE`].

use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, SystemTime};

/// The pause after the first failure.
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(500);
/// The longest pause.
pub(crate) const LONGEST_PAUSE: Duration = Duration::from_secs(300);
/// How long a backend stays up before its failures are forgiven.
pub(crate) const STABLE: Duration = Duration::from_secs(60);
/// How far a pause moves at random, as a fraction of it.
const JITTER: f64 = 0.2;

/// One backend's failures in a row.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    failures: u32,
}

impl Backoff {
    /// The pause after an attempt that never came up (`up` is `None`) or a
    /// backend that went down after being up for `up`.
    pub(crate) fn after(&mut self, up: Option<Duration>) -> Duration {
        if up.is_some_and(|up| up >= STABLE) {
            self.failures = 0;
        }
        let pause = self.base();
        self.failures = self.failures.saturating_add(1);
        pause.mul_f64(1.0 + JITTER * spread()).min(LONGEST_PAUSE)
    }

    /// The pause before jitter.
    fn base(&self) -> Duration {
        let doublings = self.failures.min(20);
        FIRST_PAUSE
            .saturating_mul(1 << doublings)
            .min(LONGEST_PAUSE)
    }
}

/// A number between -1 and 1, different at each call (std's hasher keys
/// are random per process and per hasher).
fn spread() -> f64 {
    let bits = RandomState::new().hash_one(SystemTime::now());
    (bits as f64 / u64::MAX as f64) * 2.0 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(pause: Duration, base: Duration) -> bool {
        pause >= base.mul_f64(1.0 - JITTER) && pause <= base.mul_f64(1.0 + JITTER)
    }

    #[test]
    fn pauses_double_up_to_five_minutes_with_jitter_and_reset_after_a_stable_run() {
        let mut b = Backoff::default();
        let mut pauses = Vec::new();
        for _ in 0..12 {
            pauses.push(b.after(None));
        }
        for (i, pause) in pauses.iter().enumerate().take(9) {
            let base = FIRST_PAUSE * (1 << i);
            assert!(within(*pause, base), "{i}: {pause:?} around {base:?}");
        }
        assert!(pauses[9..].iter().all(|p| *p <= LONGEST_PAUSE));
        assert!(within(pauses[11], LONGEST_PAUSE) || pauses[11] == LONGEST_PAUSE);
        // Crashing soon after coming up is one more failure...
        let p = b.after(Some(Duration::from_secs(5)));
        assert!(p >= LONGEST_PAUSE.mul_f64(1.0 - JITTER), "{p:?}");
        // ... staying up a minute starts again from the first pause.
        assert!(within(b.after(Some(STABLE)), FIRST_PAUSE));
        assert!(within(b.after(None), FIRST_PAUSE * 2));
        let distinct: std::collections::HashSet<_> = (0..20).map(|_| spread().to_bits()).collect();
        assert!(distinct.len() > 1, "the jitter varies");
    }
}
