//! DPoP at the resource server (RFC 9449 §7, as the MCP authorization
//! extension drafts it): what it accepts, and the proofs it has seen.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest as _, Sha256};

/// How far a proof's `iat` may be from the server's clock, either way.
pub const DEFAULT_DPOP_WINDOW: Duration = Duration::from_secs(60);
/// Most proofs remembered at once (each for the window): past it, proofs
/// are refused until older ones age out.
pub const MAX_DPOP_PROOFS: usize = 100_000;

/// Most proofs one key may have in the memory at once: past it, that
/// key's requests are refused until its older proofs age out, and the
/// others go on.
pub const MAX_DPOP_PROOFS_PER_KEY: usize = 1_000;

/// Whether DPoP-bound tokens are taken alongside bearer tokens, or alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Accepted,
    Required,
}

/// The resource server's DPoP settings and the proofs seen in the window.
#[derive(Debug)]
pub(crate) struct DpopCheck {
    pub(crate) mode: Mode,
    pub(crate) window: Duration,
    seen: Replay,
}

impl DpopCheck {
    pub(crate) fn new(mode: Mode, window: Duration, max: usize) -> Self {
        Self {
            mode,
            window,
            seen: Replay {
                max,
                per_key: MAX_DPOP_PROOFS_PER_KEY.min(max),
                state: Mutex::new(Seen::default()),
            },
        }
    }

    /// Records the proof `jti` of the key `jkt`, made at `iat`; refused when
    /// it was seen before in the window, or when the memory (or this key's
    /// share of it) is full.
    pub(crate) fn first_use(&self, jkt: &str, jti: &str, iat: u64, now: u64) -> Result<(), Reuse> {
        let window = self.window.as_secs();
        self.seen
            .first_use(jkt, jti, iat.saturating_add(window), now)
    }
}

/// Why a proof was refused by the replay memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// Seen before.
    Replayed,
    /// Too many proofs of this key in the window.
    KeyFull,
    /// Too many proofs of all keys in the window.
    Full,
}

/// Proofs seen, by key and by the SHA-256 of their `jti`, each until the
/// end of its window.
#[derive(Debug)]
struct Replay {
    max: usize,
    per_key: usize,
    state: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    by_key: HashMap<[u8; 32], HashMap<[u8; 32], u64>>,
    total: usize,
    /// When every key was last swept of expired proofs.
    swept_at: u64,
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl Replay {
    fn first_use(&self, jkt: &str, jti: &str, until: u64, now: u64) -> Result<(), Reuse> {
        let (key, id) = (digest(jkt), digest(jti));
        let mut seen = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let seen = &mut *seen;
        if let Some(&expires) = seen.by_key.get(&key).and_then(|m| m.get(&id))
            && expires >= now
        {
            return Err(Reuse::Replayed);
        }
        // This key's own expired proofs go first (a few at most).
        if let Some(mine) = seen.by_key.get_mut(&key)
            && mine.len() >= self.per_key
        {
            let before = mine.len();
            mine.retain(|_, expires| *expires >= now);
            seen.total -= before - mine.len();
            if mine.len() >= self.per_key {
                return Err(Reuse::KeyFull);
            }
        }
        // Every key swept at most once a second.
        if seen.total >= self.max && seen.swept_at != now {
            seen.swept_at = now;
            seen.by_key.retain(|_, proofs| {
                proofs.retain(|_, expires| *expires >= now);
                !proofs.is_empty()
            });
            seen.total = seen.by_key.values().map(HashMap::len).sum();
        }
        if seen.total >= self.max {
            return Err(Reuse::Full);
        }
        if seen
            .by_key
            .entry(key)
            .or_default()
            .insert(id, until)
            .is_none()
        {
            seen.total += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_is_taken_once_in_its_window_and_the_memory_is_bounded() {
        let check = DpopCheck::new(Mode::Accepted, Duration::from_secs(60), 2);
        assert_eq!(check.first_use("k", "a", 1000, 1000), Ok(()));
        assert_eq!(check.first_use("k", "a", 1000, 1030), Err(Reuse::Replayed));
        // The same jti from another key is another proof.
        assert_eq!(check.first_use("k2", "a", 1000, 1030), Ok(()));
        assert_eq!(check.first_use("k3", "b", 1000, 1030), Err(Reuse::Full));
        // Once the window has passed, room is made.
        assert_eq!(check.first_use("k3", "b", 1100, 1100), Ok(()));
    }

    #[test]
    fn one_key_cannot_fill_the_memory_for_the_others() {
        let check = DpopCheck::new(Mode::Accepted, Duration::from_secs(60), 10_000);
        for i in 0..MAX_DPOP_PROOFS_PER_KEY {
            assert_eq!(
                check.first_use("greedy", &i.to_string(), 1000, 1000),
                Ok(())
            );
        }
        assert_eq!(
            check.first_use("greedy", "one more", 1000, 1000),
            Err(Reuse::KeyFull)
        );
        assert_eq!(check.first_use("other", "x", 1000, 1000), Ok(()));
        // The greedy key's proofs age out with its window.
        assert_eq!(check.first_use("greedy", "later", 1061, 1061), Ok(()));
    }
}
