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

use std::collections::VecDeque;

use bytes::Bytes;
use tokio::sync::mpsc;

/// Finished streams whose frames a session keeps for resumption.
pub const MAX_REPLAY_STREAMS: usize = 16;

/// Frames kept per stream.
pub const MAX_REPLAY_EVENTS: usize = 128;

/// Bytes of frames kept per session.
pub const MAX_REPLAY_BYTES: usize = 4 * 1024 * 1024;

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
    bytes: usize,
}

/// Parses `<stream>-<seq>`.
fn parse_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

impl ReplayLog {
    /// Opens a stream whose frames go to `follower`; returns its number.
    pub(crate) fn open(&mut self, follower: Follower) -> u64 {
        self.next_stream += 1;
        let finished = self.records.iter().filter(|r| r.done).count();
        if finished >= MAX_REPLAY_STREAMS
            && let Some(i) = self.records.iter().position(|r| r.done)
            && let Some(gone) = self.records.remove(i)
        {
            self.bytes -= gone.events.iter().map(|(_, f)| f.len()).sum::<usize>();
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

    /// Frees bytes until the log fits its budget: whole finished streams
    /// first, then the oldest frames of any stream.
    fn trim(&mut self) {
        while self.bytes > MAX_REPLAY_BYTES {
            if let Some(i) = self.records.iter().position(|r| r.done) {
                if let Some(gone) = self.records.remove(i) {
                    self.bytes -= gone.events.iter().map(|(_, f)| f.len()).sum::<usize>();
                }
                continue;
            }
            let Some(record) = self.records.iter_mut().find(|r| !r.events.is_empty()) else {
                break;
            };
            if let Some((_, frame)) = record.events.pop_front() {
                self.bytes -= frame.len();
            }
        }
    }

    /// Logs one frame of `stream` and returns its event id with the current
    /// follower, if any (the caller sends outside the lock).
    pub(crate) fn push(&mut self, stream: u64, frame: Bytes) -> (String, Option<Follower>) {
        let Some(record) = self.record(stream) else {
            return (format!("{stream}-0"), None);
        };
        let seq = record.next_seq;
        record.next_seq += 1;
        let mut freed = 0;
        if record.events.len() >= MAX_REPLAY_EVENTS
            && let Some((_, old)) = record.events.pop_front()
        {
            freed = old.len();
        }
        let added = frame.len();
        record.events.push_back((seq, frame));
        let follower = record.follower.clone();
        self.bytes = self.bytes + added - freed;
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
}
