//! Who gets served by the listener: one budget for connections that carry
//! ordinary requests, another for long-lived streams, caps per peer, and room
//! made by closing the longest-idle keep-alive connection.
//!
//! A connection counts against [`HttpOptions::max_connections`] while it holds
//! no stream. Once a response turns into a long-lived stream (a
//! `subscriptions/listen` stream, an initialize-era GET stream, a streamed
//! request), the stream draws from [`HttpOptions::max_streams`] instead and its
//! connection leaves the connection budget, so open streams never keep a
//! call waiting. When the connection budget is full, the connection idle for
//! longest (no request in flight, no stream, idle for at least 250 ms, so a
//! connection whose first request is still on its way is spared) is closed to
//! make room; only when none is does a new one wait.
//!
//! [`HttpOptions::max_connections`]: super::HttpOptions::max_connections
//! [`HttpOptions::max_streams`]: super::HttpOptions::max_streams

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use tokio::time::{Duration, Instant};

use super::options::HttpOptions;

/// How long a connection must have been idle before it may be closed to make
/// room: a connection just accepted, whose first request is still on its way,
/// is not idle yet.
const MIN_IDLE: Duration = Duration::from_millis(250);
/// How often a new connection waiting for room looks again for one that
/// became idle long enough.
const RECHECK: Duration = Duration::from_millis(50);

/// The limits admission enforces, read once from [`HttpOptions`].
#[derive(Debug, Clone, Copy)]
struct Budget {
    connections: usize,
    streams: usize,
    connections_per_peer: usize,
    streams_per_peer: usize,
    /// Whether the per-peer caps apply to loopback peers too.
    loopback_peers: bool,
}

/// The listener's admission state, shared by the accept loop and every
/// connection.
#[derive(Debug)]
pub(super) struct Admission {
    budget: Budget,
    table: Mutex<Table>,
    /// Notified whenever the connection budget may have room again.
    freed: Notify,
    epoch: Instant,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    connections: HashMap<u64, Arc<Conn>>,
    /// Connections in the connection budget (no stream, not being closed).
    ordinary: usize,
    /// Open long-lived streams.
    streams: usize,
    peers: HashMap<IpAddr, PeerCount>,
}

#[derive(Debug, Default, Clone, Copy)]
struct PeerCount {
    connections: usize,
    streams: usize,
}

/// One admitted connection, as admission tracks it.
#[derive(Debug)]
pub(super) struct Conn {
    id: u64,
    /// The peer, when the per-peer caps apply to it.
    peer: Option<IpAddr>,
    /// Requests whose response has not finished.
    busy: AtomicUsize,
    /// Its open streams (guarded by the table's lock for transitions).
    streams: AtomicUsize,
    /// When it last finished a response, in ms since the listener started.
    last_active: AtomicU64,
    /// Set once admission chose to close it; it left the budget then.
    closing: AtomicBool,
    close: Notify,
}

/// Why a connection or a stream was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// The peer holds its maximum of connections.
    PeerConnections,
    /// Every stream slot is taken.
    Streams,
    /// The peer holds its maximum of streams.
    PeerStreams,
}

impl Admission {
    pub(super) fn new(options: &HttpOptions) -> Self {
        Self {
            budget: Budget {
                connections: options.max_connections,
                streams: options.max_streams,
                connections_per_peer: options.max_connections_per_peer,
                streams_per_peer: options.max_streams_per_peer,
                loopback_peers: options.peer_limits_on_loopback,
            },
            table: Mutex::default(),
            freed: Notify::new(),
            epoch: Instant::now(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // The table holds counters only; a panic elsewhere leaves them usable.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Admits a connection from `peer`: at once when the connection budget
    /// has room or an idle connection can be closed to make some, else once
    /// a connection ends or turns into a stream. Refused when the peer is at
    /// its cap.
    pub(super) async fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Ticket, Refused> {
        let peer = (self.budget.loopback_peers || !peer.is_loopback()).then_some(peer);
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut table = self.lock();
                if let Some(ip) = peer
                    && table.peers.get(&ip).map_or(0, |p| p.connections)
                        >= self.budget.connections_per_peer
                {
                    return Err(Refused::PeerConnections);
                }
                if table.ordinary >= self.budget.connections {
                    self.close_longest_idle(&mut table);
                }
                if table.ordinary < self.budget.connections {
                    let id = table.next_id;
                    table.next_id += 1;
                    let conn = Arc::new(Conn {
                        id,
                        peer,
                        busy: AtomicUsize::new(0),
                        streams: AtomicUsize::new(0),
                        last_active: AtomicU64::new(self.now_ms()),
                        closing: AtomicBool::new(false),
                        close: Notify::new(),
                    });
                    table.connections.insert(id, Arc::clone(&conn));
                    table.ordinary += 1;
                    if let Some(ip) = peer {
                        table.peers.entry(ip).or_default().connections += 1;
                    }
                    return Ok(Ticket {
                        admission: Arc::clone(self),
                        conn,
                    });
                }
            }
            // Room comes when a connection ends or turns into a stream, or
            // when one has been idle long enough to be closed.
            tokio::select! {
                () = freed => {}
                () = tokio::time::sleep(RECHECK) => {}
            }
        }
    }

    /// Asks the longest-idle connection of the budget (idle for at least
    /// [`MIN_IDLE`]) to close, taking it out of the budget at once.
    fn close_longest_idle(&self, table: &mut Table) {
        let now = self.now_ms();
        let min_idle = u64::try_from(MIN_IDLE.as_millis()).unwrap_or(u64::MAX);
        let idle = table
            .connections
            .values()
            .filter(|c| {
                c.busy.load(Ordering::Acquire) == 0
                    && c.streams.load(Ordering::Acquire) == 0
                    && !c.closing.load(Ordering::Acquire)
                    && now.saturating_sub(c.last_active.load(Ordering::Relaxed)) >= min_idle
            })
            .min_by_key(|c| c.last_active.load(Ordering::Relaxed));
        if let Some(conn) = idle {
            conn.closing.store(true, Ordering::Release);
            conn.close.notify_one();
            table.ordinary -= 1;
        }
    }

    /// Opens a stream on `conn`, within the stream budget and the peer's cap.
    pub(super) fn open_stream(self: &Arc<Self>, conn: &Arc<Conn>) -> Result<StreamSlot, Refused> {
        let mut table = self.lock();
        if table.streams >= self.budget.streams {
            return Err(Refused::Streams);
        }
        if let Some(ip) = conn.peer {
            let count = table.peers.entry(ip).or_default();
            if count.streams >= self.budget.streams_per_peer {
                return Err(Refused::PeerStreams);
            }
            count.streams += 1;
        }
        table.streams += 1;
        if conn.streams.fetch_add(1, Ordering::AcqRel) == 0 && !conn.closing.load(Ordering::Acquire)
        {
            table.ordinary -= 1;
            drop(table);
            self.freed.notify_waiters();
        }
        Ok(StreamSlot {
            admission: Arc::clone(self),
            conn: Arc::clone(conn),
        })
    }

    fn close_stream(&self, conn: &Conn) {
        let mut table = self.lock();
        table.streams -= 1;
        if let Some(ip) = conn.peer {
            Self::release_peer(&mut table, ip, |count| count.streams -= 1);
        }
        // A connection that is closing (or gone) stays out of the budget.
        if conn.streams.fetch_sub(1, Ordering::AcqRel) == 1 && !conn.closing.load(Ordering::Acquire)
        {
            table.ordinary += 1;
        }
        conn.last_active.store(self.now_ms(), Ordering::Relaxed);
    }

    fn remove(&self, conn: &Conn) {
        let mut table = self.lock();
        table.connections.remove(&conn.id);
        let was_out = conn.closing.swap(true, Ordering::AcqRel);
        if conn.streams.load(Ordering::Acquire) == 0 && !was_out {
            table.ordinary -= 1;
        }
        if let Some(ip) = conn.peer {
            Self::release_peer(&mut table, ip, |count| count.connections -= 1);
        }
        drop(table);
        self.freed.notify_waiters();
    }

    /// Lowers a peer's count, forgetting the peer once it holds nothing.
    fn release_peer(table: &mut Table, ip: IpAddr, release: impl FnOnce(&mut PeerCount)) {
        if let Some(count) = table.peers.get_mut(&ip) {
            release(count);
            if count.connections == 0 && count.streams == 0 {
                table.peers.remove(&ip);
            }
        }
    }

    /// Connections in the connection budget and open streams, for tests.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let table = self.lock();
        (table.ordinary, table.streams)
    }
}

/// An admitted connection's place; gives it back when dropped.
#[derive(Debug)]
pub(super) struct Ticket {
    admission: Arc<Admission>,
    conn: Arc<Conn>,
}

impl Ticket {
    /// The tracked connection.
    pub(super) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }

    /// Completes when admission asks this connection to close.
    pub(super) async fn closing(&self) {
        self.conn.close.notified().await;
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.admission.remove(&self.conn);
    }
}

impl Conn {
    /// Notes a request in flight until the returned guard drops.
    pub(super) fn busy(self: &Arc<Self>, admission: &Arc<Admission>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy {
            admission: Arc::clone(admission),
            conn: Arc::clone(self),
        }
    }
}

/// A request in flight on a connection (its response not yet finished).
#[derive(Debug)]
pub(super) struct Busy {
    admission: Arc<Admission>,
    conn: Arc<Conn>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.conn
            .last_active
            .store(self.admission.now_ms(), Ordering::Relaxed);
        self.conn.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One open long-lived stream; gives its slot back when dropped.
#[derive(Debug)]
pub(super) struct StreamSlot {
    admission: Arc<Admission>,
    conn: Arc<Conn>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.admission.close_stream(&self.conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(options: HttpOptions) -> Arc<Admission> {
        Arc::new(Admission::new(&options))
    }

    const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    const REMOTE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));

    #[tokio::test]
    async fn a_full_budget_closes_the_longest_idle_connection() {
        let admission = admission(HttpOptions::new().max_connections(2));
        let first = admission.admit(LOOPBACK).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let second = admission.admit(LOOPBACK).await.unwrap();
        // Neither is idle long enough yet: the third waits, then the longest
        // idle one gives way.
        let started = Instant::now();
        let third = admission.admit(LOOPBACK).await.unwrap();
        assert!(started.elapsed() >= MIN_IDLE - std::time::Duration::from_millis(10));
        // The first (longest idle) was asked to close and left the budget.
        assert!(first.conn.closing.load(Ordering::Acquire));
        assert!(!second.conn.closing.load(Ordering::Acquire));
        assert_eq!(admission.counts(), (2, 0));
        tokio::time::timeout(std::time::Duration::from_secs(1), first.closing())
            .await
            .expect("the close request is remembered");
        drop((first, second, third));
        assert_eq!(admission.counts(), (0, 0));
    }

    #[tokio::test]
    async fn busy_connections_are_not_closed_and_a_new_one_waits() {
        let admission = admission(HttpOptions::new().max_connections(1));
        let first = admission.admit(LOOPBACK).await.unwrap();
        let busy = first.conn().busy(&admission);
        let waiting = tokio::spawn({
            let admission = Arc::clone(&admission);
            async move { admission.admit(LOOPBACK).await.map(drop) }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "no idle connection to close");
        drop(busy);
        drop(first);
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("admitted once the first connection ended")
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn a_stream_moves_its_connection_out_of_the_connection_budget() {
        let admission = admission(HttpOptions::new().max_connections(1).max_streams(1));
        let listener = admission.admit(LOOPBACK).await.unwrap();
        let busy = listener.conn().busy(&admission);
        let stream = admission.open_stream(listener.conn()).unwrap();
        assert_eq!(admission.counts(), (0, 1));
        // The budget has room although the streaming connection is busy.
        let caller = tokio::time::timeout(
            std::time::Duration::from_millis(100),
            admission.admit(LOOPBACK),
        )
        .await
        .expect("admitted at once")
        .unwrap();
        assert_eq!(
            admission.open_stream(caller.conn()).unwrap_err(),
            Refused::Streams
        );
        drop((stream, busy));
        assert_eq!(admission.counts(), (2, 0));
        drop((listener, caller));
        assert_eq!(admission.counts(), (0, 0));
    }

    #[tokio::test]
    async fn per_peer_caps_apply_to_remote_peers_and_optionally_to_loopback() {
        let options = HttpOptions::new()
            .max_connections_per_peer(1)
            .max_streams_per_peer(1);
        let admission = admission(options.clone());
        let remote = admission.admit(REMOTE).await.unwrap();
        assert_eq!(
            admission.admit(REMOTE).await.unwrap_err(),
            Refused::PeerConnections
        );
        let stream = admission.open_stream(remote.conn()).unwrap();
        assert_eq!(
            admission.open_stream(remote.conn()).unwrap_err(),
            Refused::PeerStreams
        );
        // Loopback peers are not capped by default ...
        let local = [
            admission.admit(LOOPBACK).await.unwrap(),
            admission.admit(LOOPBACK).await.unwrap(),
        ];
        drop((stream, remote, local));
        // ... unless asked.
        let strict = self::admission(options.peer_limits_on_loopback(true));
        let _one = strict.admit(LOOPBACK).await.unwrap();
        assert_eq!(
            strict.admit(LOOPBACK).await.unwrap_err(),
            Refused::PeerConnections
        );
    }
}
