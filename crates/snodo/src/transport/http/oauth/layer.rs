//! The resource server as a tower layer, for a service mounted in an
//! application's own router.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use ::http::{Request, Response};

use super::server::ResourceServer;
use crate::transport::http::McpBody;

/// Puts a [`ResourceServer`] in front of a service that answers
/// `Response<McpBody>` (such as [`Server::http_service`](crate::Server::http_service)):
/// metadata requests are answered, every other request must carry a valid
/// token, and the verified [`Principal`](crate::Principal) travels in the
/// request's extensions to the service.
///
/// ```
/// # fn demo(server: snodo::Server, rs: snodo::transport::http::oauth::ResourceServer) {
/// use snodo::transport::http::oauth::OAuthLayer;
///
/// let mcp = OAuthLayer::new(rs.clone()).layer(server.http_service());
/// let mut app: axum::Router = axum::Router::new().route_service("/mcp", mcp);
/// for path in rs.metadata_paths() {
///     app = app.route_service(path, OAuthLayer::new(rs.clone()).layer(server.http_service()));
/// }
/// # let _ = app;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OAuthLayer {
    rs: ResourceServer,
}

impl OAuthLayer {
    /// A layer for `rs`.
    pub fn new(rs: ResourceServer) -> Self {
        Self { rs }
    }

    /// Wraps `inner` (the same as tower's `Layer::layer`).
    pub fn layer<S>(&self, inner: S) -> OAuthService<S> {
        OAuthService {
            inner,
            rs: self.rs.clone(),
        }
    }
}

/// The service [`OAuthLayer`] makes.
#[derive(Debug, Clone)]
pub struct OAuthService<S> {
    inner: S,
    rs: ResourceServer,
}

type BoxResponse<E> = Pin<Box<dyn Future<Output = Result<Response<McpBody>, E>> + Send>>;

impl<S, B> tower_service::Service<Request<B>> for OAuthService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<McpBody>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send,
    B: Send + 'static,
{
    type Response = Response<McpBody>;
    type Error = S::Error;
    type Future = BoxResponse<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let rs = self.rs.clone();
        // The clone that was made ready is the one that serves the call.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            if let Err(response) = rs.admit(&mut parts).await {
                return Ok(*response);
            }
            inner.call(Request::from_parts(parts, body)).await
        })
    }
}

impl ResourceServer {
    /// Answers metadata requests, authenticates every other one and puts
    /// the principal and this resource server in its extensions; `Err` is
    /// the response that ends the request.
    pub(crate) async fn admit(
        &self,
        parts: &mut ::http::request::Parts,
    ) -> Result<(), Box<Response<McpBody>>> {
        if self.is_metadata_path(parts.uri.path()) {
            return Err(Box::new(self.metadata_response(&parts.method)));
        }
        if parts.method == ::http::Method::OPTIONS {
            return Ok(());
        }
        let principal = self
            .authenticate(&parts.method, &parts.uri, &parts.headers)
            .await?;
        parts.extensions.insert(principal);
        parts.extensions.insert(self.clone());
        parts.extensions.insert(crate::context::EnforceScopes);
        Ok(())
    }
}

impl<S> tower_layer::Layer<S> for OAuthLayer {
    type Service = OAuthService<S>;

    fn layer(&self, inner: S) -> OAuthService<S> {
        OAuthLayer::layer(self, inner)
    }
}
