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
                map: Mutex::new(HashMap::new()),
            },
        }
    }

    /// Records the proof `jti` of the key `jkt`, made at `iat`; refused when
    /// it was seen before in the window, or when the memory is full.
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
    /// Too many proofs in the window.
    Full,
}

/// Proofs seen, by the SHA-256 of their key and `jti`, each until the end
/// of its window.
#[derive(Debug)]
struct Replay {
    max: usize,
    map: Mutex<HashMap<[u8; 32], u64>>,
}

impl Replay {
    fn first_use(&self, jkt: &str, jti: &str, until: u64, now: u64) -> Result<(), Reuse> {
        let mut hasher = Sha256::new();
        hasher.update(jkt.as_bytes());
        hasher.update([0]);
        hasher.update(jti.as_bytes());
        let key: [u8; 32] = hasher.finalize().into();
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&expires) = map.get(&key)
            && expires >= now
        {
            return Err(Reuse::Replayed);
        }
        if map.len() >= self.max {
            map.retain(|_, expires| *expires >= now);
            if map.len() >= self.max {
                return Err(Reuse::Full);
            }
        }
        map.insert(key, until);
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
        assert_eq!(check.first_use("k", "b", 1000, 1030), Err(Reuse::Full));
        // Once the window has passed, room is made.
        assert_eq!(check.first_use("k", "b", 1100, 1100), Ok(()));
    }
}
