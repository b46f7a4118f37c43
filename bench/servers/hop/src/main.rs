//! The bare hop: what one hop costs when it does no MCP work, the limit a
//! gateway is measured against.
//!
//! - `--http URL`: a reverse proxy on `127.0.0.1:0` (hyper HTTP/1.1,
//!   keep-alive, `TCP_NODELAY`) that sends every request, its method, path,
//!   query, headers and body as they came (hop-by-hop headers aside), to
//!   `URL`'s origin over a keep-alive connection pool, and streams the
//!   answer back (server-sent events included). Prints
//!   `{"url":"http://127.0.0.1:PORT/mcp"}`; exits when stdin closes.
//! - `--stdio PROGRAM ARGS...`: starts the program and copies bytes between
//!   the pipes both ways (its stdin from ours, our stdout from its) on two
//!   threads, with no parsing; exits when the program's output ends.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, Uri, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use snodo_bench_common::{announce, stdin_closed};

type Body = BoxBody<Bytes, hyper::Error>;
type Pool = Client<HttpConnector, Incoming>;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--http") if args.len() == 2 => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(http(&args[1])),
        Some("--stdio") if args.len() >= 2 => stdio(&args[1], &args[2..]),
        _ => {
            eprintln!("usage: bench-server-hop --http URL | --stdio PROGRAM [ARGS...]");
            std::process::exit(2);
        }
    }
}

/// The headers that belong to one connection, not to the message.
const HOP_BY_HOP: [header::HeaderName; 4] = [
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::TE,
];

fn strip(headers: &mut HeaderMap) {
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

async fn forward(
    pool: Pool,
    origin: http::uri::Authority,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    parts.uri = match Uri::builder()
        .scheme("http")
        .authority(origin.clone())
        .path_and_query(path)
        .build()
    {
        Ok(uri) => uri,
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    strip(&mut parts.headers);
    parts.headers.insert(
        header::HOST,
        header::HeaderValue::from_str(origin.as_str()).expect("an authority is a header value"),
    );
    match pool.request(Request::from_parts(parts, body)).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            strip(&mut parts.headers);
            Ok(Response::from_parts(parts, body.boxed()))
        }
        Err(_) => Ok(status(StatusCode::BAD_GATEWAY)),
    }
}

fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::new())
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = code;
    response
}

async fn http(backend: &str) -> std::io::Result<()> {
    let uri: Uri = backend
        .parse()
        .map_err(|e| std::io::Error::other(format!("{backend}: {e}")))?;
    let origin = uri
        .authority()
        .cloned()
        .ok_or_else(|| std::io::Error::other(format!("{backend}: no host")))?;
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let pool: Pool = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(usize::MAX)
        .build(connector);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    announce(&format!("http://{}/mcp", listener.local_addr()?));
    let closed = stdin_closed();
    tokio::pin!(closed);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut closed => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(_) => continue,
            },
        };
        let _ = stream.set_nodelay(true);
        let (pool, origin) = (pool.clone(), origin.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request| forward(pool.clone(), origin.clone(), request));
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Two threads, each a blocking read-write loop: the cheapest relay there is.
fn stdio(program: &str, args: &[String]) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut to_child = child.stdin.take().expect("a piped stdin");
    let mut from_child = child.stdout.take().expect("a piped stdout");
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = input.read(&mut buf) {
            if n == 0 || to_child.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let mut output = std::io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = from_child.read(&mut buf) {
        if n == 0 || output.write_all(&buf[..n]).is_err() || output.flush().is_err() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}
