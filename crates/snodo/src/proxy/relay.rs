//! Requests a backend sends its client while one of the proxy's calls runs
//! (initialize-era elicitation and sampling): each is routed to the
//! call in flight, which hands it to its own caller as an `input_required`
//! answer and waits, parked, for the caller to come back with the answer.
//!
//! The initialize-era wire does not say which request a server request
//! belongs to, so a request is routed to the one forwarded request of its
//! backend that is running (not parked), or, when none runs, to the one
//! that is parked; otherwise it is refused with an error saying so. The
//! relay does not declare roots: a backend may ask for them outside any
//! request, where no caller could answer.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::RandomUnavailable;
use crate::client::answer::RawResult;
use crate::client::{ClientBuilder, ClientError, LogMessage, Progress};
use crate::context::ElicitResponse;
use crate::error::BoxError;

/// How long a parked request waits for its caller's answer.
pub const PARKED_TTL: Duration = Duration::from_secs(600);
/// The most requests parked at once per backend; past it the oldest is
/// dropped (and cancelled at the backend).
pub const MAX_PARKED: usize = 256;
/// How many progress updates and log messages of one request wait for its
/// caller; past it the newest are dropped (a backend cannot fill memory
/// faster than the caller reads).
pub const QUEUE: usize = 64;
/// The prefix of the `requestState` that names a parked request.
pub(crate) const STATE_PREFIX: &str = "snodo-proxy-parked:";

/// One request the backend asked the proxy's client.
pub(crate) struct Ask {
    pub(crate) method: &'static str,
    pub(crate) params: Value,
    pub(crate) reply: oneshot::Sender<Result<Value, BoxError>>,
}

/// Routes a backend's requests to the forwarded request that is in flight.
/// Install it on the backend's client builder ([`Relay::install`]) and hand
/// it to [`Proxy::add_relayed_backend`](super::Proxy::add_relayed_backend).
#[derive(Clone)]
pub struct Relay {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("in_flight", &self.inner.lock().len())
            .finish()
    }
}

struct Inner {
    /// How long a parked request waits for its caller.
    ttl: Duration,
    next: AtomicU64,
    /// The flights, by id.
    flights: Mutex<HashMap<u64, Slot, Ids>>,
    parked: Mutex<Vec<(String, Instant, Flight)>>,
}

/// Where a flight takes what its backend sends.
struct Slot {
    mailbox: Arc<Mailbox>,
    /// Running, not parked.
    running: bool,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Slot, Ids>> {
        self.flights.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Hashes the flights' ids, which the relay numbers itself: a multiply
/// spreads the counter's bits (no caller chooses them, so no keyed hash is
/// needed).
#[derive(Default, Clone, Copy)]
struct Ids;

impl std::hash::BuildHasher for Ids {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

/// The hasher of [`Ids`].
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// What a backend sent one forwarded request, waiting for the request to
/// pass it on to its caller.
pub(crate) enum Letter {
    /// A progress update.
    Progress(Progress),
    /// A log message.
    Log(LogMessage),
    /// A request of the backend's, which the caller must answer.
    Ask(Ask),
}

/// The letters of one forwarded request, in the order they came: at most
/// [`QUEUE`] progress updates and [`QUEUE`] log messages (past it the newest
/// are dropped), and the backend's requests. One lock and one allocation
/// per forwarded request, where three channels took six.
#[derive(Default)]
pub(crate) struct Mailbox {
    letters: Mutex<Letters>,
}

#[derive(Default)]
struct Letters {
    queue: VecDeque<Letter>,
    /// How many progress updates and log messages are queued.
    progress: usize,
    logs: usize,
    /// The request reading the letters, waiting for the next.
    reader: Option<Waker>,
    /// The request has ended: nothing more is taken.
    closed: bool,
}

impl Letters {
    /// The count that bounds letters of `letter`'s kind (none for the
    /// backend's requests).
    fn count(&mut self, letter: &Letter) -> Option<&mut usize> {
        match letter {
            Letter::Progress(_) => Some(&mut self.progress),
            Letter::Log(_) => Some(&mut self.logs),
            Letter::Ask(_) => None,
        }
    }

    /// Takes the letter at `at` out of the queue.
    fn remove(&mut self, at: usize) -> Option<Letter> {
        let letter = self.queue.remove(at)?;
        if let Some(count) = self.count(&letter) {
            *count -= 1;
        }
        Some(letter)
    }
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, Letters> {
        self.letters.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Posts a progress update (dropped past the bound, or once the
    /// request has ended).
    pub(crate) fn progress(&self, update: Progress) {
        let _ = self.post(Letter::Progress(update));
    }

    /// Posts a letter; gives it back when the request has ended (dropped
    /// silently past the bound).
    fn post(&self, letter: Letter) -> Result<(), Letter> {
        let mut letters = self.lock();
        if letters.closed {
            return Err(letter);
        }
        if let Some(count) = letters.count(&letter) {
            if *count >= QUEUE {
                return Ok(());
            }
            *count += 1;
        }
        letters.queue.push_back(letter);
        let reader = letters.reader.take();
        drop(letters);
        if let Some(reader) = reader {
            reader.wake();
        }
        Ok(())
    }

    /// The letter that came first, if any.
    pub(crate) fn take(&self) -> Option<Letter> {
        self.lock().remove(0)
    }

    /// The progress update or log message that came first, if any; the
    /// backend's requests stay queued. A request parked for its caller's
    /// answer passes on first what its backend sent beside the request.
    pub(crate) fn take_note(&self) -> Option<Letter> {
        let mut letters = self.lock();
        let at = letters
            .queue
            .iter()
            .position(|l| !matches!(l, Letter::Ask(_)))?;
        letters.remove(at)
    }

    /// Waits for the next letter.
    pub(crate) async fn next(&self) -> Letter {
        std::future::poll_fn(|cx| {
            let mut letters = self.lock();
            match letters.remove(0) {
                Some(letter) => Poll::Ready(letter),
                None => {
                    if !letters
                        .reader
                        .as_ref()
                        .is_some_and(|w| w.will_wake(cx.waker()))
                    {
                        letters.reader = Some(cx.waker().clone());
                    }
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// Takes nothing more, and drops what waits (a backend request
    /// waiting then hears that its caller did not answer).
    fn close(&self) {
        let mut letters = self.lock();
        letters.closed = true;
        let queue = std::mem::take(&mut letters.queue);
        letters.reader = None;
        drop(letters);
        drop(queue);
    }
}

impl Default for Relay {
    fn default() -> Self {
        Self::new()
    }
}

impl Relay {
    /// A relay with nothing in flight, whose parked requests wait
    /// [`PARKED_TTL`] for their callers.
    pub fn new() -> Self {
        Self::with_parked_ttl(PARKED_TTL)
    }

    /// A relay whose parked requests wait `ttl` for their callers (then
    /// they are cancelled at the backend).
    pub fn with_parked_ttl(ttl: Duration) -> Self {
        Relay {
            inner: Arc::new(Inner {
                ttl,
                next: AtomicU64::new(0),
                flights: Mutex::new(HashMap::with_hasher(Ids)),
                parked: Mutex::default(),
            }),
        }
    }

    /// Installs the relay as `builder`'s elicitation (form and URL) and
    /// sampling handlers, which declares those capabilities to the backend,
    /// and as its log handler: a backend's log message goes to the caller
    /// of the one request running (and is dropped when none or several
    /// are). MCP Apps are declared too: the proxy passes a backend's apps on
    /// to the callers that declared them.
    pub fn install(&self, builder: ClientBuilder) -> ClientBuilder {
        let (form, url, sampling, logs) = (self.clone(), self.clone(), self.clone(), self.clone());
        builder
            .apps()
            .on_log(move |message| logs.log(message))
            .on_elicit_form(move |req| {
                let relay = form.clone();
                async move { elicited(relay.ask("elicitation/create", req.params).await?) }
            })
            .on_elicit_url(move |req| {
                let relay = url.clone();
                async move { elicited(relay.ask("elicitation/create", req.params).await?) }
            })
            .on_sampling(move |params| {
                let relay = sampling.clone();
                async move { relay.ask("sampling/createMessage", params).await }
            })
    }

    /// Hands a backend request to the one request in flight and waits for
    /// its caller's answer.
    async fn ask(&self, method: &'static str, params: Value) -> Result<Value, BoxError> {
        let mailbox = {
            let flights = self.inner.lock();
            let running = flights.values().filter(|s| s.running).count();
            let mut candidates = flights.values().filter(|s| s.running || running == 0);
            match (candidates.next(), candidates.next()) {
                (Some(slot), None) => slot.mailbox.clone(),
                (None, _) => {
                    return Err(format!("{method}: no request of the proxy is in flight").into());
                }
                (Some(_), Some(_)) => {
                    return Err(format!(
                        "{method}: {} requests of the proxy are in flight and this revision does not say which one asks",
                        flights.len()
                    )
                    .into());
                }
            }
        };
        let (reply, answer) = oneshot::channel();
        mailbox
            .post(Letter::Ask(Ask {
                method,
                params,
                reply,
            }))
            .map_err(|_| "the request that asked has ended")?;
        answer.await.map_err(|_| "the caller did not answer")?
    }

    /// Hands a backend's log message to the one running request.
    fn log(&self, message: LogMessage) {
        let flights = self.inner.lock();
        let mut running = flights.values().filter(|s| s.running);
        if let (Some(slot), None) = (running.next(), running.next()) {
            let _ = slot.mailbox.post(Letter::Log(message));
        }
    }

    /// Registers a forwarded request: what its backend sends reaches
    /// `mailbox` (where the request's progress is posted too) until the
    /// flight is dropped.
    pub(crate) fn start(&self, task: BackendRequest, mailbox: Arc<Mailbox>) -> Flight {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let slot = Slot {
            mailbox: mailbox.clone(),
            running: true,
        };
        self.inner.lock().insert(id, slot);
        Flight {
            task,
            mailbox: mailbox.clone(),
            waiting: None,
            registration: Registration {
                relay: Arc::downgrade(&self.inner),
                id,
                mailbox,
            },
        }
    }

    /// Parks `flight` until its caller answers; returns the `requestState`
    /// that names it (128 random bits, so that only its caller can resume
    /// it).
    ///
    /// `Err` when the operating system's random source fails: the flight
    /// is dropped then, which cancels its backend request, rather than
    /// parked under a name others could guess.
    pub(crate) fn park(&self, flight: Flight) -> Result<String, RandomUnavailable> {
        let token = format!("{STATE_PREFIX}{}", crate::random::hex(16)?);
        self.running(&flight, false);
        let now = Instant::now();
        let mut parked = self.inner.parked.lock().unwrap_or_else(|e| e.into_inner());
        let ttl = self.inner.ttl;
        parked.retain(|(_, since, _)| now.duration_since(*since) < ttl);
        if parked.len() >= MAX_PARKED {
            parked.remove(0);
        }
        parked.push((token.clone(), now, flight));
        Ok(token)
    }

    /// How many requests wait parked for their callers now (those waiting
    /// past the time allowed are dropped first).
    pub(crate) fn parked_now(&self) -> usize {
        let now = Instant::now();
        let ttl = self.inner.ttl;
        let mut parked = self.inner.parked.lock().unwrap_or_else(|e| e.into_inner());
        parked.retain(|(_, since, _)| now.duration_since(*since) < ttl);
        parked.len()
    }

    /// Drops every parked request (each is cancelled at its backend).
    pub(crate) fn drop_parked(&self) {
        let flights =
            std::mem::take(&mut *self.inner.parked.lock().unwrap_or_else(|e| e.into_inner()));
        drop(flights);
    }

    /// A number for the next input request's key.
    pub(crate) fn round(&self) -> u64 {
        self.inner.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The flight parked under `state`, taken out.
    pub(crate) fn resume(&self, state: &str) -> Option<Flight> {
        let mut parked = self.inner.parked.lock().unwrap_or_else(|e| e.into_inner());
        let i = parked.iter().position(|(t, _, _)| t == state)?;
        let (_, since, flight) = parked.remove(i);
        drop(parked);
        self.running(&flight, true);
        (since.elapsed() < self.inner.ttl).then_some(flight)
    }

    fn running(&self, flight: &Flight, running: bool) {
        if let Some(slot) = self.inner.lock().get_mut(&flight.registration.id) {
            slot.running = running;
        }
    }
}

/// The backend's side of a forwarded request: polled by the caller's
/// request (no task of its own), kept while parked; dropping it cancels the
/// backend's request.
pub(crate) type BackendRequest =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<RawResult, ClientError>> + Send>>;

/// A forwarded request running at the backend (dropped before its end,
/// cancelled or parked too long, it cancels the backend's request).
pub(crate) struct Flight {
    pub(crate) task: BackendRequest,
    /// What the backend sent the request.
    pub(crate) mailbox: Arc<Mailbox>,
    /// The backend request the caller was asked to answer, and its key.
    pub(crate) waiting: Option<(String, oneshot::Sender<Result<Value, BoxError>>)>,
    registration: Registration,
}

/// Removes a flight from its relay and closes its mailbox when it ends.
/// Weak: a parked flight, which the relay holds, does not keep the relay
/// alive.
struct Registration {
    relay: std::sync::Weak<Inner>,
    id: u64,
    mailbox: Arc<Mailbox>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.mailbox.close();
        let Some(inner) = self.relay.upgrade() else {
            return;
        };
        // Dropped outside the lock.
        let slot = inner.lock().remove(&self.id);
        drop(slot);
    }
}

fn elicited(answer: Value) -> Result<ElicitResponse, BoxError> {
    ElicitResponse::from_value(&answer)
        .ok_or_else(|| "the caller's elicitation answer is not an ElicitResult".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set when the backend request it belongs to is dropped (cancelled).
    struct Dropped(Arc<std::sync::atomic::AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// A flight whose backend request never ends, and whether that request
    /// was dropped.
    fn watched(relay: &Relay) -> (Flight, Arc<std::sync::atomic::AtomicBool>) {
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let guard = Dropped(dropped.clone());
        let task: BackendRequest = Box::pin(async move {
            let _guard = guard;
            std::future::pending::<Result<RawResult, ClientError>>().await
        });
        (relay.start(task, Arc::default()), dropped)
    }

    /// A flight whose backend request never ends.
    fn flight(relay: &Relay) -> Flight {
        watched(relay).0
    }

    #[tokio::test]
    async fn past_max_parked_the_oldest_is_dropped_and_its_backend_request_cancelled() {
        let relay = Relay::new();
        let (first, first_cancelled) = watched(&relay);
        let oldest = relay.park(first).unwrap();
        let mut rest = Vec::new();
        for _ in 1..MAX_PARKED {
            rest.push(relay.park(flight(&relay)).unwrap());
        }
        assert!(!first_cancelled.load(Ordering::SeqCst));
        let newest = relay.park(flight(&relay)).unwrap();
        assert!(relay.resume(&oldest).is_none(), "the oldest was dropped");
        assert!(
            first_cancelled.load(Ordering::SeqCst),
            "and its backend request cancelled"
        );
        assert!(relay.resume(&newest).is_some());
        assert!(relay.resume(&rest[0]).is_some());
        assert!(relay.resume("snodo-proxy-parked:unknown").is_none());
    }

    #[tokio::test]
    async fn without_the_random_source_nothing_is_parked_and_the_backend_request_ends() {
        let relay = Relay::new();
        let (one, cancelled) = watched(&relay);
        {
            let _off = crate::random::failing();
            let err = relay.park(one).unwrap_err();
            assert!(err.to_string().contains("random source failed"), "{err}");
        }
        assert!(relay.inner.parked.lock().unwrap().is_empty());
        assert!(relay.inner.lock().is_empty(), "the flight is gone");
        assert!(
            cancelled.load(Ordering::SeqCst),
            "its backend request was cancelled"
        );
        let state = relay.park(flight(&relay)).unwrap();
        assert!(state.starts_with(STATE_PREFIX) && state.len() == STATE_PREFIX.len() + 32);
    }

    #[tokio::test]
    async fn log_messages_past_the_queue_are_dropped() {
        let relay = Relay::new();
        let one = flight(&relay);
        for i in 0..QUEUE + 10 {
            relay.log(LogMessage {
                level: "info".into(),
                logger: None,
                data: Value::from(i),
            });
        }
        let mut got = Vec::new();
        while let Some(letter) = one.mailbox.take() {
            let Letter::Log(m) = letter else {
                panic!("only log messages were sent");
            };
            got.push(m.data);
        }
        assert_eq!(got.len(), QUEUE);
        assert_eq!(got[0], Value::from(0), "the oldest are kept");
    }

    fn progress(n: f64) -> Progress {
        Progress {
            progress: n,
            total: None,
            message: None,
        }
    }

    fn log(n: u64) -> LogMessage {
        LogMessage {
            level: "info".into(),
            logger: None,
            data: Value::from(n),
        }
    }

    fn ask(method: &'static str) -> (Letter, oneshot::Receiver<Result<Value, BoxError>>) {
        let (reply, answer) = oneshot::channel();
        let letter = Letter::Ask(Ask {
            method,
            params: Value::Null,
            reply,
        });
        (letter, answer)
    }

    /// A letter's kind and number, for comparing sequences.
    fn label(letter: Letter) -> String {
        match letter {
            Letter::Progress(p) => format!("p{}", p.progress),
            Letter::Log(m) => format!("l{}", m.data),
            Letter::Ask(a) => a.method.to_owned(),
        }
    }

    #[tokio::test]
    async fn letters_come_out_in_the_order_they_came_each_kind_bounded_apart() {
        let mailbox = Mailbox::default();
        mailbox.post(Letter::Log(log(1))).ok().unwrap();
        mailbox.progress(progress(1.0));
        let (first, _a) = ask("a");
        mailbox.post(first).ok().unwrap();
        mailbox.post(Letter::Log(log(2))).ok().unwrap();
        let (second, _b) = ask("b");
        mailbox.post(second).ok().unwrap();
        mailbox.progress(progress(2.0));
        let order: Vec<String> = std::iter::from_fn(|| mailbox.take()).map(label).collect();
        assert_eq!(order, ["l1", "p1", "a", "l2", "b", "p2"]);

        for i in 0..QUEUE + 5 {
            mailbox.progress(progress(i as f64));
            mailbox.post(Letter::Log(log(i as u64))).ok().unwrap();
        }
        let (late, _c) = ask("c");
        mailbox.post(late).ok().unwrap();
        let all: Vec<String> = std::iter::from_fn(|| mailbox.take()).map(label).collect();
        let count = |prefix: &str| all.iter().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(count("p"), QUEUE, "past the bound the newest are dropped");
        assert_eq!(count("l"), QUEUE, "each kind has its own bound");
        assert_eq!(all[..2], ["p0", "l0"]);
        assert_eq!(
            all.last().map(String::as_str),
            Some("c"),
            "a request is never dropped"
        );
        // Taken out, there is room again.
        mailbox.progress(progress(99.0));
        assert!(matches!(mailbox.take(), Some(Letter::Progress(p)) if p.progress == 99.0));
    }

    #[tokio::test]
    async fn the_notes_beside_a_request_are_taken_before_it_and_the_requests_stay() {
        let mailbox = Mailbox::default();
        let (first, _a) = ask("a");
        mailbox.post(first).ok().unwrap();
        mailbox.progress(progress(1.0));
        let (second, _b) = ask("b");
        mailbox.post(second).ok().unwrap();
        mailbox.post(Letter::Log(log(1))).ok().unwrap();
        let notes: Vec<String> = std::iter::from_fn(|| mailbox.take_note())
            .map(label)
            .collect();
        assert_eq!(notes, ["p1", "l1"]);
        let rest: Vec<String> = std::iter::from_fn(|| mailbox.take()).map(label).collect();
        assert_eq!(rest, ["a", "b"]);
        // The bounds count what was taken.
        for i in 0..QUEUE {
            mailbox.progress(progress(i as f64));
        }
        assert_eq!(std::iter::from_fn(|| mailbox.take()).count(), QUEUE);
    }

    #[tokio::test]
    async fn a_reader_waiting_is_woken_by_the_next_letter() {
        let mailbox = Arc::new(Mailbox::default());
        let reader = tokio::spawn({
            let mailbox = mailbox.clone();
            async move {
                // A wait given up (as a `select!` branch is dropped when
                // another wins), then a new one: the new one is woken.
                let mut first = Box::pin(mailbox.next());
                std::future::poll_fn(|cx| {
                    assert!(first.as_mut().poll(cx).is_pending());
                    Poll::Ready(())
                })
                .await;
                drop(first);
                mailbox.next().await
            }
        });
        while mailbox.lock().reader.is_none() {
            tokio::task::yield_now().await;
        }
        mailbox.post(Letter::Log(log(7))).ok().unwrap();
        let letter = tokio::time::timeout(Duration::from_secs(5), reader)
            .await
            .expect("the reader was woken")
            .unwrap();
        assert!(matches!(letter, Letter::Log(m) if m.data == 7));
    }

    #[tokio::test]
    async fn an_ask_to_a_request_that_ended_fails_and_one_left_waiting_hears_no_answer() {
        let relay = Relay::new();
        let one = flight(&relay);
        let asking = tokio::spawn({
            let relay = relay.clone();
            async move { relay.ask("sampling/createMessage", Value::Null).await }
        });
        // The ask waits in the mailbox; the request ends without reading it.
        while one.mailbox.lock().queue.is_empty() {
            tokio::task::yield_now().await;
        }
        let mailbox = one.mailbox.clone();
        drop(one);
        let err = asking.await.unwrap().unwrap_err();
        assert!(
            err.to_string().contains("the caller did not answer"),
            "{err}"
        );
        assert!(relay.inner.lock().is_empty(), "the flight is gone");
        let (reply, _answer) = oneshot::channel();
        let refused = mailbox.post(Letter::Ask(Ask {
            method: "elicitation/create",
            params: Value::Null,
            reply,
        }));
        assert!(refused.is_err(), "a closed mailbox takes nothing");
        mailbox.progress(progress(1.0));
        assert!(mailbox.take().is_none());
    }

    #[test]
    fn ids_spread_over_the_table() {
        use std::hash::BuildHasher;
        let hashes: std::collections::HashSet<u64> =
            (0..1000u64).map(|i| Ids.hash_one(i)).collect();
        assert_eq!(hashes.len(), 1000);
        // hashbrown picks a group by the low bits and tags entries with the
        // top seven: both vary.
        let tags: std::collections::HashSet<u64> =
            (0..64u64).map(|i| Ids.hash_one(i) >> 57).collect();
        assert!(tags.len() > 16, "{}", tags.len());
    }

    #[tokio::test]
    async fn a_dropped_relay_frees_its_parked_requests_and_cancels_them() {
        let relay = Relay::new();
        let (parked, cancelled) = watched(&relay);
        let _state = relay.park(parked).unwrap();
        let weak = Arc::downgrade(&relay.inner);
        drop(relay);
        assert!(weak.upgrade().is_none(), "no cycle keeps the relay alive");
        assert!(
            cancelled.load(Ordering::SeqCst),
            "the backend request was cancelled"
        );
    }

    #[tokio::test]
    async fn a_parked_request_waits_its_ttl_and_no_longer() {
        let relay = Relay::with_parked_ttl(Duration::from_millis(50));
        let kept = relay.park(flight(&relay)).unwrap();
        assert!(relay.resume(&kept).is_some());
        let late = relay.park(flight(&relay)).unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(relay.resume(&late).is_none());
        assert!(
            PARKED_TTL >= Duration::from_secs(60),
            "a person has time to answer"
        );
    }

    #[tokio::test]
    async fn a_backend_request_goes_to_the_one_running_request_only() {
        let relay = Relay::new();
        let err = relay.ask("roots/list", Value::Null).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("no request of the proxy is in flight"),
            "{err}"
        );
        let one = flight(&relay);
        let asking = tokio::spawn({
            let relay = relay.clone();
            async move {
                relay
                    .ask("sampling/createMessage", serde_json::json!({"x": 1}))
                    .await
            }
        });
        let Letter::Ask(ask) = one.mailbox.next().await else {
            panic!("an ask");
        };
        assert_eq!(ask.method, "sampling/createMessage");
        ask.reply.send(Ok(serde_json::json!({"ok": true}))).unwrap();
        assert_eq!(
            asking.await.unwrap().unwrap(),
            serde_json::json!({"ok": true})
        );
        let two = flight(&relay);
        let err = relay
            .ask("sampling/createMessage", Value::Null)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("2 requests of the proxy are in flight"),
            "{err}"
        );
        // A parked request does not count while another runs.
        let _parked = relay.park(one).unwrap();
        let asking = tokio::spawn({
            let relay = relay.clone();
            async move { relay.ask("elicitation/create", Value::Null).await }
        });
        let Letter::Ask(ask) = two.mailbox.next().await else {
            panic!("an ask");
        };
        assert_eq!(ask.method, "elicitation/create");
        ask.reply.send(Err("declined".into())).unwrap();
        assert!(asking.await.unwrap().is_err());
    }
}
