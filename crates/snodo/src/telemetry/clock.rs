//! One clock read at each end of a request, shared by its duration and its
//! span: the server reads the time once when a request starts and once
//! when it ends, and offers both to a span layer that keeps times
//! (the OTLP exporter's), which would otherwise read the clock again.
//!
//! Span times are wall-clock nanoseconds: the wall clock read once, at the
//! first use, plus the monotonic time since, so that a span's start and end
//! come from the same clock.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

thread_local! {
    static OFFERED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f`, which creates or closes one span, with `at` offered as that
/// span's start or end time.
pub(crate) fn offer<R>(at: Instant, f: impl FnOnce() -> R) -> R {
    let _ = OFFERED.try_with(|o| o.set(Some(at)));
    let out = f();
    let _ = OFFERED.try_with(|o| o.set(None));
    out
}

/// The time offered for the span being created or closed, taken.
fn take() -> Option<Instant> {
    OFFERED.try_with(Cell::take).ok().flatten()
}

/// The time offered for the span being created or closed (taken), or
/// now, in nanoseconds since the Unix epoch.
pub fn offered_or_now_ns() -> u64 {
    take().map_or_else(now_ns, unix_ns)
}

/// `at` in nanoseconds since the Unix epoch.
fn unix_ns(at: Instant) -> u64 {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    let (base, base_ns) = *ANCHOR.get_or_init(|| {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        (Instant::now(), wall)
    });
    let nanos = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    match at.checked_duration_since(base) {
        Some(after) => base_ns.saturating_add(nanos(after)),
        None => base_ns.saturating_sub(nanos(base - at)),
    }
}

/// Now, in nanoseconds since the Unix epoch (on the same clock as
/// span times).
pub fn now_ns() -> u64 {
    unix_ns(Instant::now())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_offer_is_taken_once_and_only_inside() {
        let at = Instant::now();
        assert_eq!(take(), None);
        let inside = offer(at, || (take(), take()));
        assert_eq!(inside, (Some(at), None));
        offer(at, || ());
        assert_eq!(take(), None, "an offer nobody took does not outlive it");
    }

    #[test]
    fn times_follow_the_wall_clock_and_keep_their_order() {
        let now = Instant::now();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let ns = unix_ns(now);
        assert!(ns.abs_diff(wall) < 1_000_000_000, "{ns} vs {wall}");
        assert_eq!(unix_ns(now + Duration::from_micros(5)) - ns, 5_000);
        assert!(unix_ns(now - Duration::from_millis(1)) < ns);
        assert!(now_ns() >= ns);
    }
}
