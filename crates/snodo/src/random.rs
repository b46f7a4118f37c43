//! Unguessable values from the operating system's random source, and the
//! one rule for when it fails: the operation that needed the value is
//! refused with [`RandomUnavailable`]. Nothing falls back to a clock, a
//! counter or a process id, which would make a session id, a task id, a
//! token or a secret guessable.

use std::fmt;

/// The operating system's random source failed, so no unguessable value (a
/// session, task or request id, a token, a secret) could be made.
///
/// The operation that needed the value is refused with this error and
/// leaves nothing behind: a new session is answered 503, a task creation or
/// a request to the client -32603, a login or a key generation fails. snodo
/// never falls back to a guessable value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomUnavailable {
    /// What the operating system said, when it said something.
    cause: Option<getrandom::Error>,
}

impl fmt::Display for RandomUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the operating system's random source failed; no unguessable id can be made")?;
        match &self.cause {
            Some(cause) => write!(f, " ({cause})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for RandomUnavailable {}

/// Fills `bytes` from the operating system's random source.
pub(crate) fn fill(bytes: &mut [u8]) -> Result<(), RandomUnavailable> {
    #[cfg(test)]
    if switch::fails() {
        return Err(RandomUnavailable { cause: None });
    }
    getrandom::fill(bytes).map_err(|e| RandomUnavailable { cause: Some(e) })
}

/// `n` random bytes as `2 * n` lowercase hex digits.
pub(crate) fn hex(n: usize) -> Result<String, RandomUnavailable> {
    use fmt::Write as _;
    let mut bytes = vec![0u8; n];
    fill(&mut bytes)?;
    let mut out = String::with_capacity(2 * n);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) use switch::{failing, failing_after};

/// A test-only switch that makes the random source fail on the current
/// thread (a current-thread runtime runs its tasks there too). It exists
/// only in the crate's own test build.
#[cfg(test)]
mod switch {
    use std::cell::Cell;

    thread_local! {
        /// `Some(n)`: the next `n` fills succeed, the ones after fail.
        static FAIL_AFTER: Cell<Option<usize>> = const { Cell::new(None) };
    }

    /// Whether this fill fails (and counts it).
    pub(super) fn fails() -> bool {
        FAIL_AFTER.with(|f| match f.get() {
            None => false,
            Some(0) => true,
            Some(n) => {
                f.set(Some(n - 1));
                false
            }
        })
    }

    /// While held, every fill on this thread fails.
    #[must_use = "the random source works again once the guard is dropped"]
    pub(crate) struct Failing {
        before: Option<usize>,
    }

    impl Drop for Failing {
        fn drop(&mut self) {
            FAIL_AFTER.with(|f| f.set(self.before));
        }
    }

    /// Every fill on this thread fails until the guard is dropped.
    pub(crate) fn failing() -> Failing {
        failing_after(0)
    }

    /// The next `n` fills on this thread succeed, every later one fails,
    /// until the guard is dropped.
    pub(crate) fn failing_after(n: usize) -> Failing {
        Failing {
            before: FAIL_AFTER.with(|f| f.replace(Some(n))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_hex_and_the_switch_refuses_them() {
        let ids: std::collections::HashSet<String> =
            (0..100).map(|_| hex(16).expect("random")).collect();
        assert_eq!(ids.len(), 100);
        assert!(ids.iter().all(|id| {
            id.len() == 32
                && id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }));
        {
            let _off = failing();
            let err = hex(16).unwrap_err();
            assert!(err.to_string().contains("random source failed"), "{err}");
            assert!(fill(&mut [0u8; 4]).is_err());
        }
        assert!(hex(16).is_ok(), "the guard's drop restores the source");
        let _two = failing_after(2);
        assert!(hex(1).is_ok() && hex(1).is_ok());
        assert!(hex(1).is_err());
        // Another thread is not affected.
        assert!(std::thread::spawn(|| hex(16).is_ok()).join().unwrap());
    }
}
