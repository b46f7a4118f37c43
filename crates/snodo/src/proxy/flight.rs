//! One forwarded request: where it goes (the backend's client, or the
//! caller's own server), the backend's limits it passes, its run at the
//! backend, and what the backend sends meanwhile (progress, log messages,
//! its own requests), passed on to the caller; counted and audited at its
//! end.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::audit::Entry;
use super::callers::{Callers, Child};
use super::convert;
use super::guard::{self, Guard};
use super::naming::Naming;
use super::relay::{self, Letter, Mailbox, Relay};
use super::stats::Stats;
use crate::client::answer::{FromResult, RawResult};
use crate::client::{Client, ClientError, RequestOptions};
use crate::error::HandlerError;
use crate::mrtr::InputRequired;
use crate::protocol::LogLevel;
use crate::{Context, Error};

/// The header that carries the caller's subject to a backend.
pub(crate) const SUBJECT_HEADER: &str = "x-snodo-subject";
/// The header that carries the caller's scopes to a backend.
pub(crate) const SCOPES_HEADER: &str = "x-snodo-scopes";

/// What every forwarding component of one backend shares.
pub(crate) struct Link {
    /// The backend's id (named in errors).
    pub(crate) id: String,
    pub(crate) client: Client,
    pub(crate) naming: Naming,
    /// Whether the backend offers completions.
    pub(crate) completes: bool,
    /// Where the backend's own requests are routed.
    pub(crate) relay: Relay,
    /// Its limits, replaced when they change.
    pub(crate) guard: std::sync::RwLock<Arc<Guard>>,
    /// The proxy's counters.
    pub(crate) stats: Arc<Stats>,
    /// The servers started for each caller, when it is such a backend.
    pub(crate) callers: std::sync::RwLock<Option<Arc<Callers>>>,
    /// Told when `callers` is replaced.
    pub(crate) callers_set: tokio::sync::Notify,
}

impl Link {
    /// The backend's limits now.
    pub(crate) fn guard(&self) -> Arc<Guard> {
        self.guard.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The servers started for each caller, when it is such a backend.
    pub(crate) fn callers(&self) -> Option<Arc<Callers>> {
        self.callers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replaces the servers started for each caller.
    pub(crate) fn set_callers(&self, callers: Option<Arc<Callers>>) {
        *self.callers.write().unwrap_or_else(|e| e.into_inner()) = callers;
        self.callers_set.notify_one();
    }

    /// Where the request of `cx` goes, its caller's own server started
    /// when it is not running.
    async fn via(&self, cx: &Context) -> Result<Via<'_>, HandlerError> {
        match self.callers() {
            None => Ok(Via::Backend(self)),
            Some(callers) => {
                let child = callers.child(&self.id, cx).await?;
                Ok(Via::Caller(callers, child))
            }
        }
    }

    /// Where the request of `cx` goes, when that is running (the caller's
    /// own server is not started).
    fn via_running(&self, cx: &Context) -> Option<Via<'_>> {
        match self.callers() {
            None => Some(Via::Backend(self)),
            Some(callers) => {
                let child = callers.running_child(cx)?;
                Some(Via::Caller(callers, child))
            }
        }
    }

    /// Refuses a request that has no caller to start a server for.
    fn check_caller(&self, cx: &Context) -> Result<(), HandlerError> {
        match self.callers() {
            Some(callers) => callers.caller_of(&self.id, cx).map(|_| ()),
            None => Ok(()),
        }
    }
}

/// Where one request goes: the backend's client, or the caller's own
/// server.
enum Via<'a> {
    Backend(&'a Link),
    Caller(Arc<Callers>, Arc<Child>),
}

impl Via<'_> {
    fn parts(&self) -> (&Client, &Relay) {
        match self {
            Via::Backend(link) => (&link.client, &link.relay),
            Via::Caller(_, child) => {
                let (client, relay) = child.parts().expect("a caller's server is started first");
                (client, relay)
            }
        }
    }

    /// Forgets a caller's server whose connection failed (the next
    /// request starts another).
    fn failed(&self, e: &ClientError) {
        if let Via::Caller(callers, child) = self
            && !e.is_rpc()
            && !e.is_timeout()
        {
            callers.forget(child);
        }
    }
}

/// The options of a forwarded request: input requests come back to the
/// proxy (the backend's `input_required` goes to the caller), the caller's
/// answers of an earlier round go on, progress is posted to `mailbox`, and
/// the caller's identity goes along when `identity` says so.
fn options(cx: &Context, mailbox: Arc<Mailbox>, identity: bool) -> RequestOptions {
    let mut opts = RequestOptions::new().answer_input(false);
    if identity && let Some(principal) = cx.principal() {
        let scopes = principal.scopes.join(" ");
        for (name, value) in [
            (SUBJECT_HEADER, principal.subject.as_str()),
            (SCOPES_HEADER, scopes.as_str()),
        ] {
            if let Ok(value) = http::HeaderValue::from_str(value) {
                opts = opts.header(http::HeaderName::from_static(name), value);
            }
        }
    }
    let state = cx.request_state().map(str::to_owned);
    if let Some(responses) = cx.input_responses() {
        opts = opts.input_responses(responses.clone(), state);
    } else if state.is_some() {
        opts = opts.input_responses(Map::new(), state);
    }
    // The caller's log level (2026-07-28 `_meta`) goes to the backend.
    let level = cx
        .meta()
        .get(crate::protocol::keys::LOG_LEVEL)
        .and_then(Value::as_str);
    if let Some(level) = level.and_then(LogLevel::parse) {
        opts = opts.log_level(level);
    }
    // Past the queue's bound an update is dropped: a later one says more.
    opts.on_progress(move |p| mailbox.progress(p))
}

/// How a flight to the backend ended.
enum Ended {
    /// Its answer.
    Answer(RawResult),
    /// The caller must give input first.
    Input(InputRequired),
    /// It failed.
    Failed(ClientError),
}

/// Runs the request `make` builds at the backend, or resumes the one the
/// caller's `requestState` names, and waits for its answer: the result, or
/// the input the caller must give (a request the backend sent its client
/// while it ran, the request then parked until the caller answers). The
/// backend's progress goes to the caller meanwhile; the caller's
/// cancellation cancels the backend's request. A new request passes the
/// backend's limits first, and one that may be repeated (`repeatable`) is
/// tried again as they allow.
pub(super) async fn run<F>(
    link: &Link,
    cx: &Context,
    call: Call<'_>,
    repeatable: bool,
    make: impl FnMut(&Client, RequestOptions) -> F,
) -> Result<Result<RawResult, InputRequired>, HandlerError>
where
    F: Future<Output = Result<RawResult, ClientError>> + Send + 'static,
{
    // Counted and audited even when the request is dropped before its end
    // (the server's timeout, or the caller gone): then as `cancelled`.
    let mut record = Record {
        link,
        cx,
        call,
        since: std::time::Instant::now(),
        done: false,
    };
    let out = attempt(link, cx, record.call.identity, repeatable, make).await;
    record.end(Some(&out));
    out
}

/// Counts and audits one forwarded request when it ends or is dropped.
struct Record<'a> {
    link: &'a Link,
    cx: &'a Context,
    call: Call<'a>,
    since: std::time::Instant,
    done: bool,
}

impl Record<'_> {
    /// Records the request's end (`None`: dropped unanswered).
    fn end(&mut self, out: Option<&Result<Result<RawResult, InputRequired>, HandlerError>>) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let (link, call) = (self.link, &self.call);
        let took = self.since.elapsed();
        let failed = !matches!(out, Some(Ok(_)));
        link.stats.request(&link.id, call.method, took, failed);
        let Some(audit) = link.stats.audit() else {
            return;
        };
        let code = out
            .and_then(|o| o.as_ref().err())
            .and_then(HandlerError::as_protocol)
            .map(Error::code);
        let outcome = match out {
            None => "cancelled",
            Some(Ok(Ok(answer))) if answer.is_error() => "tool_error",
            Some(Ok(Ok(_))) => "ok",
            Some(Ok(Err(_))) => "input_required",
            Some(Err(_))
                if matches!(
                    code,
                    Some(
                        crate::error::code::RATE_LIMITED | crate::error::code::BACKEND_UNAVAILABLE
                    )
                ) =>
            {
                "refused"
            }
            Some(Err(_)) => "error",
        };
        audit.record(Entry {
            principal: self.cx.principal().map(|p| p.subject.as_str()),
            method: call.method,
            name: call.name,
            backend: &link.id,
            outcome,
            code,
            took,
            arguments: call.arguments.filter(|_| audit.wants_arguments()),
        });
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        self.end(None);
    }
}

/// What a forwarded request is, for the counters and the audit log, and
/// whether the caller's identity goes with it.
pub(super) struct Call<'a> {
    pub(super) method: &'static str,
    pub(super) identity: bool,
    /// The tool or prompt name, or the URI, as served.
    pub(super) name: &'a str,
    /// The caller's arguments.
    pub(super) arguments: Option<&'a Value>,
}

/// [`run`]'s work, uncounted.
async fn attempt<F>(
    link: &Link,
    cx: &Context,
    identity: bool,
    repeatable: bool,
    mut make: impl FnMut(&Client, RequestOptions) -> F,
) -> Result<Result<RawResult, InputRequired>, HandlerError>
where
    F: Future<Output = Result<RawResult, ClientError>> + Send + 'static,
{
    let parked = cx
        .request_state()
        .filter(|s| s.starts_with(relay::STATE_PREFIX));
    if let Some(state) = parked {
        let gone = || {
            Error::invalid_params(
                "the requestState names no request waiting for input (it ended, or waited too long)",
            )
        };
        // Resumed where it was parked: a caller's own server that is gone
        // is not started again for it.
        let via = link.via_running(cx).ok_or_else(gone)?;
        let relay = via.parts().1;
        let mut flight = relay.resume(state).ok_or_else(gone)?;
        if let Some((key, reply)) = flight.waiting.take() {
            let Some(answer) = cx.input_response(&key) else {
                return Err(HandlerError::protocol(Error::invalid_params(format!(
                    "inputResponses has no answer {key:?}"
                ))));
            };
            let _ = reply.send(Ok(answer.clone()));
        }
        return finish(link, &via, follow(link, relay, cx, flight).await?);
    }
    // A caller's own server is started once the request has passed the
    // backend's limits; a request that has no caller is refused first.
    link.check_caller(cx)?;
    let guard = link.guard();
    if guard.is_open_door() {
        let via = link.via(cx).await?;
        let (client, relay) = via.parts();
        let flight = start(client, relay, cx, identity, &mut make);
        return finish(link, &via, follow(link, relay, cx, flight).await?);
    }
    let attempts = if repeatable { guard.attempts() } else { 1 };
    guard.earn();
    let mut attempt = 1;
    loop {
        let pass = match guard.admit(&link.id, cx).await {
            Ok(pass) => pass,
            Err(refused) => {
                if let Some(why) = refused.why {
                    link.stats.refused(&link.id, why);
                }
                return Err(refused.error);
            }
        };
        let via = match link.via(cx).await {
            Ok(via) => via,
            Err(e) => {
                // A caller's server that cannot start is a failure of the
                // backend.
                guard.record(pass, true);
                return Err(e);
            }
        };
        let (client, relay) = via.parts();
        let flight = start(client, relay, cx, identity, &mut make);
        let ended = follow(link, relay, cx, flight).await?;
        match ended {
            Ended::Failed(e) if guard::counts(&e) => {
                guard.record(pass, true);
                if attempt < attempts && guard.spend() {
                    tracing::debug!(target: "snodo::proxy", backend = %link.id, error = %e, attempt, "trying the call again");
                    via.failed(&e);
                    attempt += 1;
                    continue;
                }
                return finish(link, &via, Ended::Failed(e));
            }
            ended => {
                guard.record(pass, false);
                return finish(link, &via, ended);
            }
        }
    }
}

/// Starts the request `make` builds at the backend (through `client`).
fn start<F>(
    client: &Client,
    relay: &Relay,
    cx: &Context,
    identity: bool,
    make: &mut impl FnMut(&Client, RequestOptions) -> F,
) -> relay::Flight
where
    F: Future<Output = Result<RawResult, ClientError>> + Send + 'static,
{
    let mailbox = Arc::new(Mailbox::default());
    // Polled by the caller's request, under its span: the backend request's
    // client span (and the trace context sent to the backend) continue the
    // caller's trace, and no task is spawned per call.
    let task: relay::BackendRequest =
        Box::pin(make(client, options(cx, mailbox.clone(), identity)));
    relay.start(task, mailbox)
}

/// What an ended flight answers the caller.
fn finish(
    link: &Link,
    via: &Via<'_>,
    ended: Ended,
) -> Result<Result<RawResult, InputRequired>, HandlerError> {
    if let Ended::Failed(e) = &ended {
        via.failed(e);
    }
    match ended {
        Ended::Answer(answer) if answer.is_input_required() => {
            Ok(Err(convert::input_required(&answer.into_value())?))
        }
        Ended::Answer(answer) => Ok(Ok(answer)),
        Ended::Input(input) => Ok(Err(input)),
        Ended::Failed(e) => Err(convert::error(&link.id, e)),
    }
}

/// Follows a flight to its end, carrying progress, log messages and input
/// requests to the caller.
async fn follow(
    link: &Link,
    relay: &Relay,
    cx: &Context,
    mut flight: relay::Flight,
) -> Result<Ended, HandlerError> {
    loop {
        tokio::select! {
            // What the backend sent first: progress and log messages sent
            // before its answer reach the caller before the answer.
            biased;
            letter = flight.mailbox.next() => {
                let Some(ask) = pass_note(cx, letter).await else {
                    continue;
                };
                // What the backend sent beside its request reaches the
                // caller before the request waits parked.
                while let Some(note) = flight.mailbox.take_note() {
                    pass_note(cx, note).await;
                }
                let key = format!("{}-{}", ask.method.replace('/', "-"), relay.round());
                let input = InputRequired::new().request(key.clone(), ask.method, ask.params);
                flight.waiting = Some((key, ask.reply));
                let state = relay.park(flight).map_err(|e| {
                    Error::internal(format!(
                        "backend {:?} asked for input, and the request cannot wait for it: {e}",
                        link.id
                    ))
                })?;
                return Ok(Ended::Input(input.state(state)));
            }
            out = &mut flight.task => {
                // What the backend sent before its answer, in the same
                // poll, reaches the caller first (a request of the
                // backend's left unanswered hears that the caller did not
                // answer).
                while let Some(letter) = flight.mailbox.take() {
                    drop(pass_note(cx, letter).await);
                }
                return Ok(match out {
                    Ok(value) => Ended::Answer(value),
                    Err(e) => Ended::Failed(e),
                });
            }
            () = cx.cancellation().cancelled() => {
                return Err(HandlerError::protocol(Error::internal("the request was cancelled")));
            }
        }
    }
}

/// Passes a backend's progress update (to a caller that asked for
/// progress) or log message (at the caller's level) on to the caller; a
/// request of the backend's is given back, for the caller to answer.
async fn pass_note(cx: &Context, letter: Letter) -> Option<relay::Ask> {
    match letter {
        Letter::Progress(p) => {
            if cx.wants_progress() {
                let _ = cx.progress(p.progress, p.total, p.message.as_deref()).await;
            }
        }
        Letter::Log(m) => {
            if let Some(level) = LogLevel::parse(&m.level) {
                cx.log_as(level, m.logger.as_deref(), m.data).await;
            }
        }
        Letter::Ask(ask) => return Some(ask),
    }
    None
}
