//! The listener under test on a loopback port, and requests to it.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use snodo::transport::http::{HttpListener, HttpOptions};
use tokio::sync::oneshot;

use crate::common::assert_legacy_response;
use crate::events::Events;
use crate::{V, legacy_support};

pub(crate) struct Running {
    pub(crate) url: String,
    pub(crate) server: snodo::Server,
    pub(crate) client: Client<HttpConnector, Full<Bytes>>,
    _stop: oneshot::Sender<()>,
}

pub(crate) async fn start(options: HttpOptions) -> Running {
    let server = legacy_support::server(Duration::from_secs(5));
    let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("bind 127.0.0.1:0");
    let url = listener.url();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));
    Running {
        url,
        server,
        client: Client::builder(TokioExecutor::new()).build_http(),
        _stop: stop,
    }
}

impl Running {
    pub(crate) async fn send(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: &str,
    ) -> http::Response<Incoming> {
        let mut request = Request::builder()
            .method(method)
            .uri(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.client.request(request))
            .await
            .expect("an answer within 10 s")
            .expect("the request goes through")
    }

    pub(crate) async fn post(
        &self,
        session: Option<&str>,
        body: &str,
    ) -> (StatusCode, HeaderMap, Value) {
        let mut headers = vec![("mcp-protocol-version", V)];
        if let Some(id) = session {
            headers.push(("mcp-session-id", id));
        }
        let response = self.send(Method::POST, &headers, body).await;
        read_json(response).await
    }

    /// POSTs a request of session `sid` that answers with a stream.
    pub(crate) async fn stream(&self, sid: &str, body: &str) -> Events {
        let headers = [("mcp-session-id", sid), ("mcp-protocol-version", V)];
        Events::new(self.send(Method::POST, &headers, body).await)
    }

    pub(crate) async fn initialize(&self, capabilities: Value) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V, "capabilities": capabilities,
            "clientInfo": {"name": "vectors", "version": "1.0.0"}}});
        let response = self.send(Method::POST, &[], &body.to_string()).await;
        let (status, headers, reply) = read_json(response).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        assert_legacy_response(V, &reply, "InitializeResult");
        let id = headers["mcp-session-id"].to_str().unwrap().to_string();
        let (status, _, _) = self
            .post(
                Some(&id),
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
        id
    }
}

pub(crate) async fn read_json(
    response: http::Response<Incoming>,
) -> (StatusCode, HeaderMap, Value) {
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{:?} is not JSON: {e}", String::from_utf8_lossy(&bytes)))
    };
    (parts.status, parts.headers, value)
}
