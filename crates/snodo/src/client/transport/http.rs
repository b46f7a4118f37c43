//! Streamable HTTP: one POST per message, answered with JSON or server-sent
//! events; a keep-alive connection pool (HTTP/1.1, HTTP/2 over TLS); TLS
//! through rustls with the Mozilla roots.
//!
//! On the initialize-era wire the transport also keeps the `Mcp-Session-Id`,
//! resumes a broken response stream with `Last-Event-ID` after the server's
//! `retry` delay, opens the standalone GET stream on demand, POSTs
//! `notifications/cancelled`, and `DELETE`s the session on close.

use crate::client::error::Repr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as HyperBody;
use serde_json::Value;
use tokio::sync::mpsc;

use super::sse::Parser;
use super::{Exchange, Incoming, Outgoing, Transport, TransportKind};
use crate::client::ClientError;
use crate::client::oauth::{MAX_AUTHORIZATIONS, OAuth};
use crate::client::options::BoxFuture;
use crate::net::{Pool, new_pool};
use crate::protocol::auth::{challenge, dpop};
use crate::wire::{self, RequestId};

/// Most times a broken initialize-era response stream is resumed.
const MAX_RESUMES: u32 = 5;
/// The resume delay when the server sent no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
const SESSION_HEADER: &str = crate::protocol::legacy::SESSION_ID_HEADER;
const VERSION_HEADER: &str = crate::protocol::headers::PROTOCOL_VERSION;

/// The HTTP transport.
pub(crate) struct HttpTransport {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    uri: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    legacy: AtomicBool,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
    unsolicited: mpsc::Sender<Incoming>,
    max_bytes: usize,
    event_stream: AtomicBool,
    closed: AtomicBool,
    /// The endpoint as the caller wrote it (OAuth compares it verbatim).
    url: String,
    oauth: Option<OAuth>,
}

impl HttpTransport {
    /// A transport for `url`, sending `headers` on every request.
    pub(crate) fn new(
        url: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        unsolicited: mpsc::Sender<Incoming>,
        max_bytes: usize,
        oauth: Option<OAuth>,
    ) -> Result<Self, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| ClientError::transport_with(format!("invalid URL {url:?}"), e))?;
        match uri.scheme_str() {
            Some("http" | "https") if uri.host().is_some() => {}
            _ => {
                return Err(ClientError::transport(format!(
                    "not an http(s) URL: {url:?}"
                )));
            }
        }
        let pool = new_pool().map_err(|e| ClientError::transport_with("cannot set up TLS", e))?;
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                uri,
                headers,
                legacy: AtomicBool::new(false),
                session: Mutex::new(None),
                version: Mutex::new(None),
                unsolicited,
                max_bytes,
                event_stream: AtomicBool::new(false),
                closed: AtomicBool::new(false),
                url: url.to_string(),
                oauth,
            }),
        })
    }
}

impl Inner {
    fn legacy(&self) -> bool {
        self.legacy.load(Ordering::Acquire)
    }

    fn session(&self) -> Option<HeaderValue> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn version(&self) -> Option<HeaderValue> {
        self.version
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A request with the common headers (user headers, session id, the
    /// remembered initialize-era version unless `extra` carries one).
    fn build(
        &self,
        method: Method,
        extra: &[(HeaderName, HeaderValue)],
        body: Bytes,
        accept: &'static str,
    ) -> Result<Request<Full<Bytes>>, ClientError> {
        let mut req = Request::builder()
            .method(method.clone())
            .uri(self.uri.clone());
        let headers = req.headers_mut().expect("a fresh builder has headers");
        headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
        if method == Method::POST {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        for (name, value) in &self.headers {
            headers.append(name.clone(), value.clone());
        }
        if self.legacy() {
            if let Some(session) = self.session() {
                headers.insert(HeaderName::from_static(SESSION_HEADER), session);
            }
            if let Some(version) = self.version() {
                headers.insert(HeaderName::from_static(VERSION_HEADER), version);
            }
        }
        for (name, value) in extra {
            headers.insert(name.clone(), value.clone());
        }
        if let Some(oauth) = &self.oauth {
            // OAuth owns the header: a static one would hide its tokens.
            headers.remove(header::AUTHORIZATION);
            let credentials = oauth
                .credentials(&self.url, method.as_str())
                .map_err(|e| ClientError::transport_with("cannot present the access token", e))?;
            if let Some((token, proof)) = credentials {
                headers.insert(header::AUTHORIZATION, token);
                if let Some(proof) = proof {
                    headers.insert(HeaderName::from_static(dpop::DPOP_HEADER), proof);
                }
            }
        }
        req.body(Full::new(body))
            .map_err(|e| ClientError::transport_with("cannot build the HTTP request", e))
    }

    async fn send(&self, req: Request<Full<Bytes>>) -> Result<Response<HyperBody>, ClientError> {
        let resp = self.pool.request(req).await.map_err(|e| {
            ClientError::transport_with(
                format!("cannot reach {}: {}", self.uri, crate::error::chain(&e)),
                e,
            )
        })?;
        if self.legacy()
            && let Some(session) = resp.headers().get(SESSION_HEADER)
        {
            let mut slot = self.session.lock().unwrap_or_else(|e| e.into_inner());
            if slot.is_none() {
                *slot = Some(session.clone());
            }
        }
        Ok(resp)
    }

    /// Builds and sends a request; a `401` or `403` goes to OAuth (when
    /// configured), and the request is sent again once a new token is in
    /// place, at most [`MAX_AUTHORIZATIONS`] times.
    async fn call(
        &self,
        method: Method,
        extra: &[(HeaderName, HeaderValue)],
        body: Bytes,
        accept: &'static str,
    ) -> Result<Response<HyperBody>, ClientError> {
        let mut authorizations = 0;
        let mut nonces = 0;
        loop {
            let req = self.build(method.clone(), extra, body.clone(), accept)?;
            let sent = req.headers().get(header::AUTHORIZATION).cloned();
            crate::telemetry::wire::headers(
                "send",
                || {
                    format!(
                        "{} {}",
                        req.method(),
                        crate::telemetry::wire::redact_uri(req.uri())
                    )
                },
                req.headers(),
            );
            if !body.is_empty() {
                crate::telemetry::wire::frame("send", "http", &body);
            }
            let resp = self.send(req).await?;
            let status = resp.status();
            crate::telemetry::wire::headers(
                "recv",
                || format!("{:?} {}", resp.version(), status),
                resp.headers(),
            );
            let fresh_nonce = self
                .oauth
                .as_ref()
                .is_some_and(|o| o.remember_nonce(&self.url, resp.headers()));
            if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
                return Ok(resp);
            }
            let values: Vec<String> = resp
                .headers()
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_string))
                .collect();
            let challenges = challenge::parse_all(values.iter().map(String::as_str));
            // A DPoP server may challenge with the DPoP scheme only.
            let bearer = challenges
                .iter()
                .find(|c| c.is("Bearer"))
                .or_else(|| challenges.iter().find(|c| c.is("DPoP")));
            let wants_nonce = challenges
                .iter()
                .any(|c| c.is("DPoP") && c.param("error") == Some("use_dpop_nonce"));
            if status == StatusCode::UNAUTHORIZED && wants_nonce && fresh_nonce && nonces < 2 {
                // The same request again, its proof now carrying the nonce.
                nonces += 1;
                continue;
            }
            let bad_proof = challenges
                .iter()
                .find(|c| c.is("DPoP") && c.param("error") == Some("invalid_dpop_proof"));
            let refused = |message: String, source| -> ClientError {
                Repr::Auth {
                    status: status.as_u16(),
                    message,
                    challenge: values.first().cloned(),
                    source,
                }
                .into()
            };
            let Some(oauth) = &self.oauth else {
                return Err(refused(
                    "the server requires authorization and no OAuth is configured".into(),
                    None,
                ));
            };
            if let Some(c) = bad_proof {
                // A new token would be proved the same way: say why instead.
                return Err(refused(
                    format!(
                        "the server refused the DPoP proof: {}",
                        c.param("error_description").unwrap_or("invalid_dpop_proof")
                    ),
                    None,
                ));
            }
            if authorizations == MAX_AUTHORIZATIONS {
                return Err(refused(
                    format!("still refused after {MAX_AUTHORIZATIONS} authorizations"),
                    None,
                ));
            }
            authorizations += 1;
            let refusal = crate::client::oauth::Refusal {
                status: status.as_u16(),
                challenge: bearer,
                sent: sent.as_ref(),
            };
            if let Err(e) = oauth.on_refusal(&self.url, refusal).await {
                return Err(refused(e.to_string(), Some(e)));
            }
        }
    }

    fn remember_version(&self, out: &Outgoing) {
        if !self.legacy() {
            return;
        }
        if let Some((_, v)) = out
            .headers
            .iter()
            .find(|(n, _)| n.as_str() == VERSION_HEADER)
        {
            *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(v.clone());
        }
    }

    /// GET with `Accept: text/event-stream` (and `Last-Event-ID` to resume).
    async fn get_stream(&self, last_id: Option<&str>) -> Result<Response<HyperBody>, ClientError> {
        let mut extra = Vec::new();
        if let Some(id) = last_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            extra.push((HeaderName::from_static("last-event-id"), id));
        }
        self.call(Method::GET, &extra, Bytes::new(), "text/event-stream")
            .await
    }
}

pub(crate) fn is_event_stream(resp: &Response<HyperBody>) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// Reads a whole body, refusing more than `max` bytes.
pub(crate) async fn collect<B>(body: B, max: usize) -> Result<Bytes, ClientError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut body = body;
    // A body of one frame (most answers) is kept as it came, uncopied.
    let mut first: Option<Bytes> = None;
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| ClientError::transport_with("the response body failed", e))?;
        if let Ok(data) = frame.into_data() {
            let held = first.as_ref().map_or(0, Bytes::len);
            if held + out.len() + data.len() > max {
                return Err(Incoming::oversized(max, "an HTTP body"));
            }
            match &first {
                None if out.is_empty() => first = Some(data),
                _ => {
                    if let Some(first) = first.take() {
                        out.extend_from_slice(&first);
                    }
                    out.extend_from_slice(&data);
                }
            }
        }
    }
    Ok(first.unwrap_or_else(|| out.into()))
}

/// The JSON-RPC messages of a JSON body (one object, decoded as it is, or
/// a batch array).
fn messages(body: &[u8], max: usize, status: u16) -> Option<Vec<Incoming>> {
    let with_status = |msg| match msg {
        Incoming::Response { message, .. } => Incoming::Response {
            message,
            status: Some(status),
        },
        other => other,
    };
    let body = wire::strip_bom(body);
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
        return Some(vec![with_status(Incoming::decode(body, max)?)]);
    }
    let Value::Array(items) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    let mut out = Vec::new();
    for item in items {
        let bytes = serde_json::to_vec(&item).ok()?;
        out.push(with_status(Incoming::decode(&bytes, max)?));
    }
    Some(out)
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn request(&self, out: Outgoing) -> BoxFuture<'static, Result<Exchange, ClientError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            inner.remember_version(&out);
            let resp = inner
                .call(
                    Method::POST,
                    &out.headers,
                    Bytes::from(out.body),
                    "application/json, text/event-stream",
                )
                .await?;
            let status = resp.status();
            if status.is_success() && is_event_stream(&resp) {
                let (tx, rx) = mpsc::channel(64);
                let legacy = inner.legacy();
                tokio::spawn(read_events(inner, resp.into_body(), tx, out.id, legacy));
                return Ok(rx.into());
            }
            let body = collect(resp.into_body(), inner.max_bytes).await?;
            if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
                return Err(ClientError::http_status(
                    status.as_u16(),
                    b"accepted without an answer",
                ));
            }
            match messages(&body, inner.max_bytes, status.as_u16()) {
                Some(list) if !list.is_empty() => Ok(Exchange::read(list)),
                _ if !status.is_success() => Err(ClientError::http_status(status.as_u16(), &body)),
                _ => Err(ClientError::transport(format!(
                    "the response is not JSON-RPC ({} bytes)",
                    body.len()
                ))),
            }
        })
    }

    fn send(&self, out: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            inner.remember_version(&out);
            let resp = inner
                .call(
                    Method::POST,
                    &out.headers,
                    Bytes::from(out.body),
                    "application/json, text/event-stream",
                )
                .await?;
            let status = resp.status();
            let body = collect(resp.into_body(), inner.max_bytes)
                .await
                .unwrap_or_default();
            if status.is_success() {
                Ok(())
            } else {
                Err(ClientError::http_status(status.as_u16(), &body))
            }
        })
    }

    fn cancel(&self, id: &RequestId, reason: &str) {
        if !self.inner.legacy() || self.inner.closed.load(Ordering::Acquire) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let bytes = super::cancelled(id, reason);
        let inner = self.inner.clone();
        handle.spawn(async move {
            if let Ok(resp) = inner
                .call(
                    Method::POST,
                    &[],
                    bytes.into(),
                    "application/json, text/event-stream",
                )
                .await
            {
                let _ = collect(resp.into_body(), 64 * 1024).await;
            }
        });
    }

    fn set_legacy(&self, legacy: bool) {
        self.inner.legacy.store(legacy, Ordering::Release);
        *self.inner.version.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn session_id(&self) -> Option<String> {
        self.inner
            .session()
            .and_then(|v| v.to_str().ok().map(str::to_string))
    }

    fn open_event_stream(
        &self,
        headers: Vec<(HeaderName, HeaderValue)>,
    ) -> BoxFuture<'static, Result<bool, ClientError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            if !inner.legacy() {
                return Ok(false);
            }
            if inner.event_stream.swap(true, Ordering::AcqRel) {
                return Ok(true);
            }
            let sent = inner
                .call(Method::GET, &headers, Bytes::new(), "text/event-stream")
                .await;
            let resp = match sent {
                Ok(r) => r,
                Err(e) => {
                    inner.event_stream.store(false, Ordering::Release);
                    return Err(e);
                }
            };
            if !resp.status().is_success() || !is_event_stream(&resp) {
                inner.event_stream.store(false, Ordering::Release);
                return Ok(false);
            }
            let tx = inner.unsolicited.clone();
            tokio::spawn(read_events(inner, resp.into_body(), tx, None, true));
            Ok(true)
        })
    }

    fn close(&self) -> BoxFuture<'static, ()> {
        Box::pin(end_session(self.inner.clone()))
    }
}

/// `DELETE`s an initialize-era session, once.
async fn end_session(inner: Arc<Inner>) {
    if inner.closed.swap(true, Ordering::AcqRel) || !inner.legacy() || inner.session().is_none() {
        return;
    }
    if let Ok(req) = inner.build(
        Method::DELETE,
        &[],
        Bytes::new(),
        "application/json, text/event-stream",
    ) {
        let sent = tokio::time::timeout(Duration::from_secs(5), inner.send(req)).await;
        if let Ok(Ok(resp)) = sent {
            let _ = collect(resp.into_body(), 64 * 1024).await;
        }
    }
}

impl Drop for HttpTransport {
    /// A client dropped without [`close`](crate::client::Client::close) still
    /// ends its initialize-era session, in the background.
    fn drop(&mut self) {
        let inner = &self.inner;
        if inner.closed.load(Ordering::Acquire) || !inner.legacy() || inner.session().is_none() {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(end_session(inner.clone()));
        }
    }
}

/// Reads server-sent events into `tx` until the response with `id` arrives,
/// the receiver is dropped, or the stream ends. An initialize-era stream
/// that ends early is resumed with `Last-Event-ID` after the `retry` delay.
async fn read_events(
    inner: Arc<Inner>,
    body: HyperBody,
    tx: mpsc::Sender<Incoming>,
    id: Option<RequestId>,
    resumable: bool,
) {
    let mut parser = Parser::new(inner.max_bytes);
    let mut body = body;
    let mut resumes = 0;
    loop {
        loop {
            let frame = tokio::select! {
                f = body.frame() => f,
                _ = tx.closed() => return,
            };
            let data = match frame {
                None | Some(Err(_)) => break,
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => data,
                    Err(_) => continue,
                },
            };
            for event in parser.push(&data) {
                if event.data.trim().is_empty() {
                    continue;
                }
                let Some(msg) = Incoming::decode(event.data.as_bytes(), inner.max_bytes) else {
                    continue;
                };
                let done = matches!(&msg, Incoming::Response { message, .. }
                    if id.is_some() && message.id == id);
                let msg = match msg {
                    Incoming::Response { message, .. } => Incoming::Response {
                        message,
                        status: Some(200),
                    },
                    other => other,
                };
                if tx.send(msg).await.is_err() || done {
                    return;
                }
            }
            if parser.overflow {
                tracing::warn!(
                    "snodo client: dropping an event stream whose event exceeds the size limit"
                );
                // The request this stream answers fails now, naming the
                // limit (it is not sent again: the answer would be as big).
                if id.is_some() {
                    let msg = Incoming::Oversized {
                        max: inner.max_bytes,
                        carrier: "an event of the response stream",
                    };
                    let _ = tx.send(msg).await;
                }
                return;
            }
        }
        if !resumable
            || parser.last_id.is_none()
            || resumes >= MAX_RESUMES
            || inner.closed.load(Ordering::Acquire)
        {
            return;
        }
        resumes += 1;
        let delay = parser
            .retry_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_RETRY);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = tx.closed() => return,
        }
        match inner.get_stream(parser.last_id.as_deref()).await {
            Ok(resp) if resp.status().is_success() && is_event_stream(&resp) => {
                body = resp.into_body()
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod collect_tests {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full, StreamBody};
    use hyper::body::Frame;

    use super::collect;

    fn frames(
        parts: &[&'static str],
    ) -> impl hyper::body::Body<Data = Bytes, Error = std::io::Error> + Unpin {
        let items: Vec<Result<Frame<Bytes>, std::io::Error>> = parts
            .iter()
            .map(|p| Ok(Frame::data(Bytes::from_static(p.as_bytes()))))
            .collect();
        StreamBody::new(futures_util::stream::iter(items))
    }

    #[tokio::test]
    async fn a_body_of_one_frame_or_several_is_read_whole_and_bounded() {
        let one = collect(
            Full::new(Bytes::from_static(b"{\"a\":1}")).map_err(|e| match e {}),
            64,
        );
        assert_eq!(one.await.unwrap(), Bytes::from_static(b"{\"a\":1}"));
        let three = collect(frames(&["{\"a\"", ":", "1}"]), 64).await.unwrap();
        assert_eq!(three, Bytes::from_static(b"{\"a\":1}"));
        let empty_first = collect(frames(&["", "ab", "c"]), 64).await.unwrap();
        assert_eq!(empty_first, Bytes::from_static(b"abc"));
        let over = collect(frames(&["abcd", "efgh"]), 7).await.unwrap_err();
        assert!(over.to_string().contains("more than 7 bytes"), "{over}");
        assert!(collect(frames(&["abcdefgh"]), 7).await.is_err());
        assert_eq!(collect(frames(&["abc", "defg"]), 7).await.unwrap().len(), 7);
    }
}
