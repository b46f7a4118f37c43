//! Requests refused before they reach a handler: foreign origins and hosts,
//! malformed JSON, oversized bodies and headers.

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use snodo::transport::http::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::SOON;
use crate::clients::{LIST_OK, h1_client, list_headers, post, raw_exchange};
use crate::server::Running;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origin_and_host_get_403_and_local_ones_pass() {
    let running = Running::default().await;
    let client = h1_client();
    let port = running.addr.port();
    let local_origin = format!("http://localhost:{port}");
    let local_host = format!("localhost:{port}");
    let other_port_host = format!("127.0.0.1:{}", port.wrapping_add(1).max(1));
    let refused: Vec<Vec<(&str, &str)>> = vec![
        vec![("Origin", "http://evil.example.com")],
        vec![("Origin", "null")],
        vec![
            ("Host", "evil.example.com"),
            ("Origin", "http://evil.example.com"),
        ],
        vec![("Host", "evil.example.com")],
        vec![("Host", "localhost.evil.example.com")],
        vec![("Host", other_port_host.as_str())],
    ];
    for extra in &refused {
        let mut headers = list_headers();
        headers.extend(extra.iter().copied());
        let reply = post(&client, &running.url, &headers, LIST_OK).await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{extra:?}: {}",
            reply.text()
        );
        assert!(
            reply.json().get("id").is_none(),
            "no id before the body is read"
        );
    }
    let accepted: Vec<Vec<(&str, &str)>> = vec![
        vec![("Origin", local_origin.as_str())],
        vec![
            ("Host", local_host.as_str()),
            ("Origin", local_origin.as_str()),
        ],
        vec![("Host", "localhost")],
    ];
    for extra in &accepted {
        let mut headers = list_headers();
        headers.extend(extra.iter().copied());
        let reply = post(&client, &running.url, &headers, LIST_OK).await;
        assert_eq!(reply.status, StatusCode::OK, "{extra:?}: {}", reply.text());
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_allowlists_replace_the_local_defaults() {
    let options = HttpOptions::new()
        .endpoint("api/mcp")
        .allowed_hosts(["mcp.example.com"])
        .allowed_origins(["https://app.example.com"]);
    let running = Running::start(options).await;
    assert!(running.url.ends_with("/api/mcp"), "{}", running.url);
    let client = h1_client();
    let ok = [
        ("Host", "mcp.example.com"),
        ("Origin", "https://app.example.com"),
    ];
    let mut headers = list_headers();
    headers.extend(ok);
    assert_eq!(
        post(&client, &running.url, &headers, LIST_OK).await.status,
        StatusCode::OK
    );
    // The local defaults are gone.
    assert_eq!(
        post(&client, &running.url, &list_headers(), LIST_OK)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_truncated_non_utf8_and_deep_json_get_400_parse_error() {
    let running = Running::default().await;
    let client = h1_client();
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let bodies: Vec<(&str, Bytes)> = vec![
        (
            "malformed",
            Bytes::from_static(br#"{"jsonrpc":"2.0",,"id":1}"#),
        ),
        (
            "truncated",
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"tools/li"#),
        ),
        ("not UTF-8", Bytes::from_static(b"\xff\xfe{\x80}")),
        (
            "invalid UTF-8 in a string",
            Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/\xc3\x28\"}"),
        ),
        ("empty", Bytes::new()),
        ("10 000 nested arrays", Bytes::from(deep)),
    ];
    for (what, body) in bodies {
        let reply = post(&client, &running.url, &list_headers(), body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{what}: {}",
            reply.text()
        );
        assert_eq!(reply.json()["error"]["code"], -32700, "{what}");
    }
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabyte_bodies_get_413() {
    let running = Running::default().await;
    let ten_mb = 10 * 1024 * 1024;
    // Declared past the body limit plus the discard bound (2 + 8 MiB):
    // refused from Content-Length alone, before the body is read.
    let declared = 16 * 1024 * 1024;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    );
    let answer = raw_exchange(running.addr, head.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Chunked: refused once it grows past the limit while read.
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let writer = tokio::spawn(async move {
        let chunk = vec![b' '; 64 * 1024];
        let frame = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk,
            b"\r\n".to_vec(),
        ]
        .concat();
        for _ in 0..(ten_mb / (64 * 1024)) {
            if writer.write_all(&frame).await.is_err() {
                return None; // the server stopped reading
            }
        }
        let _ = writer.write_all(b"0\r\n\r\n").await;
        // Kept open: dropping it would half-close the connection, and the
        // server takes an end of input as the client gone.
        Some(writer)
    });
    let mut out = Vec::new();
    let read = tokio::time::timeout(SOON, reader.read_to_end(&mut out))
        .await
        .expect("closed in time");
    let answer = String::from_utf8_lossy(&out);
    assert!(answer.starts_with("HTTP/1.1 413"), "{read:?} {answer}");
    writer.abort();

    // Through the client too: the status is 413 whatever the transfer coding.
    let body = Bytes::from(vec![b' '; ten_mb]);
    let request = Request::post(&running.url).body(Full::new(body)).unwrap();
    if let Ok(Ok(response)) = tokio::time::timeout(SOON, h1_client().request(request)).await {
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    } // else: the connection was closed while the client still wrote (also fine).
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_get_431() {
    let running = Running::default().await;
    let big = "x".repeat(32 * 1024);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {big}\r\nContent-Length: 0\r\n\r\n"
    );
    let answer = raw_exchange(running.addr, head.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 431"),
        "{}",
        &answer[..answer.len().min(200)]
    );
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_over_its_rate_gets_429_with_retry_after_and_notifications_pass() {
    let rate = snodo::server::Rate::parse("2/10s").unwrap();
    let running = Running::start(HttpOptions::new().rate_per_caller(rate)).await;
    let client = h1_client();
    for _ in 0..2 {
        let reply = post(&client, &running.url, &list_headers(), LIST_OK).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    }
    let reply = post(&client, &running.url, &list_headers(), LIST_OK).await;
    assert_eq!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        reply.text()
    );
    let after: u64 = reply.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=5).contains(&after), "{after}");
    let body = reply.json();
    assert_eq!(body["id"], "list-1", "{body}");
    assert_eq!(body["error"]["code"], -31429, "{body}");
    assert_eq!(body["error"]["data"]["rate"], "2/10s", "{body}");
    let wait = body["error"]["data"]["retryAfter"].as_f64().unwrap();
    assert!(wait > 0.0 && wait <= 5.0, "{body}");
    // A notification is not a request: it passes.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "notifications/cancelled"),
    ];
    let reply = post(&client, &running.url, &headers, note).await;
    assert_ne!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        reply.text()
    );
    running.stop().await;
}

#[tokio::test]
async fn callers_with_a_principal_are_held_to_the_rate_each_by_subject() {
    use tower_service::Service as _;
    let rate = snodo::server::Rate::parse("1/10s").unwrap();
    let server = crate::server::server(&Default::default());
    let service = server.http_service_with(HttpOptions::new().rate_per_caller(rate));
    let ask = |subject: &str| {
        let mut request = Request::post("http://localhost/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in list_headers() {
            request = request.header(name, value);
        }
        let mut request = request
            .body(Full::new(Bytes::from_static(LIST_OK.as_bytes())))
            .unwrap();
        request
            .extensions_mut()
            .insert(snodo::Principal::new(subject));
        service.clone().call(request)
    };
    assert_eq!(ask("ada").await.unwrap().status(), StatusCode::OK);
    assert_eq!(ask("bob").await.unwrap().status(), StatusCode::OK);
    assert_eq!(
        ask("ada").await.unwrap().status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        ask("bob").await.unwrap().status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(ask("cy").await.unwrap().status(), StatusCode::OK);
}
