//! A round-robin balancer on loopback: every request goes to the next node
//! in turn; a streamed response stays with the node that opened it (its
//! body is relayed as it arrives). A node that is down answers 502.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

type Body = BoxBody<Bytes, hyper::Error>;

/// A running balancer.
pub struct Balancer {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Requests sent to each node.
    pub hits: Arc<Vec<AtomicUsize>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn bad_gateway(message: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(message))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = StatusCode::BAD_GATEWAY;
    response
}

async fn forward(
    client: Client<HttpConnector, Full<Bytes>>,
    node: SocketAddr,
    request: Request<Incoming>,
) -> Response<Body> {
    let (mut parts, body) = request.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return bad_gateway("the request body broke off".into());
    };
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    parts.uri = format!("http://{node}{path}").parse().expect("a node URI");
    parts.headers.insert(
        hyper::header::HOST,
        node.to_string().parse().expect("a host header"),
    );
    match client
        .request(Request::from_parts(parts, Full::new(body)))
        .await
    {
        Ok(response) => response.map(BodyExt::boxed),
        Err(e) => bad_gateway(format!("node {node}: {e}")),
    }
}

/// Starts a balancer in front of `nodes` (their `host:port`).
pub async fn start(nodes: Vec<SocketAddr>) -> Balancer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits: Arc<Vec<AtomicUsize>> = Arc::new(nodes.iter().map(|_| AtomicUsize::new(0)).collect());
    let next = Arc::new(AtomicUsize::new(0));
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let nodes = Arc::new(nodes);
    let counts = hits.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (client, nodes, next, counts) =
                (client.clone(), nodes.clone(), next.clone(), counts.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let i = next.fetch_add(1, Ordering::Relaxed) % nodes.len();
                    counts[i].fetch_add(1, Ordering::Relaxed);
                    let (client, node) = (client.clone(), nodes[i]);
                    async move { Ok::<_, Infallible>(forward(client, node, request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Balancer {
        url: format!("http://{addr}/mcp"),
        hits,
        task,
    }
}
