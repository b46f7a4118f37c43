//! Resumable streams of an initialize-era session: every frame sent on a
//! request's stream gets an event id (`<stream>-<seq>`, unique within the
//! session) and is kept in a bounded log, so that a client whose connection
//! broke can ask for what followed (`Last-Event-ID`) and receive the rest,
//! response included, from that stream only.
//!
//! Bounds, per session: finished streams beyond the newest
//! [`MAX_REPLAY_STREAMS`] are forgotten, each stream keeps its newest
//! [`MAX_REPLAY_EVENTS`] frames, and all kept frames together stay under
//! [`MAX_REPLAY_BYTES`] (finished streams go first, then the oldest frames).
//! A stream still running is never dropped: its frames keep flowing to its
//! connection even when they no longer fit the log. A resume naming frames
//! that are gone is refused.
//!
//! Across sessions, every log of a service charges one [`ReplayBudget`]
//! ([`DEFAULT_REPLAY_BUDGET`] unless set): a frame that does not fit once the
//! session's own older frames are gone is sent but not kept, so the frames
//! all sessions keep never pass the budget, however many sessions stream.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::mpsc;

/// Finished streams whose frames a session keeps for resumption.
pub const MAX_REPLAY_STREAMS: usize = 16;

/// Frames kept per stream.
pub const MAX_REPLAY_EVENTS: usize = 128;

/// Bytes of frames kept per session.
pub const MAX_REPLAY_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of frames all the sessions of a service keep together, by default.
pub const DEFAULT_REPLAY_BUDGET: usize = 256 * 1024 * 1024;

/// A byte budget the replay logs of many sessions share (see
/// [`HttpOptions::replay_budget`](crate::transport::http::HttpOptions::replay_budget)).
///
/// ```
/// use snodo::server::legacy::ReplayBudget;
/// let budget = ReplayBudget::new(64 * 1024 * 1024);
/// assert_eq!((budget.held(), budget.max()), (0, 64 * 1024 * 1024));
/// ```
#[derive(Debug)]
pub struct ReplayBudget {
    max: usize,
    held: AtomicUsize,
}

impl ReplayBudget {
    /// A budget of `max` bytes, to share.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            held: AtomicUsize::new(0),
        })
    }

    /// The budget.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The bytes of frames kept now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// Takes `n` bytes if they fit.
    fn take(&self, n: usize) -> bool {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(n).filter(|total| *total <= self.max)
            })
            .is_ok()
    }

    fn give(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::AcqRel);
    }
}

/// Where a stream's frames go: `(event id, frame)`.
pub(crate) type Follower = mpsc::Sender<(String, Bytes)>;

struct Record {
    stream: u64,
    next_seq: u64,
    events: VecDeque<(u64, Bytes)>,
    done: bool,
    /// The connection that opened the stream, or the one that resumed it;
    /// `None` while nobody is connected.
    follower: Option<Follower>,
}

/// The resumable streams of one session.
#[derive(Default)]
pub(crate) struct ReplayLog {
    next_stream: u64,
    records: VecDeque<Record>,
    /// Bytes of the frames kept, all charged to `budget` when there is one.
    bytes: usize,
    budget: Option<Arc<ReplayBudget>>,
}

impl Drop for ReplayLog {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            budget.give(self.bytes);
        }
    }
}

/// Parses `<stream>-<seq>`.
fn parse_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

impl ReplayLog {
    /// Charges the frames this log keeps to `budget` from now on (the
    /// first budget given stays).
    pub(crate) fn charge(&mut self, budget: &Arc<ReplayBudget>) {
        if self.budget.is_none() && budget.take(self.bytes) {
            self.budget = Some(budget.clone());
        }
    }

    /// Forgets `n` bytes of frames.
    fn release(&mut self, n: usize) {
        self.bytes -= n;
        if let Some(budget) = &self.budget {
            budget.give(n);
        }
    }

    /// Drops the finished stream at `i`.
    fn drop_record(&mut self, i: usize) {
        if let Some(gone) = self.records.remove(i) {
            self.release(gone.events.iter().map(|(_, f)| f.len()).sum());
        }
    }

    /// Drops the oldest frame of any stream, finished streams' first;
    /// `false` when none is kept.
    fn drop_oldest(&mut self) -> bool {
        if let Some(i) = self.records.iter().position(|r| r.done) {
            self.drop_record(i);
            return true;
        }
        let Some(record) = self.records.iter_mut().find(|r| !r.events.is_empty()) else {
            return false;
        };
        let freed = record
            .events
            .pop_front()
            .map_or(0, |(_, frame)| frame.len());
        self.release(freed);
        true
    }

    /// Opens a stream whose frames go to `follower`; returns its number.
    pub(crate) fn open(&mut self, follower: Follower) -> u64 {
        self.next_stream += 1;
        let finished = self.records.iter().filter(|r| r.done).count();
        if finished >= MAX_REPLAY_STREAMS
            && let Some(i) = self.records.iter().position(|r| r.done)
        {
            self.drop_record(i);
        }
        self.records.push_back(Record {
            stream: self.next_stream,
            next_seq: 1,
            events: VecDeque::new(),
            done: false,
            follower: Some(follower),
        });
        self.next_stream
    }

    fn record(&mut self, stream: u64) -> Option<&mut Record> {
        self.records.iter_mut().find(|r| r.stream == stream)
    }

    /// Frees bytes until the log fits its own bound: whole finished streams
    /// first, then the oldest frames of any stream.
    fn trim(&mut self) {
        while self.bytes > MAX_REPLAY_BYTES && self.drop_oldest() {}
    }

    /// Makes room for `n` more bytes in the shared budget, dropping this
    /// log's oldest frames as needed; `false` when they do not fit even with
    /// nothing of this session's kept.
    fn fits(&mut self, n: usize) -> bool {
        let Some(budget) = self.budget.clone() else {
            return true;
        };
        loop {
            if budget.take(n) {
                return true;
            }
            if !self.drop_oldest() {
                return false;
            }
        }
    }

    /// Logs one frame of `stream` and returns its event id with the current
    /// follower, if any (the caller sends outside the lock). A frame the
    /// shared budget cannot hold is not kept: it is sent, and a resume from
    /// before it is refused.
    pub(crate) fn push(&mut self, stream: u64, frame: Bytes) -> (String, Option<Follower>) {
        let Some(record) = self.record(stream) else {
            return (format!("{stream}-0"), None);
        };
        let seq = record.next_seq;
        record.next_seq += 1;
        let follower = record.follower.clone();
        let freed = if record.events.len() >= MAX_REPLAY_EVENTS {
            record.events.pop_front().map_or(0, |(_, old)| old.len())
        } else {
            0
        };
        self.release(freed);
        let added = frame.len();
        if self.fits(added) {
            if let Some(record) = self.record(stream) {
                record.events.push_back((seq, frame));
                self.bytes += added;
            } else if let Some(budget) = &self.budget {
                budget.give(added);
            }
        } else if let Some(record) = self.record(stream) {
            // Not kept: older frames of this stream can no longer be
            // replayed in order either.
            let gone: usize = record.events.drain(..).map(|(_, f)| f.len()).sum();
            self.release(gone);
        }
        self.trim();
        (format!("{stream}-{seq}"), follower)
    }

    /// Marks `stream` finished; its follower is released (its connection ends).
    pub(crate) fn finish(&mut self, stream: u64) {
        if let Some(record) = self.record(stream) {
            record.done = true;
            record.follower = None;
        }
        self.trim();
    }

    /// Detaches the follower of `stream` (its connection is gone or stalled);
    /// the frames stay in the log for a resume.
    pub(crate) fn detach(&mut self, stream: u64) {
        if let Some(record) = self.record(stream) {
            record.follower = None;
        }
    }

    /// Sends `follower` the frames after `last_event_id` on its stream, in
    /// order, and makes it the stream's follower unless the stream is done
    /// (then dropping the follower ends the new connection after the
    /// replay). `false` when the id names no stream this log still holds, or
    /// frames already dropped. `follower` must have room for
    /// [`MAX_REPLAY_EVENTS`] frames.
    pub(crate) fn resume(&mut self, last_event_id: &str, follower: Follower) -> bool {
        let Some((stream, seq)) = parse_id(last_event_id) else {
            return false;
        };
        let Some(record) = self.record(stream) else {
            return false;
        };
        if seq >= record.next_seq {
            return false;
        }
        let oldest = record.events.front().map_or(record.next_seq, |(s, _)| *s);
        if seq + 1 < oldest {
            return false;
        }
        for (s, frame) in record.events.iter().filter(|(s, _)| *s > seq) {
            let _ = follower.try_send((format!("{stream}-{s}"), frame.clone()));
        }
        if !record.done {
            record.follower = Some(follower);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut mpsc::Receiver<(String, Bytes)>) -> Vec<(String, Bytes)> {
        let mut out = Vec::new();
        while let Ok(item) = rx.try_recv() {
            out.push(item);
        }
        out
    }

    #[test]
    fn resume_replays_one_stream_after_the_event_in_order() {
        let mut log = ReplayLog::default();
        let (tx, _rx) = mpsc::channel(8);
        let a = log.open(tx.clone());
        let b = log.open(tx.clone());
        let (id1, _) = log.push(a, Bytes::from_static(b"a1"));
        log.push(b, Bytes::from_static(b"b1"));
        let (id2, _) = log.push(a, Bytes::from_static(b"a2"));
        log.finish(a);
        assert_eq!(id1, format!("{a}-1"));
        let (resumed, mut rx) = mpsc::channel(MAX_REPLAY_EVENTS);
        assert!(log.resume(&id1, resumed));
        assert_eq!(drain(&mut rx), vec![(id2, Bytes::from_static(b"a2"))]);
        let (primed, mut rx) = mpsc::channel(MAX_REPLAY_EVENTS);
        assert!(log.resume(&format!("{a}-0"), primed));
        assert_eq!(drain(&mut rx).len(), 2, "the priming id replays everything");
        assert!(!log.resume("99-1", tx.clone()));
        assert!(!log.resume("garbage", tx.clone()));
        assert!(!log.resume(&format!("{a}-7"), tx), "ids never issued");
    }

    #[test]
    fn a_live_stream_is_never_dropped_and_finished_ones_are_bounded() {
        let mut log = ReplayLog::default();
        let (tx, _rx) = mpsc::channel(1);
        let live = log.open(tx.clone());
        for _ in 0..MAX_REPLAY_STREAMS + 5 {
            let s = log.open(tx.clone());
            log.push(s, Bytes::from_static(b"x"));
            log.finish(s);
        }
        let (_, follower) = log.push(live, Bytes::from_static(b"still here"));
        assert!(follower.is_some(), "the live stream kept its connection");
        assert_eq!(
            log.records.iter().filter(|r| r.done).count(),
            MAX_REPLAY_STREAMS
        );
    }

    #[test]
    fn frames_and_bytes_are_bounded() {
        let mut log = ReplayLog::default();
        let (tx, _rx) = mpsc::channel(1);
        let first = log.open(tx.clone());
        for _ in 0..MAX_REPLAY_EVENTS + 10 {
            log.push(first, Bytes::from_static(b"x"));
        }
        assert!(!log.resume(&format!("{first}-1"), tx.clone()), "dropped");
        let (resumed, mut rx) = mpsc::channel(MAX_REPLAY_EVENTS);
        assert!(log.resume(&format!("{first}-10"), resumed));
        assert_eq!(drain(&mut rx).len(), MAX_REPLAY_EVENTS);

        let mut big = ReplayLog::default();
        let s = big.open(tx.clone());
        let mib = Bytes::from(vec![b'x'; 1024 * 1024]);
        for _ in 0..10 {
            big.push(s, mib.clone());
        }
        assert!(big.bytes <= MAX_REPLAY_BYTES, "{}", big.bytes);
        let (_, follower) = big.push(s, Bytes::from_static(b"y"));
        assert!(follower.is_some());
    }

    #[test]
    fn logs_sharing_a_budget_never_keep_more_than_it() {
        const MIB: usize = 1024 * 1024;
        let budget = ReplayBudget::new(3 * MIB);
        let mib = Bytes::from(vec![b'x'; MIB]);
        let (tx, _rx) = mpsc::channel(1);
        let mut logs: Vec<ReplayLog> = (0..5).map(|_| ReplayLog::default()).collect();
        let mut ids = Vec::new();
        for log in &mut logs {
            log.charge(&budget);
            let s = log.open(tx.clone());
            let (id, follower) = log.push(s, mib.clone());
            assert!(follower.is_some(), "sent whether kept or not");
            log.finish(s);
            ids.push((s, id));
        }
        assert_eq!(budget.held(), 3 * MIB, "three kept, two sent only");
        let resumable = |log: &mut ReplayLog, s: u64| {
            let (rx_tx, _rx) = mpsc::channel(MAX_REPLAY_EVENTS);
            log.resume(&format!("{s}-0"), rx_tx)
        };
        assert!(resumable(&mut logs[0], ids[0].0));
        assert!(!resumable(&mut logs[4], ids[4].0), "not kept, not replayed");
        // A session's own older frames make room for its newer ones.
        let s = logs[0].open(tx.clone());
        logs[0].push(s, mib.clone());
        assert_eq!(budget.held(), 3 * MIB);
        assert!(resumable(&mut logs[0], s));
        assert!(!resumable(&mut logs[0], ids[0].0), "gave way");
        drop(logs);
        assert_eq!(budget.held(), 0, "a session's end gives its bytes back");
    }
}
