//! Counts of what each [`Share`] holds in a table every client uses, with
//! a bound per share: a slot is taken while the share is under it and given
//! back when dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::context::Share;

/// Listen streams one principal (or, when anonymous, one remote address)
/// may hold open at once on a server, by default.
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_SHARE: usize = 256;

/// How many slots each share holds, bounded per share.
#[derive(Debug)]
pub(crate) struct ShareCounts {
    max: usize,
    held: Arc<Mutex<HashMap<Share, usize>>>,
}

/// A slot a share holds until it is dropped.
#[derive(Debug)]
pub(crate) struct ShareSlot {
    share: Share,
    held: Arc<Mutex<HashMap<Share, usize>>>,
}

impl ShareCounts {
    /// At most `max` slots per share (at least one).
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            held: Arc::default(),
        }
    }

    /// The bound per share.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// A slot for `share`, unless it holds the bound already.
    pub(crate) fn try_take(&self, share: &Share) -> Option<ShareSlot> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let n = held.entry(share.clone()).or_default();
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(ShareSlot {
            share: share.clone(),
            held: self.held.clone(),
        })
    }
}

impl Drop for ShareSlot {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.get_mut(&self.share) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.share);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_share_is_bounded_on_its_own_and_slots_come_back() {
        let counts = ShareCounts::new(2);
        let (a, b) = (
            Share::of(None, Some([127, 0, 0, 1].into())),
            Share::of(None, None),
        );
        let first = counts.try_take(&a).unwrap();
        let _second = counts.try_take(&a).unwrap();
        assert!(counts.try_take(&a).is_none());
        assert!(counts.try_take(&b).is_some(), "another share has room");
        drop(first);
        assert!(counts.try_take(&a).is_some(), "a dropped slot comes back");
    }
}
