//! The 2024-11-05 HTTP+SSE transport, for servers that still speak it: a
//! `GET` opens one event stream whose first event, `endpoint`, names the URL
//! to `POST` messages to; every answer, notification and server request then
//! arrives on that stream as a `message` event, and each `POST` is only
//! acknowledged (`202 Accepted`).
//!
//! The stream is demultiplexed like a child's stdout (by request id,
//! progress token and subscription id). The endpoint must have the stream's
//! origin: a server cannot send the client's messages elsewhere. Events are
//! bounded by the message limit; an event over it ends the connection, as
//! its answer could not be attributed. Ending the stream fails every request
//! waiting; closing the transport drops the stream.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ::http::{HeaderName, HeaderValue, Method, Request, Uri, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as HyperBody;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::http::{collect, is_event_stream};
use super::router::Router;
use super::sse::{Event, Parser};
use super::{Exchange, Incoming, Outgoing, Transport, TransportKind};
use crate::client::ClientError;
use crate::client::options::BoxFuture;
use crate::net::{Pool, new_pool};
use crate::wire::RequestId;

/// How much of an acknowledgement body is read (and dropped).
const MAX_ACK_BYTES: usize = 64 * 1024;

/// The 2024-11-05 HTTP+SSE transport.
pub(crate) struct LegacySseTransport {
    inner: Arc<Inner>,
    reader: AbortHandle,
}

struct Inner {
    pool: Pool,
    /// Where messages are POSTed, as the `endpoint` event named it.
    endpoint: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    router: Arc<Router>,
    max_bytes: usize,
}

impl LegacySseTransport {
    /// Opens the event stream at `url` and waits, at most `wait`, for its
    /// `endpoint` event.
    pub(crate) async fn connect(
        url: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        unsolicited: mpsc::Sender<Incoming>,
        max_bytes: usize,
        wait: Duration,
    ) -> Result<Self, ClientError> {
        let stream: Uri = url
            .parse()
            .map_err(|e| ClientError::transport_with(format!("invalid URL {url:?}"), e))?;
        if !matches!(stream.scheme_str(), Some("http" | "https")) || stream.host().is_none() {
            return Err(ClientError::transport(format!(
                "not an http(s) URL: {url:?}"
            )));
        }
        let pool = new_pool().map_err(|e| ClientError::transport_with("cannot set up TLS", e))?;
        let mut req = Request::builder().method(Method::GET).uri(stream.clone());
        let h = req.headers_mut().expect("a fresh builder has headers");
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        for (name, value) in &headers {
            h.append(name.clone(), value.clone());
        }
        let req = req
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::transport_with("cannot build the HTTP request", e))?;
        let opened = async {
            let resp = pool.request(req).await.map_err(|e| {
                ClientError::transport_with(
                    format!("cannot reach {stream}: {}", crate::error::chain(&e)),
                    e,
                )
            })?;
            let status = resp.status();
            if !status.is_success() || !is_event_stream(&resp) {
                let body = collect(resp.into_body(), MAX_ACK_BYTES)
                    .await
                    .unwrap_or_default();
                let mut e = ClientError::http_status(status.as_u16(), &body);
                if status.is_success() {
                    e = ClientError::transport(format!(
                        "GET {stream} did not open an event stream (HTTP+SSE, 2024-11-05)"
                    ));
                }
                return Err(e);
            }
            let mut body = resp.into_body();
            let mut parser = Parser::new(max_bytes);
            loop {
                let Some(frame) = body.frame().await else {
                    return Err(ClientError::transport(
                        "the event stream ended before its endpoint event",
                    ));
                };
                let frame =
                    frame.map_err(|e| ClientError::transport_with("the event stream failed", e))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let events = parser.push(&data);
                if parser.overflow {
                    return Err(ClientError::transport(format!(
                        "an event over {max_bytes} bytes before the endpoint event"
                    )));
                }
                if let Some(event) = events
                    .into_iter()
                    .find(|e| e.event.as_deref() == Some("endpoint"))
                {
                    let endpoint = resolve(&stream, event.data.trim())?;
                    return Ok((endpoint, body, parser));
                }
            }
        };
        let (endpoint, body, parser) = match tokio::time::timeout(wait, opened).await {
            Ok(opened) => opened?,
            Err(_) => {
                return Err(ClientError::transport(format!(
                    "no endpoint event from {stream} within {wait:?}"
                )));
            }
        };
        let router = Arc::new(Router::new(unsolicited));
        let reader = tokio::spawn(read_stream(body, parser, router.clone(), max_bytes));
        Ok(Self {
            inner: Arc::new(Inner {
                pool,
                endpoint,
                headers,
                router,
                max_bytes,
            }),
            reader: reader.abort_handle(),
        })
    }
}

/// The endpoint an `endpoint` event names, resolved against the stream's
/// URL; refused unless it has the stream's scheme and authority.
pub(crate) fn resolve(stream: &Uri, data: &str) -> Result<Uri, ClientError> {
    let refuse = |why: &str| {
        ClientError::transport(format!(
            "the server's endpoint event {data:?} {why} (HTTP+SSE, 2024-11-05)"
        ))
    };
    let origin = || {
        format!(
            "{}://{}",
            stream.scheme_str().unwrap_or("http"),
            stream.authority().map_or("", |a| a.as_str())
        )
    };
    let absolute = if data.contains("://") {
        match Uri::try_from(data) {
            Ok(uri) if uri.scheme().is_some() => data.to_string(),
            _ => return Err(refuse("is not a URL")),
        }
    } else if data.starts_with("//") {
        return Err(refuse("names another host"));
    } else if data.starts_with('/') {
        format!("{}{data}", origin())
    } else {
        let path = stream.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        format!("{}{dir}{data}", origin())
    };
    let uri: Uri = absolute.parse().map_err(|_| refuse("is not a URL"))?;
    if uri.scheme() != stream.scheme() || uri.authority() != stream.authority() {
        return Err(refuse("is not on the stream's origin"));
    }
    Ok(uri)
}

/// Reads the stream after its endpoint event; routes each message.
async fn read_stream(mut body: HyperBody, mut parser: Parser, router: Arc<Router>, max: usize) {
    'read: while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        for Event { event, data, .. } in parser.push(&data) {
            if !matches!(event.as_deref(), None | Some("message")) {
                continue;
            }
            match Incoming::decode(data.as_bytes(), max) {
                Some(msg) => router.route(msg),
                None => tracing::debug!("snodo client: an event that is not JSON-RPC"),
            }
        }
        if parser.overflow {
            tracing::warn!(
                "snodo client: the server sent an event over {max} bytes: the connection ends"
            );
            break 'read;
        }
    }
    router.closed.store(true, Ordering::Release);
    router.lock().clear();
}

impl Inner {
    /// POSTs one message; fine when the server acknowledges it.
    async fn post(
        &self,
        body: Vec<u8>,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Result<(), ClientError> {
        if self.router.closed.load(Ordering::Acquire) {
            return Err(ClientError::transport(
                "the server's event stream has ended",
            ));
        }
        if body.len() > self.max_bytes {
            return Err(ClientError::transport("the message exceeds the size limit"));
        }
        crate::telemetry::wire::frame("send", "http", &body);
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(self.endpoint.clone());
        let h = req.headers_mut().expect("a fresh builder has headers");
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in &self.headers {
            h.append(name.clone(), value.clone());
        }
        for (name, value) in extra {
            h.insert(name.clone(), value.clone());
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| ClientError::transport_with("cannot build the HTTP request", e))?;
        let resp = self.pool.request(req).await.map_err(|e| {
            ClientError::transport_with(
                format!(
                    "cannot reach {}: {}",
                    self.endpoint,
                    crate::error::chain(&e)
                ),
                e,
            )
        })?;
        let status = resp.status();
        let body = collect(resp.into_body(), MAX_ACK_BYTES)
            .await
            .unwrap_or_default();
        if status.is_success() {
            Ok(())
        } else {
            Err(ClientError::http_status(status.as_u16(), &body))
        }
    }
}

impl Transport for LegacySseTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn initialize_only(&self) -> bool {
        true
    }

    fn request(&self, out: Outgoing) -> BoxFuture<'static, Result<Exchange, ClientError>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            let id = out
                .id
                .clone()
                .ok_or_else(|| ClientError::transport("a request needs an id"))?;
            let (tx, rx) = mpsc::channel(256);
            inner.router.lock().insert(id.clone(), tx);
            if let Err(e) = inner.post(out.body, &out.headers).await {
                inner.router.lock().remove(&id);
                return Err(e);
            }
            Ok(rx.into())
        })
    }

    fn send(&self, out: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.post(out.body, &out.headers).await })
    }

    fn cancel(&self, id: &RequestId, reason: &str) {
        if self.inner.router.lock().remove(id).is_none() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let bytes = super::cancelled(id, reason);
        let inner = self.inner.clone();
        handle.spawn(async move {
            let _ = inner.post(bytes, &[]).await;
        });
    }

    fn set_legacy(&self, _legacy: bool) {}

    fn close(&self) -> BoxFuture<'static, ()> {
        self.reader.abort();
        self.inner.router.closed.store(true, Ordering::Release);
        self.inner.router.lock().clear();
        Box::pin(async {})
    }
}

impl Drop for LegacySseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Uri {
        "http://127.0.0.1:8000/app/sse".parse().unwrap()
    }

    #[test]
    fn endpoints_resolve_on_the_streams_origin() {
        let cases = [
            (
                "/messages/?session_id=ab12",
                "http://127.0.0.1:8000/messages/?session_id=ab12",
            ),
            (
                "message?sessionId=x",
                "http://127.0.0.1:8000/app/message?sessionId=x",
            ),
            ("http://127.0.0.1:8000/m?s=1", "http://127.0.0.1:8000/m?s=1"),
        ];
        for (data, want) in cases {
            assert_eq!(
                resolve(&stream(), data).unwrap().to_string(),
                want,
                "{data}"
            );
        }
    }

    #[test]
    fn endpoints_elsewhere_are_refused() {
        for data in [
            "http://127.0.0.2:8000/m",
            "https://127.0.0.1:8000/m",
            "http://127.0.0.1:8001/m",
            "//evil.example/m",
            "http://[::1",
        ] {
            let e = resolve(&stream(), data).unwrap_err();
            assert!(e.to_string().contains("endpoint event"), "{data}: {e}");
        }
    }
}
