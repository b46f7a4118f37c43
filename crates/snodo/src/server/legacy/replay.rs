//! Resumable streams of an initialize-era session: every frame sent on a
//! request's stream gets an event id (`<stream>-<seq>`, unique within the
//! session) and is kept in a bounded log, so that a client whose connection
//! broke can ask for what followed (`Last-Event-ID`) and receive the rest,
//! response included, from that stream only.
//!
//! Bounds: the newest [`MAX_REPLAY_STREAMS`] streams of a session are kept,
//! each with its newest [`MAX_REPLAY_EVENTS`] frames; older ones are gone
//! and a resume naming them is refused.

use std::collections::VecDeque;

use bytes::Bytes;
use tokio::sync::mpsc;

/// Streams whose frames a session keeps for resumption.
pub const MAX_REPLAY_STREAMS: usize = 16;

/// Frames kept per stream.
pub const MAX_REPLAY_EVENTS: usize = 128;

struct Record {
    stream: u64,
    next_seq: u64,
    events: VecDeque<(u64, Bytes)>,
    done: bool,
    /// Where new frames go: the connection that opened the stream, or the
    /// one that resumed it; `None` while nobody is connected.
    follower: Option<mpsc::Sender<(String, Bytes)>>,
}

/// The resumable streams of one session.
#[derive(Default)]
pub(crate) struct ReplayLog {
    next_stream: u64,
    records: VecDeque<Record>,
}

/// What a resume found.
pub(crate) struct Resumed {
    /// Frames that followed the given event, with their ids; when the
    /// stream has not ended, the rest follows on the new connection.
    pub(crate) frames: Vec<(String, Bytes)>,
}

/// Parses `<stream>-<seq>`.
fn parse_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

impl ReplayLog {
    /// Opens a stream whose frames go to `follower`; returns its number.
    pub(crate) fn open(&mut self, follower: mpsc::Sender<(String, Bytes)>) -> u64 {
        self.next_stream += 1;
        if self.records.len() >= MAX_REPLAY_STREAMS {
            self.records.pop_front();
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

    /// Logs one frame of `stream` and returns its event id with the current
    /// follower, if any (the caller sends outside the lock).
    pub(crate) fn push(
        &mut self,
        stream: u64,
        frame: Bytes,
    ) -> (String, Option<mpsc::Sender<(String, Bytes)>>) {
        let Some(record) = self.record(stream) else {
            return (format!("{stream}-0"), None);
        };
        let seq = record.next_seq;
        record.next_seq += 1;
        if record.events.len() >= MAX_REPLAY_EVENTS {
            record.events.pop_front();
        }
        record.events.push_back((seq, frame));
        (format!("{stream}-{seq}"), record.follower.clone())
    }

    /// Marks `stream` finished; its follower is released (its connection ends).
    pub(crate) fn finish(&mut self, stream: u64) {
        if let Some(record) = self.record(stream) {
            record.done = true;
            record.follower = None;
        }
    }

    /// Forgets the follower of `stream` if it is `gone` (closed).
    pub(crate) fn drop_follower(&mut self, stream: u64) {
        if let Some(record) = self.record(stream)
            && record
                .follower
                .as_ref()
                .is_some_and(mpsc::Sender::is_closed)
        {
            record.follower = None;
        }
    }

    /// The frames after `last_event_id` on its stream; future frames go to
    /// `follower` unless the stream is done. `None` when the id names no
    /// stream this log still holds, or events that were already dropped.
    pub(crate) fn resume(
        &mut self,
        last_event_id: &str,
        follower: mpsc::Sender<(String, Bytes)>,
    ) -> Option<Resumed> {
        let (stream, seq) = parse_id(last_event_id)?;
        let record = self.record(stream)?;
        if seq >= record.next_seq {
            return None;
        }
        let oldest = record.events.front().map_or(record.next_seq, |(s, _)| *s);
        if seq + 1 < oldest {
            return None;
        }
        let frames = record
            .events
            .iter()
            .filter(|(s, _)| *s > seq)
            .map(|(s, f)| (format!("{stream}-{s}"), f.clone()))
            .collect();
        if !record.done {
            record.follower = Some(follower);
        }
        Some(Resumed { frames })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_replays_one_stream_after_the_event() {
        let mut log = ReplayLog::default();
        let (tx, _rx) = mpsc::channel(8);
        let a = log.open(tx.clone());
        let b = log.open(tx.clone());
        let (id1, _) = log.push(a, Bytes::from_static(b"a1"));
        log.push(b, Bytes::from_static(b"b1"));
        let (id2, _) = log.push(a, Bytes::from_static(b"a2"));
        log.finish(a);
        assert_eq!(id1, format!("{a}-1"));
        let resumed = log.resume(&id1, tx.clone()).unwrap();
        assert_eq!(
            resumed.frames,
            vec![(id2.clone(), Bytes::from_static(b"a2"))]
        );
        let primed = log.resume(&format!("{a}-0"), tx.clone()).unwrap();
        assert_eq!(primed.frames.len(), 2, "the priming id replays everything");
        assert!(log.resume("99-1", tx.clone()).is_none());
        assert!(log.resume("garbage", tx.clone()).is_none());
        assert!(
            log.resume(&format!("{a}-7"), tx).is_none(),
            "ids never issued"
        );
    }

    #[test]
    fn the_log_is_bounded() {
        let mut log = ReplayLog::default();
        let (tx, _rx) = mpsc::channel(1);
        let first = log.open(tx.clone());
        for _ in 0..MAX_REPLAY_EVENTS + 10 {
            log.push(first, Bytes::from_static(b"x"));
        }
        assert!(
            log.resume(&format!("{first}-1"), tx.clone()).is_none(),
            "dropped"
        );
        assert_eq!(
            log.resume(&format!("{first}-10"), tx.clone())
                .unwrap()
                .frames
                .len(),
            MAX_REPLAY_EVENTS
        );
        for _ in 0..MAX_REPLAY_STREAMS {
            log.open(tx.clone());
        }
        assert!(
            log.resume(&format!("{first}-200"), tx).is_none(),
            "stream dropped"
        );
    }
}
