//! The ceiling: what a server costs when it does no MCP work at all, so no
//! MCP server on the same machine can be faster. It tells how close a library
//! gets to the limit of the transport and the load generator.
//!
//! - `--http`: bare hyper (HTTP/1.1, keep-alive, `TCP_NODELAY`) answering
//!   every POST with one fixed, valid MCP 2026-07-28 `tools/call` response. It
//!   reads each request body but never parses it.
//! - `--stdio`: a plain blocking loop on the standard streams, no async
//!   runtime. Responses must carry their request's id (several requests are in
//!   flight), so it finds the integer after `"id":` with a byte scan (no JSON
//!   parsing) and answers the fixed-shape result
//!   `{"resultType":"complete","content":[{"type":"text","text":"echo-<id>"}]}`,
//!   which is what the load generator's `echo` requests expect. Answers are
//!   buffered and flushed when no more input is waiting.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use snodo_bench_common::{Mode, announce, mode_from_args, stdin_closed};

/// The fixed answer: a complete `tools/call` result with one text block.
const CEILING_RESPONSE: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ceiling"}]}}"#;

async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::POST {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        return Ok(response);
    }
    // Read (and drop) the body, as any server must before answering.
    let _ = request.into_body().collect().await;
    let mut response = Response::new(Full::new(Bytes::from_static(CEILING_RESPONSE.as_bytes())));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn main() -> std::io::Result<()> {
    match mode_from_args("bench-server-ceiling") {
        Mode::Stdio => stdio(),
        // The ceiling has no sessions; it answers the same fixed reply.
        Mode::Http | Mode::HttpSessions => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(http()),
    }
}

/// The integer after the first `"id":` of a line.
fn request_id(line: &[u8]) -> Option<u64> {
    let key = b"\"id\":";
    let at = line.windows(key.len()).position(|w| w == key)? + key.len();
    let digits: Vec<u8> = line[at..]
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

fn stdio() -> std::io::Result<()> {
    use std::io::{BufRead, Write};
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return output.flush();
        }
        if let Some(id) = request_id(&line) {
            writeln!(
                output,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","content":[{{"type":"text","text":"echo-{id}"}}]}}}}"#
            )?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}

async fn http() -> std::io::Result<()> {
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
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service_fn(answer))
                .await;
        });
    }
}
