//! Answers and their statuses: 200 with JSON, the spec's error statuses with
//! the request's id, 202 for notifications, 405 and 404.

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use snodo::Server;
use snodo::transport::http::{HttpListener, HttpOptions};
use tokio::sync::oneshot;

use crate::clients::{CALL_OK, LIST_OK, call_headers, h1_client, list_headers, post, send};
use crate::server::Running;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_answers_200_application_json() {
    let running = Running::default().await;
    let client = h1_client();
    for _ in 0..3 {
        // Three requests over one keep-alive connection.
        let reply = post(
            &client,
            &running.url,
            &call_headers("forecast", Some("us-west1")),
            CALL_OK,
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(reply.headers["content-type"], "application/json");
        assert!(
            reply.headers.get("mcp-session-id").is_none(),
            "never mints a session"
        );
        let body = reply.json();
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], 1);
        assert_eq!(body["result"]["content"][0]["text"], "Sunny in us-west1");
    }
    let list = post(&client, &running.url, &list_headers(), LIST_OK).await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.json()["id"], "list-1");
    assert_eq!(
        list.json()["result"]["tools"].as_array().map(Vec::len),
        Some(3)
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_follow_the_spec_and_errors_echo_the_id() {
    struct Case {
        what: &'static str,
        headers: Vec<(&'static str, &'static str)>,
        body: &'static str,
        status: u16,
        code: i64,
        id: Value,
    }
    let cases = [
        Case {
            what: "missing _meta",
            headers: list_headers(),
            body: r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            status: 400,
            code: -32602,
            id: json!(2),
        },
        Case {
            what: "Mcp-Method does not match the body",
            headers: vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
            ],
            body: r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!(3),
        },
        Case {
            what: "missing MCP-Protocol-Version",
            headers: vec![("Mcp-Method", "tools/list")],
            body: r#"{"jsonrpc":"2.0","id":"v","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!("v"),
        },
        Case {
            what: "bad base64 inside the Mcp-Name sentinel",
            headers: call_headers("=?base64?not base64!?=", Some("us-west1")),
            body: r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!(4),
        },
        Case {
            what: "Mcp-Param-Region missing",
            headers: call_headers("forecast", None),
            body: r#"{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!("five"),
        },
        Case {
            what: "Mcp-Param-Region does not match",
            headers: call_headers("forecast", Some("eu-west1")),
            body: r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!(6),
        },
        Case {
            what: "unsupported protocol version",
            headers: vec![
                ("MCP-Protocol-Version", "2099-01-01"),
                ("Mcp-Method", "tools/list"),
            ],
            body: r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32022,
            id: json!(7),
        },
        Case {
            what: "unknown method",
            headers: vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/frobnicate"),
            ],
            body: r#"{"jsonrpc":"2.0","id":8,"method":"tools/frobnicate","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 404,
            code: -32601,
            id: json!(8),
        },
        Case {
            what: "removed method",
            headers: vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "ping"),
            ],
            body: r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 404,
            code: -32601,
            id: json!(9),
        },
        Case {
            what: "parse error",
            headers: list_headers(),
            body: r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"#,
            status: 400,
            code: -32700,
            id: Value::Null,
        },
        Case {
            what: "batch",
            headers: list_headers(),
            body: r#"[{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}]"#,
            status: 400,
            code: -32600,
            id: Value::Null,
        },
        Case {
            what: "unknown tool",
            headers: call_headers("nope", None),
            body: r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 200,
            code: -32602,
            id: json!(12),
        },
    ];
    let running = Running::default().await;
    let client = h1_client();
    for case in &cases {
        let reply = post(&client, &running.url, &case.headers, case.body).await;
        assert_eq!(
            reply.status.as_u16(),
            case.status,
            "{}: {}",
            case.what,
            reply.text()
        );
        assert_eq!(
            reply.headers["content-type"], "application/json",
            "{}",
            case.what
        );
        let body = reply.json();
        assert_eq!(body["error"]["code"], case.code, "{}: {body}", case.what);
        assert_eq!(
            body.get("id").cloned().unwrap_or(Value::Null),
            case.id,
            "{}: {body}",
            case.what
        );
        assert!(body.get("result").is_none(), "{}", case.what);
    }
    let unsupported = post(&client, &running.url, &cases[6].headers, cases[6].body)
        .await
        .json();
    assert_eq!(unsupported["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(
        unsupported["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_encoded_param_header_matches_the_decoded_body() {
    let running = Running::default().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"Hello, 世界"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = call_headers("forecast", Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
    let reply = post(&h1_client(), &running.url, &headers, body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "Sunny in Hello, 世界"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_get_202_and_an_empty_body() {
    let running = Running::default().await;
    let client = h1_client();
    let bodies = [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ];
    for body in bodies {
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "notifications/cancelled"),
        ];
        let reply = post(&client, &running.url, &headers, body).await;
        assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
        assert!(reply.body.is_empty());
        assert!(reply.headers.get("mcp-session-id").is_none());
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbs_other_than_post_get_and_delete_get_405() {
    let running = Running::default().await;
    let client = h1_client();
    // GET and DELETE belong to initialize-era sessions: an unknown one is 404.
    for method in [Method::GET, Method::DELETE] {
        let request = Request::builder()
            .method(method.clone())
            .uri(&running.url)
            .header("Mcp-Session-Id", "abc")
            .header("Last-Event-ID", "7")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&client, request).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{method}");
    }
    for method in [Method::PUT, Method::PATCH] {
        let request = Request::builder()
            .method(method.clone())
            .uri(&running.url)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&client, request).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.headers["allow"], "GET, POST, DELETE", "{method}");
    }
    running.assert_still_answers().await;
    running.stop().await;

    // A server of 2026-07-28 alone has no sessions: only POST.
    let modern = Server::builder("t", "1")
        .revisions([snodo::model::Revision::V2026_07_28])
        .build()
        .unwrap();
    let listener = HttpListener::bind(
        &modern,
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::default(),
    )
    .await
    .unwrap();
    let url = listener.url();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));
    for method in [Method::GET, Method::DELETE, Method::PUT] {
        let request = Request::builder()
            .method(method.clone())
            .uri(&url)
            .header("Mcp-Session-Id", "abc")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&client, request).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.headers["allow"], "POST", "{method}");
    }
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_path_gets_404() {
    let running = Running::default().await;
    let client = h1_client();
    for path in ["/", "/mcp/", "/mcpx", "/other/mcp"] {
        let url = format!("http://{}{path}", running.addr);
        let reply = post(&client, &url, &list_headers(), LIST_OK).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert!(reply.body.is_empty(), "{path}: {}", reply.text());
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_paths_go_to_their_handler_after_the_host_and_origin_checks() {
    let options = HttpOptions::new().other_paths(|request: Request<Bytes>| async move {
        let text = format!(
            "{} {} {}",
            request.method(),
            request.uri().path(),
            String::from_utf8_lossy(request.body())
        );
        let mut response = http::Response::new(snodo::transport::http::McpBody::full(text));
        *response.status_mut() = StatusCode::IM_A_TEAPOT;
        response
    });
    let running = Running::start(options).await;
    let client = h1_client();
    let base = running.url.trim_end_matches("/mcp").to_string();
    let get = Request::get(format!("{base}/livez"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let reply = send(&client, get).await;
    assert_eq!(reply.status, StatusCode::IM_A_TEAPOT);
    assert_eq!(reply.text(), "GET /livez ");
    let reply = post(&client, &format!("{base}/admin/approve"), &[], "kit.search").await;
    assert_eq!(reply.text(), "POST /admin/approve kit.search");
    let foreign = Request::post(format!("{base}/admin/approve"))
        .header("origin", "http://evil.example")
        .body(Full::new(Bytes::from_static(b"x")))
        .unwrap();
    assert_eq!(send(&client, foreign).await.status, StatusCode::FORBIDDEN);
    // The endpoint is MCP's as before.
    let reply = post(&client, &running.url, &list_headers(), LIST_OK).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    running.stop().await;
}
