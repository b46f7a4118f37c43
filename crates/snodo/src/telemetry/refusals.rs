//! Limits reached, logged as summaries: the first refusal of a kind is a
//! `WARN` line at once, the ones that follow within [`SUMMARY_EVERY`] are
//! counted and reported by the next line of that kind, so that a flood of
//! refused requests costs a line every few seconds, not a line each.

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most one line per kind of refusal this often.
pub const SUMMARY_EVERY: Duration = Duration::from_secs(10);

/// What is known of one kind of refusal.
struct Kind {
    /// When its last line was written.
    logged: Instant,
    /// Refusals since then, not yet reported.
    quiet: u64,
}

static KINDS: Mutex<Option<HashMap<&'static str, Kind>>> = Mutex::new(None);

/// Notes a refusal of `kind` (a fixed word: `sessions`, `tasks`, ...) for
/// `reason`; writes a line unless one of this kind was written within
/// [`SUMMARY_EVERY`]. Returns whether it wrote one.
pub(crate) fn note(kind: &'static str, reason: &dyn Display) -> bool {
    note_at(kind, reason, Instant::now())
}

fn note_at(kind: &'static str, reason: &dyn Display, now: Instant) -> bool {
    let mut kinds = KINDS.lock().unwrap_or_else(|e| e.into_inner());
    let kinds = kinds.get_or_insert_with(HashMap::new);
    let quiet = match kinds.get_mut(kind) {
        Some(k) if now.saturating_duration_since(k.logged) < SUMMARY_EVERY => {
            k.quiet += 1;
            return false;
        }
        Some(k) => {
            let quiet = k.quiet;
            *k = Kind {
                logged: now,
                quiet: 0,
            };
            quiet
        }
        None => {
            kinds.insert(
                kind,
                Kind {
                    logged: now,
                    quiet: 0,
                },
            );
            0
        }
    };
    if quiet == 0 {
        tracing::warn!(target: "snodo::limits", kind, "limit reached: {reason}");
    } else {
        tracing::warn!(
            target: "snodo::limits",
            kind,
            refused_since_last_line = quiet,
            "limit reached: {reason} ({quiet} more refused since the last line)"
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_refusals_writes_one_line_per_period() {
        let start = Instant::now();
        let reason = "too many";
        assert!(note_at("test-flood", &reason, start));
        let written = (1..10_000)
            .filter(|i| note_at("test-flood", &reason, start + Duration::from_micros(*i)))
            .count();
        assert_eq!(written, 0);
        assert!(note_at("test-flood", &reason, start + SUMMARY_EVERY));
        // Another kind has its own period.
        assert!(note_at("test-other", &reason, start));
    }
}
