//! Relists of one backend, coalesced: list changes (and clashes to look at
//! again) ask for the kinds they name, and one task lists them. While it
//! lists, what is asked for waits as one queued relist; whatever is asked
//! for meanwhile joins it. A burst of notifications costs at most the
//! relist in flight and the one after it.

use std::sync::Mutex;

use tokio::sync::Notify;

use super::listing::Kinds;

/// The kinds one backend waits to have listed again.
#[derive(Debug, Default)]
pub(crate) struct Relists {
    pending: Mutex<Kinds>,
    wake: Notify,
}

impl Relists {
    /// Asks for `kinds` to be listed again (joining a relist already
    /// queued).
    pub(crate) fn ask(&self, kinds: Kinds) {
        if kinds.is_empty() {
            return;
        }
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        *pending = pending.union(kinds);
        drop(pending);
        self.wake.notify_one();
    }

    /// The kinds asked for since the last call, waiting until there are
    /// some.
    pub(crate) async fn next(&self) -> Kinds {
        loop {
            {
                let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                if !pending.is_empty() {
                    return std::mem::take(&mut *pending);
                }
            }
            // A permit stored by an `ask` after the check wakes this at once.
            self.wake.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn asks_made_while_one_relist_runs_make_one_more() {
        let relists = Relists::default();
        relists.ask(Kinds::TOOLS);
        assert_eq!(relists.next().await, Kinds::TOOLS);
        for _ in 0..200 {
            relists.ask(Kinds::TOOLS);
        }
        relists.ask(Kinds::PROMPTS);
        assert_eq!(relists.next().await, Kinds::TOOLS.union(Kinds::PROMPTS));
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), relists.next());
        assert!(waiting.await.is_err(), "nothing more is queued");
    }
}
