//! The HTTP connection pool: keep-alive, `http` and `https` (rustls with
//! the Mozilla roots), HTTP/1.1 and HTTP/2. Shared by the client's
//! Streamable HTTP transport and OAuth.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::error::BoxError;

/// The client's HTTP connection pool .
pub(crate) type Pool = HyperClient<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A keep-alive pool for `http` and `https` (rustls, Mozilla roots).
pub(crate) fn new_pool() -> Result<Pool, BoxError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(Duration::from_secs(10)));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(provider)
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Ok(HyperClient::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .build(https))
}
