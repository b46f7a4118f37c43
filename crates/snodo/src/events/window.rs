//! The replay window: which authenticated envelopes a hub takes.
//!
//! An envelope is taken when its time is within the window of the
//! receiver's clock (either way: the nodes' clocks may differ by less than
//! the window), and its sequence number is above the last one taken from
//! its node. The window remembers the last number of at most a bounded
//! number of nodes; a node none of whose envelopes is younger than the
//! window is forgotten first (its old envelopes are stale anyway), and when
//! every remembered node is younger, an envelope of a new node is refused
//! rather than forgetting one whose envelopes could still be replayed.

use std::collections::HashMap;

/// What the window says of an envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Taken; `gap` when envelopes of its node were missed before it.
    Fresh { gap: bool },
    /// Its time is outside the window.
    Stale,
    /// Its number is not above the last taken from its node.
    Replayed,
    /// A new node while the window remembers as many as it may, all recent.
    Crowded,
}

/// The last envelope taken from one node.
#[derive(Debug, Clone, Copy)]
struct Last {
    seq: u64,
    /// Its time (sender's clock, milliseconds).
    time: u64,
}

/// Per-node sequence numbers within a time window.
#[derive(Debug)]
pub(crate) struct Window {
    span_ms: u64,
    max_origins: usize,
    last: HashMap<String, Last>,
}

impl Window {
    /// A window of `span_ms` milliseconds either way, remembering at most
    /// `max_origins` nodes.
    pub(crate) fn new(span_ms: u64, max_origins: usize) -> Self {
        Self {
            span_ms,
            max_origins: max_origins.max(1),
            last: HashMap::new(),
        }
    }

    /// Decides on an envelope of `origin` numbered `seq`, sealed at `time`,
    /// arriving at `now` (milliseconds since the Unix epoch), and remembers
    /// it when it is taken.
    pub(crate) fn admit(&mut self, origin: &str, seq: u64, time: u64, now: u64) -> Admit {
        if time.abs_diff(now) > self.span_ms {
            return Admit::Stale;
        }
        if let Some(last) = self.last.get_mut(origin) {
            if seq <= last.seq {
                return Admit::Replayed;
            }
            let gap = seq != last.seq + 1;
            *last = Last {
                seq,
                time: last.time.max(time),
            };
            return Admit::Fresh { gap };
        }
        if self.last.len() >= self.max_origins {
            let horizon = now.saturating_sub(self.span_ms);
            self.last.retain(|_, last| last.time >= horizon);
            if self.last.len() >= self.max_origins {
                return Admit::Crowded;
            }
        }
        self.last.insert(origin.to_string(), Last { seq, time });
        Admit::Fresh { gap: false }
    }

    /// How many nodes the window remembers.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.last.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_000_000;

    #[test]
    fn old_and_future_envelopes_are_stale() {
        let mut w = Window::new(30_000, 8);
        assert_eq!(w.admit("a", 1, NOW - 30_001, NOW), Admit::Stale);
        assert_eq!(w.admit("a", 1, NOW + 30_001, NOW), Admit::Stale);
        assert_eq!(
            w.admit("a", 1, NOW - 30_000, NOW),
            Admit::Fresh { gap: false }
        );
        assert_eq!(
            w.admit("a", 2, NOW + 30_000, NOW),
            Admit::Fresh { gap: false }
        );
    }

    #[test]
    fn a_number_is_taken_once_and_gaps_show() {
        let mut w = Window::new(30_000, 8);
        assert_eq!(w.admit("a", 5, NOW, NOW), Admit::Fresh { gap: false });
        assert_eq!(w.admit("a", 5, NOW, NOW), Admit::Replayed);
        assert_eq!(w.admit("a", 4, NOW, NOW), Admit::Replayed);
        assert_eq!(w.admit("a", 6, NOW, NOW), Admit::Fresh { gap: false });
        assert_eq!(w.admit("a", 9, NOW, NOW), Admit::Fresh { gap: true });
        assert_eq!(w.admit("a", 7, NOW, NOW), Admit::Replayed);
        assert_eq!(w.admit("b", 7, NOW, NOW), Admit::Fresh { gap: false });
    }

    #[test]
    fn only_nodes_older_than_the_window_are_forgotten() {
        let mut w = Window::new(30_000, 2);
        assert_eq!(w.admit("a", 1, NOW, NOW), Admit::Fresh { gap: false });
        assert_eq!(w.admit("b", 1, NOW, NOW), Admit::Fresh { gap: false });
        // Both are recent: a third node waits.
        assert_eq!(w.admit("c", 1, NOW + 10, NOW + 10), Admit::Crowded);
        assert_eq!(w.remembered(), 2);
        // A keeps talking; B falls silent past the window and is forgotten.
        let later = NOW + 40_000;
        assert_eq!(w.admit("a", 2, later, later), Admit::Fresh { gap: false });
        assert_eq!(w.admit("c", 1, later, later), Admit::Fresh { gap: false });
        assert_eq!(w.remembered(), 2);
        // B's old envelopes stay refused: they are stale.
        assert_eq!(w.admit("b", 1, NOW, later), Admit::Stale);
        // A's are still remembered.
        assert_eq!(w.admit("a", 2, later, later), Admit::Replayed);
    }
}
