//! The OpenTelemetry export, received over OTLP/HTTP on loopback and decoded
//! with the official protobuf definitions (`opentelemetry-proto`): the
//! client spans of this process are the parents of the server spans of a
//! `snodo demo` child, over stdio and over Streamable HTTP, with the
//! conventions' names, kinds and attributes, and the duration histograms.

#![allow(unreachable_pub)]

mod support;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric};
use opentelemetry_proto::tonic::trace::v1::{Span, span, status};
use prost::Message as _;
use serde_json::json;
use snodo::client::{Client, ListenFilter, StdioCommand};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// A secret that must appear in no exported byte.
const SECRET: &str = "sekrit-7f3a";

/// What the collector received.
#[derive(Default)]
struct Received {
    spans: Vec<(String, Span)>,
    metrics: Vec<Metric>,
    raw: Vec<Bytes>,
}

/// An OTLP/HTTP (protobuf) collector on 127.0.0.1.
async fn collector() -> (SocketAddr, Arc<Mutex<Received>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let received = Arc::new(Mutex::new(Received::default()));
    let store = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let store = store.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let store = store.clone();
                    async move {
                        let path = req.uri().path().to_string();
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let mut r = store.lock().unwrap_or_else(|p| p.into_inner());
                        r.raw.push(body.clone());
                        match path.as_str() {
                            "/v1/traces" => {
                                let export = ExportTraceServiceRequest::decode(body)
                                    .expect("a protobuf ExportTraceServiceRequest");
                                for rs in export.resource_spans {
                                    let service = rs
                                        .resource
                                        .as_ref()
                                        .and_then(|r| attr(&r.attributes, "service.name"))
                                        .unwrap_or_default();
                                    for ss in rs.scope_spans {
                                        for s in ss.spans {
                                            r.spans.push((service.clone(), s));
                                        }
                                    }
                                }
                            }
                            "/v1/metrics" => {
                                let export = ExportMetricsServiceRequest::decode(body)
                                    .expect("a protobuf ExportMetricsServiceRequest");
                                for rm in export.resource_metrics {
                                    for sm in rm.scope_metrics {
                                        r.metrics.extend(sm.metrics);
                                    }
                                }
                            }
                            other => panic!("unexpected OTLP path {other}"),
                        }
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, received)
}

fn text(v: &AnyValue) -> Option<String> {
    match v.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        any_value::Value::BoolValue(b) => Some(b.to_string()),
        any_value::Value::DoubleValue(d) => Some(d.to_string()),
        _ => None,
    }
}

fn attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(text)
}

fn attrs(span: &Span) -> HashMap<String, String> {
    span.attributes
        .iter()
        .filter_map(|kv| Some((kv.key.clone(), text(kv.value.as_ref()?)?)))
        .collect()
}

/// The demo's environment: export to the collector, quickly.
fn demo_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.to_string()),
        ("OTEL_SERVICE_NAME", "demo-under-test".to_string()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "300".to_string()),
    ]
}

/// Waits until `check` holds for what was received (at most 20 s).
async fn until(received: &Arc<Mutex<Received>>, what: &str, check: impl Fn(&Received) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if check(&received.lock().unwrap()) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not received within 20 s: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The server span of `service` named `name` (the last one), and the client
/// span that is its parent.
fn pair(r: &Received, name: &str) -> Option<(Span, Span)> {
    let server = r
        .spans
        .iter()
        .rev()
        .find(|(svc, s)| {
            svc == "demo-under-test" && s.name == name && s.kind == span::SpanKind::Server as i32
        })?
        .1
        .clone();
    let client = r
        .spans
        .iter()
        .find(|(svc, s)| {
            svc == "telemetry-test"
                && s.span_id == server.parent_span_id
                && s.trace_id == server.trace_id
        })?
        .1
        .clone();
    Some((server, client))
}

/// The demo's span named `name` served over `transport`.
fn served_over(r: &Received, name: &str, transport: &str) -> Span {
    r.spans
        .iter()
        .find(|(svc, s)| {
            svc == "demo-under-test"
                && s.name == name
                && attrs(s).get("network.transport").map(String::as_str) == Some(transport)
        })
        .unwrap_or_else(|| panic!("no {name} span over {transport}"))
        .1
        .clone()
}

fn status_code(s: &Span) -> i32 {
    s.status.as_ref().map(|st| st.code).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_histograms_cross_stdio_and_http() {
    let (addr, received) = collector().await;
    let endpoint = format!("http://{addr}");
    let exporter = snodo_otlp::Exporter::to_endpoint(&endpoint, "telemetry-test").unwrap();
    tracing_subscriber::registry()
        .with(exporter.layer())
        .try_init()
        .unwrap();

    // Over stdio.
    let mut cmd = StdioCommand::new(env!("CARGO_BIN_EXE_snodo"), ["demo", "--stdio"]);
    for (k, v) in demo_env(&endpoint) {
        cmd = cmd.env(k, v);
    }
    let client = Client::builder().connect(cmd).await.unwrap();
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(!sum.is_error());
    let missing = client
        .call_tool("lookup", json!({"word": SECRET}))
        .await
        .unwrap();
    assert!(
        missing.is_error(),
        "lookup of an unknown word is an isError result"
    );
    let unknown = client.call_tool("no_such_tool", json!({})).await;
    assert!(unknown.is_err());
    client.read_resource("demo://readme").await.unwrap();
    client
        .get_prompt("introduce", json!({"name": "Ada"}))
        .await
        .unwrap();
    let listen = client.listen(ListenFilter::new().tools()).await.unwrap();
    drop(listen);
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.close().await;

    // Over Streamable HTTP, with a bearer header that must not be exported.
    let (mut child, url) = support::spawn_demo_with(&[], |command| {
        command
            .env("RUST_LOG", "snodo=trace")
            .envs(demo_env(&endpoint))
            .stderr(std::process::Stdio::piped());
    })
    .await;
    let port = url.parse::<http::Uri>().unwrap().port_u16().unwrap();
    let http = Client::builder()
        .header("authorization", &format!("Bearer {SECRET}"))
        .connect(url.as_str())
        .await
        .unwrap();
    http.call_tool("add", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    let missing = http.call_tool("missing", json!({"x": SECRET})).await;
    assert!(missing.is_err(), "{missing:?}");
    http.close().await;
    // An initialize-era session.
    let legacy = Client::builder()
        .protocol_version("2025-11-25")
        .connect(url.as_str())
        .await
        .unwrap();
    legacy
        .call_tool("greet", json!({"name": SECRET}))
        .await
        .unwrap();
    legacy.close().await;
    exporter.flush();

    until(&received, "the stdio tools/call add pair", |r| {
        pair(r, "tools/call add").is_some()
    })
    .await;
    until(&received, "every server span with its client parent", |r| {
        [
            "tools/call lookup",
            "tools/call no_such_tool",
            "resources/read",
            "prompts/get introduce",
            "subscriptions/listen",
            "tools/call greet",
        ]
        .iter()
        .all(|n| pair(r, n).is_some())
            && r.spans
                .iter()
                .filter(|(_, s)| s.name == "tools/call add")
                .count()
                >= 4
    })
    .await;
    child.start_kill().unwrap();
    let logs = {
        use tokio::io::AsyncReadExt;
        let mut text = String::new();
        let mut stderr = child.stderr.take().unwrap();
        let _ =
            tokio::time::timeout(Duration::from_secs(10), stderr.read_to_string(&mut text)).await;
        text
    };
    assert!(
        logs.contains("request refused"),
        "the demo logs at RUST_LOG=snodo=trace: {logs}"
    );
    assert!(!logs.contains(SECRET), "a secret reached the log lines");

    {
        let r = received.lock().unwrap();
        // A successful call over stdio.
        let stdio_add = served_over(&r, "tools/call add", "pipe");
        if std::env::var_os("SNODO_SHOW_EXPORT").is_some() {
            let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            let mut sorted: Vec<_> = attrs(&stdio_add).into_iter().collect();
            sorted.sort();
            eprintln!(
                "name={:?} kind={} trace_id={} span_id={} parent_span_id={} duration_ns={}\nattributes={sorted:?}",
                stdio_add.name,
                stdio_add.kind,
                hex(&stdio_add.trace_id),
                hex(&stdio_add.span_id),
                hex(&stdio_add.parent_span_id),
                stdio_add.end_time_unix_nano - stdio_add.start_time_unix_nano,
            );
        }
        let a = attrs(&stdio_add);
        assert_eq!(a["mcp.method.name"], "tools/call");
        assert_eq!(a["gen_ai.tool.name"], "add");
        assert_eq!(a["gen_ai.operation.name"], "execute_tool");
        assert_eq!(a["mcp.protocol.version"], "2026-07-28");
        assert_eq!(a["jsonrpc.protocol.version"], "2.0");
        assert!(a.contains_key("jsonrpc.request.id"), "{a:?}");
        assert!(
            !a.contains_key("mcp.session.id"),
            "no session on 2026-07-28"
        );
        assert!(!a.contains_key("error.type"));
        assert!(
            !a.contains_key("gen_ai.tool.call.arguments"),
            "arguments are opt-in"
        );
        assert_eq!(stdio_add.kind, span::SpanKind::Server as i32);
        let parent = r
            .spans
            .iter()
            .find(|(_, s)| s.span_id == stdio_add.parent_span_id)
            .expect("the client span is exported")
            .1
            .clone();
        assert_eq!(parent.kind, span::SpanKind::Client as i32);
        assert_eq!(parent.name, "tools/call add");
        assert_eq!(attrs(&parent)["network.transport"], "pipe");
        assert_eq!(parent.trace_id, stdio_add.trace_id);

        // isError: tool_error on both sides, an error status.
        let (server, client) = pair(&r, "tools/call lookup").unwrap();
        assert_eq!(attrs(&server)["error.type"], "tool_error");
        assert_eq!(attrs(&client)["error.type"], "tool_error");
        assert_eq!(status_code(&server), status::StatusCode::Error as i32);

        // An unknown tool: the client's mistake, not the server's error.
        let (server, client) = pair(&r, "tools/call no_such_tool").unwrap();
        let sa = attrs(&server);
        assert_eq!(sa["rpc.response.status_code"], "-32602");
        assert!(!sa.contains_key("error.type"), "{sa:?}");
        assert_ne!(status_code(&server), status::StatusCode::Error as i32);
        assert_eq!(attrs(&client)["error.type"], "-32602");
        assert_eq!(status_code(&client), status::StatusCode::Error as i32);

        // A read, a prompt, a listen.
        let (server, _) = pair(&r, "resources/read").unwrap();
        assert_eq!(attrs(&server)["mcp.resource.uri"], "demo://readme");
        let (server, _) = pair(&r, "prompts/get introduce").unwrap();
        assert_eq!(attrs(&server)["gen_ai.prompt.name"], "introduce");
        let (server, client) = pair(&r, "subscriptions/listen").unwrap();
        assert_eq!(attrs(&server)["mcp.method.name"], "subscriptions/listen");
        assert_eq!(client.kind, span::SpanKind::Client as i32);

        // Over HTTP: the network attributes.
        let http_add = served_over(&r, "tools/call add", "tcp");
        let h = attrs(&http_add);
        assert_eq!(h["network.protocol.name"], "http");
        assert_eq!(h["network.protocol.version"], "1.1");
        assert_eq!(h["client.address"], "127.0.0.1");
        assert_eq!(h["server.port"], port.to_string());
        let client = r
            .spans
            .iter()
            .find(|(_, s)| s.span_id == http_add.parent_span_id && s.trace_id == http_add.trace_id)
            .expect("the HTTP client span is the parent")
            .1
            .clone();
        assert_eq!(attrs(&client)["server.port"], port.to_string());

        // The initialize-era session: its id and revision on both sides.
        let (server, client) = pair(&r, "tools/call greet").unwrap();
        let ga = attrs(&server);
        assert_eq!(ga["mcp.protocol.version"], "2025-11-25");
        assert!(ga["mcp.session.id"].len() >= 16, "{ga:?}");
        assert_eq!(attrs(&client)["mcp.session.id"], ga["mcp.session.id"]);
        assert!(
            r.spans
                .iter()
                .any(|(svc, s)| svc == "demo-under-test" && s.name == "initialize"),
            "the initialize request has its span"
        );
    }
    // The duration histograms.
    until(&received, "both duration histograms", |r| {
        [
            "mcp.server.operation.duration",
            "mcp.client.operation.duration",
        ]
        .iter()
        .all(|n| r.metrics.iter().any(|m| m.name == *n))
    })
    .await;
    let r = received.lock().unwrap();
    let server_hist = r
        .metrics
        .iter()
        .rev()
        .find(|m| m.name == "mcp.server.operation.duration")
        .unwrap();
    assert_eq!(server_hist.unit, "s");
    let Some(metric::Data::Histogram(h)) = &server_hist.data else {
        panic!("a histogram: {server_hist:?}")
    };
    let add = h
        .data_points
        .iter()
        .find(|p| {
            attr(&p.attributes, "mcp.method.name").as_deref() == Some("tools/call")
                && attr(&p.attributes, "gen_ai.tool.name").as_deref() == Some("add")
        })
        .expect("a data point for tools/call add");
    assert!(add.count >= 1);
    assert!(add.explicit_bounds.contains(&0.01) && add.explicit_bounds.contains(&300.0));
    let tool_error = h
        .data_points
        .iter()
        .any(|p| attr(&p.attributes, "error.type").as_deref() == Some("tool_error"));
    assert!(tool_error, "the isError call is counted with error.type");

    // The gauges are exported beside the histograms.
    for gauge in [
        "snodo.server.active_requests",
        "snodo.server.listen_streams",
        "snodo.server.sessions",
        "snodo.server.tasks",
    ] {
        assert!(
            r.metrics.iter().any(|m| m.name == gauge),
            "the gauge {gauge} is exported"
        );
    }
    // No exported byte carries the bearer token or an argument.
    for body in &r.raw {
        let hay = String::from_utf8_lossy(body);
        assert!(!hay.contains(SECRET), "a secret was exported");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_view_shows_frames_and_headers_and_redacts_credentials() {
    let (mut child, url) = support::spawn_demo(&[]).await;
    let run = |flag: &'static str| {
        let url = url.clone();
        async move {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_snodo"))
                .args([flag, "call", &url, "add", "a=2", "b=40", "--token", SECRET])
                .output()
                .await
                .unwrap()
        }
    };
    let out = run("-v").await;
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("> {\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"server/discover\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("< {") && stderr.contains("\"method\":\"tools/call\""),
        "{stderr}"
    );
    assert!(!stderr.contains("POST "), "-v shows no headers: {stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "{\"sum\":42}");
    let out = run("-vv").await;
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("> POST {url}")), "{stderr}");
    assert!(
        stderr.contains(">   authorization: Bearer [redacted]"),
        "{stderr}"
    );
    assert!(stderr.contains(">   mcp-method: tools/call"), "{stderr}");
    assert!(stderr.contains("< HTTP/1.1 200 OK"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    child.start_kill().unwrap();
}

/// What `snodo demo --stdio ARGS...` writes on stderr while it refuses a
/// call of a tool it does not have (logged at debug level), with `RUST_LOG`
/// as given (unset when `None`).
async fn demo_stderr(args: &[&str], rust_log: Option<&str>) -> String {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_snodo"));
    command
        .args(["demo", "--stdio"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    if let Some(filter) = rust_log {
        command.env("RUST_LOG", filter);
    }
    let mut child = command.spawn().expect("the demo starts");
    let mut stdin = child.stdin.take().unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "no-such-tool",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }});
    stdin
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    let mut answer = String::new();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap());
    tokio::time::timeout(Duration::from_secs(10), stdout.read_line(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    assert!(answer.contains("-32602"), "{answer}");
    drop(stdin);
    let mut stderr = String::new();
    let mut pipe = child.stderr.take().unwrap();
    tokio::time::timeout(Duration::from_secs(10), pipe.read_to_string(&mut stderr))
        .await
        .expect("the demo exits at the end of its input")
        .unwrap();
    stderr
}

/// Whether `stderr` holds the debug line of snodo's server refusing the
/// call.
fn snodo_debug(stderr: &str) -> bool {
    stderr.lines().any(|l| {
        l.contains("DEBUG")
            && l.contains("snodo::server")
            && l.contains("request refused: Unknown tool: no-such-tool")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_v_raises_snodos_log_level_to_debug_when_rust_log_is_unset() {
    let quiet = demo_stderr(&[], None).await;
    assert!(!snodo_debug(&quiet), "{quiet}");
    let verbose = demo_stderr(&["-v"], None).await;
    assert!(snodo_debug(&verbose), "{verbose}");
    // RUST_LOG, when set, decides alone.
    let told = demo_stderr(&["-v"], Some("warn")).await;
    assert!(!snodo_debug(&told), "{told}");
}

/// `hex` as bytes.
fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_continues_the_callers_trace_to_its_backend() {
    let (addr, received) = collector().await;
    let endpoint = format!("http://{addr}");
    let env = |service: &str| {
        let mut env = demo_env(&endpoint);
        env[1].1 = service.to_string();
        env
    };
    let (_backend, backend_url) = support::spawn_demo_with(&[], |command| {
        command.envs(env("backend-under-test"));
    })
    .await;
    let dir = support::fresh_dir("gateway-trace");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!("[backends.demo]\nurl = \"{backend_url}\"\n"),
    )
    .unwrap();
    let (_gateway, url) = support::spawn_proxy_with(&[], &config, |command| {
        command.envs(env("gateway-under-test"));
    })
    .await;

    // The caller's trace, as a 2026-07-28 client names it in `_meta`.
    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let client = Client::http(&url).await.unwrap();
    let sum = client
        .call_tool("demo.add", json!({"a": 20, "b": 22}))
        .options(
            snodo::client::RequestOptions::new()
                .meta("traceparent", json!(format!("00-{trace}-{parent}-01"))),
        )
        .await
        .unwrap();
    assert!(!sum.is_error());
    let in_trace = |r: &Received, service: &str, kind: span::SpanKind| {
        r.spans
            .iter()
            .filter(|(svc, s)| {
                svc == service && s.kind == kind as i32 && s.name.starts_with("tools/call")
            })
            .map(|(_, s)| s.clone())
            .collect::<Vec<Span>>()
    };
    until(&received, "the spans of the call on both hops", |r| {
        !in_trace(r, "backend-under-test", span::SpanKind::Server).is_empty()
            && !in_trace(r, "gateway-under-test", span::SpanKind::Client).is_empty()
    })
    .await;
    let r = received.lock().unwrap();
    // The gateway's server span continues the caller's trace, ...
    let front = in_trace(&r, "gateway-under-test", span::SpanKind::Server);
    let front = front
        .iter()
        .find(|s| s.name == "tools/call demo.add")
        .expect("the gateway's server span");
    // (the caller is this test's literal parent, or this process's own
    // client span when another test installed an exporter here)
    let callers_span = front.parent_span_id == unhex(parent)
        || r.spans
            .iter()
            .any(|(svc, s)| svc == "telemetry-test" && s.span_id == front.parent_span_id);
    assert!(callers_span, "{front:?}");
    if front.parent_span_id == unhex(parent) {
        assert_eq!(front.trace_id, unhex(trace));
    }
    // ... its client span to the backend is a child of it, ...
    let hop = in_trace(&r, "gateway-under-test", span::SpanKind::Client);
    let hop = hop
        .iter()
        .find(|s| s.parent_span_id == front.span_id)
        .expect("the gateway's client span under its server span");
    assert_eq!(hop.trace_id, front.trace_id);
    assert_eq!(hop.name, "tools/call add");
    // ... and the backend's server span a child of that.
    let back = in_trace(&r, "backend-under-test", span::SpanKind::Server);
    let back = back
        .iter()
        .find(|s| s.parent_span_id == hop.span_id)
        .expect("the backend's server span under the gateway's client span");
    assert_eq!(back.trace_id, front.trace_id);
    assert_eq!(back.name, "tools/call add");
    drop(r);
    let _ = std::fs::remove_dir_all(&dir);
}
