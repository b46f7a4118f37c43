//! The exporter's HTTP client: requests are carried out on a runtime of
//! their own (one thread), because the SDK's batch processors call the
//! client from their own threads, outside any Tokio runtime.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use opentelemetry_http::{HttpClient, HttpError};
use tokio::sync::{mpsc, oneshot};

/// The most a collector's response body may hold.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// How long one export may take, whatever the SDK's own timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

type Job = (
    Request<Bytes>,
    oneshot::Sender<Result<Response<Bytes>, HttpError>>,
);

/// An [`HttpClient`] over hyper (HTTP and HTTPS), driven by a thread of its
/// own.
#[derive(Clone)]
pub(super) struct ExportClient {
    jobs: mpsc::Sender<Job>,
}

impl fmt::Debug for ExportClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExportClient").finish_non_exhaustive()
    }
}

impl ExportClient {
    /// Starts the client's thread.
    pub(super) fn start() -> std::io::Result<Self> {
        let (jobs, mut rx) = mpsc::channel::<Job>(64);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .build();
        let client: hyper_util::client::legacy::Client<_, Full<Bytes>> =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(https);
        std::thread::Builder::new()
            .name("snodo-otlp".into())
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some((request, reply)) = rx.recv().await {
                        let client = client.clone();
                        tokio::spawn(async move {
                            let out = tokio::time::timeout(REQUEST_TIMEOUT, send(&client, request))
                                .await
                                .unwrap_or_else(|_| Err("the export timed out".into()));
                            let _ = reply.send(out);
                        });
                    }
                });
            })?;
        Ok(Self { jobs })
    }
}

async fn send<C>(
    client: &hyper_util::client::legacy::Client<C, Full<Bytes>>,
    request: Request<Bytes>,
) -> Result<Response<Bytes>, HttpError>
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let (parts, body) = request.into_parts();
    let response = client
        .request(Request::from_parts(parts, Full::new(body)))
        .await?;
    let (parts, body) = response.into_parts();
    let body = Limited::new(body, MAX_RESPONSE_BYTES)
        .collect()
        .await?
        .to_bytes();
    Ok(Response::from_parts(parts, body))
}

impl HttpClient for ExportClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            self.jobs
                .send((request, tx))
                .await
                .map_err(|_| "the export client stopped")?;
            rx.await.map_err(|_| "the export client stopped")?
        })
    }
}
