//! The response body of the HTTP transport.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::{Body, Frame, SizeHint};

use crate::BoxError;

/// The body of every response the MCP service produces: empty, one buffer of
/// JSON, or (for streams) any boxed body.
///
/// It is `Send` but not `Sync`, like http-body-util's `UnsyncBoxBody`, and
/// implements [`http_body::Body`](hyper::body::Body) with `Bytes` data, so
/// axum, hyper and tower-http accept it as is. The common cases allocate
/// nothing beyond the JSON buffer itself.
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    /// One buffer, taken on the first poll (`None` afterwards, or when empty).
    Full(Option<Bytes>),
    /// Any other body (the seam for streamed responses).
    Boxed(UnsyncBoxBody<Bytes, BoxError>),
}

impl McpBody {
    /// Whether this is a streamed body (server-sent events), not one buffer.
    pub(super) fn is_stream(&self) -> bool {
        matches!(self.kind, Kind::Boxed(_))
    }

    /// An empty body.
    pub fn empty() -> Self {
        Self {
            kind: Kind::Full(None),
        }
    }

    /// A body of one buffer.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self {
            kind: Kind::Full((!bytes.is_empty()).then_some(bytes)),
        }
    }

    /// Boxes any body with `Bytes` data (for example a stream of
    /// server-sent events).
    pub fn new<B>(body: B) -> Self
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Self {
            kind: Kind::Boxed(body.map_err(Into::into).boxed_unsync()),
        }
    }
}

impl Default for McpBody {
    fn default() -> Self {
        Self::empty()
    }
}

impl From<Bytes> for McpBody {
    fn from(bytes: Bytes) -> Self {
        Self::full(bytes)
    }
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Full(bytes) => f
                .debug_struct("McpBody")
                .field("len", &bytes.as_ref().map_or(0, Bytes::len))
                .finish(),
            Kind::Boxed(_) => f.debug_struct("McpBody").field("streaming", &true).finish(),
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.get_mut().kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Boxed(body) => body.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn full_and_empty_bodies() {
        let body = McpBody::full(Bytes::from_static(b"{}"));
        assert_eq!(body.size_hint().exact(), Some(2));
        assert_eq!(body.collect().await.unwrap().to_bytes(), "{}");
        let empty = McpBody::empty();
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
        let boxed = McpBody::new(http_body_util::Full::new(Bytes::from_static(b"x")));
        assert_eq!(boxed.collect().await.unwrap().to_bytes(), "x");
    }
}
