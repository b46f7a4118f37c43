//! The exporter's HTTP client (hyper, HTTP and HTTPS), driven by a runtime
//! of its own on the export thread.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::config::Target;

/// Keep-alive connections to the collectors, `http` or `https`.
type Connections = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Connections over HTTP/1.1 or HTTP/2, plain or TLS with the Mozilla
/// roots: 10 s to connect, idle ones closed after 60 s.
fn connections() -> std::io::Result<Connections> {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    tcp.set_nodelay(true);
    tcp.set_connect_timeout(Some(Duration::from_secs(10)));
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(Arc::new(rustls::crypto::ring::default_provider()))
        .map_err(std::io::Error::other)?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(tcp);
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .build(tls))
}

/// The most a collector's response body may hold.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Posts OTLP requests.
pub(super) struct ExportClient {
    runtime: tokio::runtime::Runtime,
    client: Connections,
}

impl ExportClient {
    pub(super) fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let client = connections()?;
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

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// A loopback server answering each connection with `answer` (after
    /// reading what arrives first); `None` holds the connection unanswered.
    fn server(answer: Option<Vec<u8>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let answer = answer.clone();
                std::thread::spawn(move || {
                    let mut buf = [0; 4096];
                    let _ = stream.read(&mut buf);
                    match answer {
                        Some(a) => {
                            let _ = stream.write_all(&a);
                        }
                        None => std::thread::sleep(Duration::from_secs(5)),
                    }
                });
            }
        });
        url
    }

    fn target(url: String, timeout: Duration) -> Target {
        Target {
            url,
            headers: vec![("x-api-key".into(), "k".into())],
            timeout,
        }
    }

    #[test]
    fn answers_are_checked_and_bounded() {
        let client = ExportClient::new().unwrap();
        let ok = server(Some(
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_vec(),
        ));
        client
            .post(&target(ok, Duration::from_secs(5)), vec![1, 2])
            .unwrap();

        let refused = server(Some(
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 7\r\n\r\nno good".to_vec(),
        ));
        let err = client
            .post(&target(refused, Duration::from_secs(5)), vec![1])
            .unwrap_err();
        assert!(err.contains("400") && err.contains("no good"), "{err}");

        let mut huge = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n",
            MAX_RESPONSE_BYTES + 1
        )
        .into_bytes();
        huge.resize(huge.len() + MAX_RESPONSE_BYTES + 1, b'x');
        let big = server(Some(huge));
        let err = client
            .post(&target(big, Duration::from_secs(5)), vec![1])
            .unwrap_err();
        assert!(err.contains("length limit"), "{err}");

        let silent = server(None);
        let err = client
            .post(&target(silent, Duration::from_millis(200)), vec![1])
            .unwrap_err();
        assert!(err.contains("no answer within"), "{err}");
    }
}
