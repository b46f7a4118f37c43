//! Clients of the server under test: hyper over HTTP/1.1 and HTTP/2, literal
//! requests, and raw TCP exchanges.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::SOON;

pub(crate) type HttpClient = Client<HttpConnector, Full<Bytes>>;

pub(crate) fn h1_client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

pub(crate) fn h2_client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| panic!("not JSON: {:?}", self.body))
    }
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub(crate) async fn send(client: &HttpClient, request: Request<Full<Bytes>>) -> Answer {
    let response = tokio::time::timeout(SOON, client.request(request))
        .await
        .expect("answered in time")
        .expect("request succeeds");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body").to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

pub(crate) async fn post(
    client: &HttpClient,
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Answer {
    let mut request = Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send(client, request.body(Full::new(body.into())).unwrap()).await
}

pub(crate) fn call_headers<'a>(name: &'a str, region: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    if let Some(region) = region {
        headers.push(("Mcp-Param-Region", region));
    }
    headers
}

pub(crate) fn list_headers() -> Vec<(&'static str, &'static str)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ]
}

pub(crate) const CALL_OK: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

pub(crate) const LIST_OK: &str = r#"{"jsonrpc":"2.0","id":"list-1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// Writes raw bytes and reads until the server closes the connection (or
/// resets it), within [`SOON`].
pub(crate) async fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    read_until_closed(&mut stream).await
}

pub(crate) async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = Instant::now() + SOON;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => panic!(
                "the server kept the connection open; read so far: {}",
                String::from_utf8_lossy(&out)
            ),
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
