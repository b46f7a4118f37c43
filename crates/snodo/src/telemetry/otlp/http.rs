//! The exporter's HTTP client (hyper, HTTP and HTTPS), driven by a runtime
//! of its own on the export thread.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};

use super::config::Target;

/// The most a collector's response body may hold.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// Posts OTLP requests.
pub(super) struct ExportClient {
    runtime: tokio::runtime::Runtime,
    client: hyper_util::client::legacy::Client<Connector, Full<Bytes>>,
}

impl ExportClient {
    pub(super) fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .build();
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(https);
        Ok(Self { runtime, client })
    }

    /// Posts `body` (an encoded export request) to `target`; an error
    /// unless the collector answered 2xx within the target's timeout.
    pub(super) fn post(&self, target: &Target, body: Vec<u8>) -> Result<(), String> {
        let mut request = Request::post(&target.url)
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .header(
                http::header::USER_AGENT,
                concat!("snodo-otlp/", env!("CARGO_PKG_VERSION")),
            );
        for (k, v) in &target.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let client = &self.client;
        self.runtime.block_on(async move {
            let exchange = async {
                let response = client.request(request).await.map_err(|e| e.to_string())?;
                let status = response.status();
                let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
                    .collect()
                    .await
                    .map_err(|e| e.to_string())?
                    .to_bytes();
                check(status, &body)
            };
            tokio::time::timeout(target.timeout, exchange)
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {:?}", target.timeout)))
        })
    }
}

fn check(status: StatusCode, body: &[u8]) -> Result<(), String> {
    if status.is_success() {
        Ok(())
    } else {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        Err(format!("the collector answered {status}: {text}"))
    }
}
