//! The initialize-era side of the endpoint: the 2025 Streamable HTTP
//! transport with sessions.
//!
//! Which side a POST takes is the connection rule (`server::connection`),
//! each POST a connection of its own; what HTTP adds:
//!
//! - an `Mcp-Session-Id` names an initialize-era session: 404 when the id
//!   is unknown, expired, ended or another principal's, 400 when
//!   `MCP-Protocol-Version` names a revision the session cannot speak;
//! - `initialize` opens a session (503 when the store is full, or when the
//!   operating system's random source gives no session id) and the
//!   response carries its `Mcp-Session-Id`;
//! - any other request without a session id and without a 2026-07-28 claim
//!   (in `_meta` or in `MCP-Protocol-Version`) gets 400.
//!
//! `GET` opens the session's standalone SSE stream (list changes and
//! resource updates; one per session, 409 for a second) or, with
//! `Last-Event-ID`, resumes a request's stream from the bounded replay log.
//! `DELETE` ends the session. A request that streams (progress, log
//! messages, requests to the client) runs on a task of its own, so that a
//! broken connection neither cancels it nor loses its response: every event
//! has an id, and 2025-11-25 streams open with a priming event.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use hyper::body::{Body, Frame};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use super::body::McpBody;
use super::response::{Challenger, json, reject, status};
use super::session::SessionStore;
use super::shared::Shared;
use super::sse::{COMMENT, KEEP_ALIVE, event_with_id};
use crate::protocol::{Revision, headers};
use crate::server::Event;
use crate::server::connection::{Carried, Connection, Framing, Speaks};
use crate::server::legacy::{
    MAX_REPLAY_EVENTS, ReplayBudget, Session, new_session_id, notification_for, resync_for,
};
use crate::server::{Dispatched, Reply, ResponseStream};
use crate::wire::{self, Message, RequestId};
use crate::{CancelSignal, Error, Principal, Server, TransportInfo};

/// The session header.
pub(crate) const SESSION_ID: &str = crate::protocol::legacy::SESSION_ID_HEADER;

/// How often a GET stream of a shared session reads the session's record
/// (which renews its idle expiry, and ends the stream when the session
/// ended elsewhere and the news was missed).
const SHARED_RENEWAL: Duration = Duration::from_secs(60);

/// The longest `Last-Event-ID` a session's streams could have issued
/// (`<stream>-<seq>`, two 20-digit numbers) and then some.
const MAX_LAST_EVENT_ID: usize = 64;

/// Frames queued for one SSE connection.
const STREAM_QUEUE: usize = 64;

/// Where a POST goes.
pub(super) enum Side {
    /// 2026-07-28.
    Modern,
    /// An existing session.
    Session(Arc<Session>),
    /// `initialize`: open a session.
    Initialize,
    /// Refused before dispatch.
    Refused(Response<McpBody>),
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Why a request names no usable session: the status and the message.
type Refusal = (StatusCode, &'static str);

/// The owner the session `id` must have to serve `principal`: the
/// principal's key, or where several nodes share sessions, its keyed
/// digest.
fn owner_for(shared: Option<&Shared>, id: &str, principal: Option<&Principal>) -> Option<String> {
    match shared {
        Some(shared) => shared.owner_of(id, principal),
        None => principal.map(Principal::key),
    }
}

/// Finds the session a request names: 400 without an id, 404 for an id that
/// names no live session of this principal.
fn find_session(
    store: &dyn SessionStore,
    shared: Option<&Shared>,
    headers: &HeaderMap,
    principal: Option<&Principal>,
) -> Result<Arc<Session>, Refusal> {
    let Some(id) = header(headers, SESSION_ID) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    };
    let owner = owner_for(shared, id, principal);
    let session = store
        .get(id)
        .filter(|s| s.owner() == owner.as_deref())
        .ok_or((StatusCode::NOT_FOUND, "Session not found"))?;
    if let Some(version) = header(headers, headers::PROTOCOL_VERSION)
        && Revision::parse(version).is_none_or(|r| !r.is_legacy())
    {
        return Err((
            StatusCode::BAD_REQUEST,
            "Bad Request: unsupported MCP-Protocol-Version for this session",
        ));
    }
    Ok(session)
}

/// Where a decoded POST goes, by the connection rule (see
/// `server::connection`): each POST is a connection of its own.
pub(super) fn speaks(server: &Server, headers: &HeaderMap, message: &Message) -> Speaks {
    Connection::new(Framing::Http).route(server, message, || Carried {
        names_session: headers.contains_key(SESSION_ID),
        version_header: header(headers, headers::PROTOCOL_VERSION),
    })
}

/// The side a POST takes: the session a request names is looked up here
/// (see the module docs).
pub(super) fn side(
    speaks: Speaks,
    store: &dyn SessionStore,
    shared: Option<&Shared>,
    headers: &HeaderMap,
    principal: Option<&Principal>,
) -> Side {
    match speaks {
        Speaks::Modern => Side::Modern,
        Speaks::Session(session) => Side::Session(session),
        Speaks::Named => match find_session(store, shared, headers, principal) {
            Ok(session) => Side::Session(session),
            Err((code, message)) => Side::Refused(reject(code, message)),
        },
        Speaks::Initialize => Side::Initialize,
        Speaks::Ping | Speaks::NotInitialized => Side::Refused(reject(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required (send initialize first)",
        )),
    }
}

/// Opens a session for an `initialize` request, counted against `share`.
pub(super) fn initialize(
    server: &Server,
    store: &dyn SessionStore,
    shared: Option<&Shared>,
    message: Message,
    transport: &TransportInfo,
) -> Response<McpBody> {
    let principal = transport.principal.as_ref();
    let Message::Request(request) = message else {
        return status(StatusCode::ACCEPTED);
    };
    // Named and owned only once the handshake is admitted.
    let open = || {
        let id = new_session_id().map_err(|e| {
            // No unguessable id, no session: the handshake is refused.
            let error = Error::internal(format!("Service unavailable: {e}"));
            Dispatched::Reply(Reply::error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(&request.id),
                &error,
            ))
        })?;
        let owner = match shared {
            Some(shared) => shared.owner_for_new(&id, principal),
            None => principal.map(Principal::key),
        };
        Ok((id, owner))
    };
    let done = match server.initialize(&request, transport, open) {
        Ok(done) => done,
        Err(Dispatched::Forbidden(refused)) => return Challenger::of(transport).forbidden(refused),
        Err(Dispatched::Reply(reply)) => return json(reply.status, reply.body),
        Err(_) => unreachable!("initialize answers with a reply"),
    };
    done.session.set_share(transport.share().as_str());
    if let Err(full) = store.insert(done.session.clone()) {
        done.session.end();
        crate::telemetry::refusals::note("sessions", &full);
        let error = Error::internal(format!("Service unavailable: {full}"));
        let mut response = json(
            StatusCode::SERVICE_UNAVAILABLE,
            wire::encode_error(Some(&request.id), &error).into(),
        );
        response
            .headers_mut()
            .insert(http::header::RETRY_AFTER, retry_after(full.retry_after));
        return response;
    }
    let mut response = json(done.reply.status, done.reply.body);
    if let Ok(value) = HeaderValue::from_str(done.session.id()) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(SESSION_ID), value);
    }
    response
}

/// A `Retry-After` of whole seconds, rounded up.
pub(super) fn retry_after(after: Duration) -> HeaderValue {
    let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
    HeaderValue::from(secs.max(1))
}

/// Runs one message of a session.
pub(super) async fn post(
    server: &Server,
    session: Arc<Session>,
    message: Message,
    transport: TransportInfo,
    timeout: Duration,
    budget: &Arc<ReplayBudget>,
) -> Response<McpBody> {
    let id = message.request_id().cloned();
    let at = Instant::now() + timeout;
    let cancel = CancelSignal::new();
    let challenger = Challenger::of(&transport);
    let handled = server.handle_legacy(message, &session, transport, cancel.clone());
    match tokio::time::timeout_at(at, handled).await {
        Ok(Dispatched::Nothing) => status(StatusCode::ACCEPTED),
        Ok(Dispatched::Forbidden(refused)) => challenger.forbidden(refused),
        Ok(Dispatched::Reply(reply)) => json(reply.status, reply.body),
        Ok(Dispatched::Stream(stream)) => {
            let prime = session.revision().has_sse_polling();
            let timing = Timing {
                deadline: at,
                input: server.input_timeout(),
                request: timeout,
            };
            sse(pump_request(session, stream, timing, id, prime, budget))
        }
        Err(_) => {
            cancel.cancel();
            json(
                StatusCode::OK,
                wire::encode_error(id.as_ref(), &Error::internal("Request timed out")).into(),
            )
        }
    }
}

/// How long a streamed request may run.
struct Timing {
    /// When it times out, unless it waits for the client.
    deadline: Instant,
    /// How long the server waits for a client's answer (each request it
    /// sends moves the deadline that far, plus `request`, ahead).
    input: Duration,
    /// The request timeout.
    request: Duration,
}

/// How long a connection may leave a frame unread before it is detached
/// from its stream (the frame stays in the log for a resume).
const STALL: Duration = Duration::from_secs(10);

/// Whether a frame is a request to the client (it has both `method` and `id`).
fn is_server_request(frame: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<serde::de::IgnoredAny>,
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Probe>(frame).is_ok_and(|p| p.method.is_some() && p.id.is_some())
}

/// Drives a request's stream on its own task: each frame is logged for
/// resumption, then sent to whichever connection follows the stream. A
/// broken or stalled connection does not stop the request; only
/// `notifications/cancelled`, the end of the session or the timeout do (the
/// timeout is pushed back while the request waits for the client's input).
fn pump_request(
    session: Arc<Session>,
    mut stream: ResponseStream,
    timing: Timing,
    id: Option<RequestId>,
    prime: bool,
    budget: &Arc<ReplayBudget>,
) -> mpsc::Receiver<(String, Bytes)> {
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let number = {
        let mut log = lock(&session);
        log.charge(budget);
        log.open(tx.clone())
    };
    if prime {
        let _ = tx.try_send((format!("{number}-0"), Bytes::new()));
    }
    drop(tx);
    tokio::spawn(async move {
        let mut deadline = timing.deadline;
        loop {
            let (frame, timed_out) = tokio::select! {
                frame = stream.next() => match frame {
                    Some(frame) => (frame, false),
                    None => break,
                },
                _ = tokio::time::sleep_until(deadline) => {
                    stream.cancel_signal().cancel();
                    let error = Error::internal("Request timed out");
                    (Bytes::from(wire::encode_error(id.as_ref(), &error)), true)
                }
            };
            if !timed_out && is_server_request(&frame) {
                deadline = deadline.max(Instant::now() + timing.input + timing.request);
            }
            let (event_id, follower) = lock(&session).push(number, frame.clone());
            if let Some(follower) = follower {
                let sent = tokio::time::timeout(STALL, follower.send((event_id, frame))).await;
                if !matches!(sent, Ok(Ok(()))) {
                    lock(&session).detach(number);
                }
            }
            if timed_out {
                break;
            }
        }
        lock(&session).finish(number);
    });
    rx
}

fn lock(session: &Session) -> std::sync::MutexGuard<'_, crate::server::legacy::ReplayLog> {
    session.replay.lock().unwrap_or_else(|e| e.into_inner())
}

/// `GET` or `DELETE` on the session the request names.
pub(super) fn session_verb(
    server: &Server,
    store: &dyn SessionStore,
    shared: Option<&Arc<Shared>>,
    headers: &HeaderMap,
    principal: Option<&Principal>,
    delete: bool,
) -> Response<McpBody> {
    match find_session(store, shared.map(|s| &**s), headers, principal) {
        Err((code, message)) => reject(code, message),
        Ok(session) if delete => {
            store.remove(session.id());
            session.end();
            status(StatusCode::OK)
        }
        Ok(session) => get(
            server,
            session,
            shared.cloned(),
            headers,
            principal.cloned(),
        ),
    }
}

/// `GET`: the standalone stream, or a resumed request stream.
fn get(
    server: &Server,
    session: Arc<Session>,
    shared: Option<Arc<Shared>>,
    headers: &HeaderMap,
    principal: Option<Principal>,
) -> Response<McpBody> {
    session.touch();
    if let Some(value) = headers.get("last-event-id") {
        let last = match std::str::from_utf8(value.as_bytes()) {
            Ok(last)
                if !last.is_empty()
                    && last.len() <= MAX_LAST_EVENT_ID
                    && last.bytes().all(|b| (0x21..=0x7e).contains(&b)) =>
            {
                last
            }
            _ => {
                return reject(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: Last-Event-ID must be 1 to 64 visible ASCII characters",
                );
            }
        };
        let (tx, rx) = mpsc::channel(MAX_REPLAY_EVENTS + STREAM_QUEUE);
        if !lock(&session).resume(last, tx) {
            return reject(
                StatusCode::BAD_REQUEST,
                "Bad Request: Last-Event-ID names no stream this session can resume",
            );
        }
        return sse(rx);
    }
    let (outbox_tx, mut outbox) = mpsc::channel(crate::server::legacy::OUTBOX_QUEUE);
    if !session.attach_outbox(outbox_tx) {
        return reject(
            StatusCode::CONFLICT,
            "Conflict: the session already has a standalone stream",
        );
    }
    let (tx, rx) = mpsc::channel(STREAM_QUEUE);
    let mut events = server.events().receiver();
    let server = server.clone();
    tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        let hears = |uri: &str| server.hears_of(principal.as_ref(), uri);
        let mut renew = tokio::time::interval(SHARED_RENEWAL);
        renew.tick().await;
        loop {
            let frames = tokio::select! {
                _ = renew.tick(), if shared.is_some() => {
                    match &shared {
                        Some(shared) if !shared.alive(session.id()).await => break,
                        _ => continue,
                    }
                }
                frame = outbox.recv() => match frame {
                    Some(frame) => vec![frame],
                    None => break,
                },
                event = events.recv() => match event {
                    Ok(Event::Resync) | Err(RecvError::Lagged(_)) => {
                        resync_for(&session, &server.capabilities(), &hears)
                    }
                    Ok(event) => match notification_for(&event, &session, &server.capabilities(), &hears) {
                        Some(frame) => vec![frame],
                        None => continue,
                    },
                    Err(RecvError::Closed) => break,
                },
                _ = tx.closed() => break,
            };
            for frame in frames {
                if tx.send((String::new(), Bytes::from(frame))).await.is_err() {
                    return;
                }
            }
        }
    });
    sse(rx)
}

/// An SSE response fed by a channel of `(event id, frame)`; an empty frame
/// is the priming event.
fn sse(rx: mpsc::Receiver<(String, Bytes)>) -> Response<McpBody> {
    let body = ChannelSse {
        rx,
        timer: Box::pin(tokio::time::sleep(KEEP_ALIVE)),
    };
    let mut response = Response::new(McpBody::new(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

struct ChannelSse {
    rx: mpsc::Receiver<(String, Bytes)>,
    timer: Pin<Box<Sleep>>,
}

impl Body for ChannelSse {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some((id, frame))) => {
                this.timer.as_mut().reset(Instant::now() + KEEP_ALIVE);
                return Poll::Ready(Some(Ok(Frame::data(event_with_id(&id, &frame)))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        if this.timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        this.timer.as_mut().reset(Instant::now() + KEEP_ALIVE);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(COMMENT)))))
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;
    use http::Request;
    use http_body_util::{BodyExt, Full};
    use serde_json::{Value, json};
    use tower_service::Service as _;

    use super::super::{HttpOptions, MemorySessions, SessionStore};
    use crate::mrtr::InputRequired;
    use crate::tool::from_fn;
    use crate::{Context, Server, ToolResult};

    const V: &str = "2025-11-25";

    /// A server with a tool that asks the client for a name (and waits
    /// 200 ms for the answer).
    fn server() -> Server {
        Server::builder("random", "1.0.0")
            .input_timeout(Duration::from_millis(200))
            .tool(from_fn("ask", |_, cx: Context| async move {
                Ok(match cx.elicitation("name") {
                    Some(_) => ToolResult::text("answered"),
                    None => ToolResult::input_required(InputRequired::new().elicit_form(
                        "name",
                        "Your name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                    )),
                })
            }))
            .build()
            .unwrap()
    }

    /// POSTs `body` (in session `sid`, if any): the status, the session id
    /// the answer names, and the whole body as text.
    async fn post(
        service: &mut crate::transport::http::McpService,
        sid: Option<&str>,
        body: &Value,
    ) -> (StatusCode, Option<String>, String) {
        let mut request = Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V);
        if let Some(sid) = sid {
            request = request.header("mcp-session-id", sid);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        let Ok::<_, Infallible>(response) = service.call(request).await;
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        let sid = parts
            .headers
            .get(SESSION_ID)
            .map(|v| v.to_str().unwrap().to_string());
        (
            parts.status,
            sid,
            String::from_utf8(bytes.to_vec()).unwrap(),
        )
    }

    fn initialize() -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V, "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "c", "version": "1"}}})
    }

    #[tokio::test]
    async fn no_session_is_opened_without_a_random_id() {
        let sessions = Arc::new(MemorySessions::default());
        let mut service = server().http_service_with(HttpOptions::new().sessions(sessions.clone()));
        let (status, sid, body) = {
            let _off = crate::random::failing();
            post(&mut service, None, &initialize()).await
        };
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(sid, None);
        let reply: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(reply["id"], 0);
        assert_eq!(reply["error"]["code"], -32603);
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("random source failed"), "{message}");
        assert!(sessions.is_empty(), "no session in the table");
        let (status, sid, _) = post(&mut service, None, &initialize()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(sessions.get(&sid.unwrap()).is_some());
    }

    #[tokio::test]
    async fn no_request_goes_to_the_client_without_a_random_id() {
        let mut service = server().http_service();
        let (_, sid, _) = post(&mut service, None, &initialize()).await;
        let sid = sid.unwrap();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, _) = post(&mut service, Some(&sid), &initialized).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        let call =
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask"}});
        let (_, _, body) = {
            let _off = crate::random::failing();
            post(&mut service, Some(&sid), &call).await
        };
        assert!(
            !body.contains("elicitation/create"),
            "nothing was sent: {body}"
        );
        let reply: Value = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .chain(serde_json::from_str(&body).ok())
            .find(|v: &Value| v["id"] == 7)
            .unwrap_or_else(|| panic!("no answer to the call in {body}"));
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("random source failed"), "{message}");
        // With the random source, the same call asks the client.
        let (_, _, body) = post(&mut service, Some(&sid), &call).await;
        assert!(body.contains("elicitation/create"), "{body}");
    }
}
