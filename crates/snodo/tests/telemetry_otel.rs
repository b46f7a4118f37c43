//! The `otel` feature under the OpenTelemetry SDK, set up as an application
//! would: the W3C trace-context propagator, `tracing-opentelemetry`'s layer
//! and a meter provider, all global, with in-memory exporters. The server
//! continues the trace named by `traceparent` in `params._meta` (on both
//! eras), an in-process client's span is the parent of the server's, and
//! `register_metrics` records the duration histograms, the gauges and the
//! settled-task counter.
#![cfg(all(feature = "otel", feature = "client"))]

use std::sync::OnceLock;

use opentelemetry::global;
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use snodo::client::Client;
use snodo::prelude::*;
use snodo::prompt::{Prompt, PromptMessage, PromptResult};
use snodo::task::TaskSupport;
use snodo::tool::from_fn;
use snodo::{Dispatched, TransportInfo};
use tracing_subscriber::layer::SubscriberExt;

/// The SDK this process runs, set up once.
struct Otel {
    spans: InMemorySpanExporter,
    tracer_provider: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
    /// The tests share the exporters: one at a time.
    turn: tokio::sync::Mutex<()>,
}

fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        global::set_text_map_propagator(TraceContextPropagator::new());
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let tracer = tracer_provider.tracer("telemetry-otel-tests");
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer)),
        )
        .expect("the only subscriber");
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        global::set_meter_provider(meter_provider.clone());
        snodo::telemetry::register_metrics();
        Otel {
            spans,
            tracer_provider,
            metrics,
            meter_provider,
            turn: tokio::sync::Mutex::new(()),
        }
    })
}

impl Otel {
    /// This test's turn, with the spans exported so far forgotten.
    async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        let turn = self.turn.lock().await;
        self.spans.reset();
        turn
    }

    /// The spans ended so far.
    fn spans(&self) -> Vec<SpanData> {
        self.tracer_provider.force_flush().unwrap();
        self.spans.get_finished_spans().unwrap()
    }

    /// The one span named `name`.
    fn span(&self, name: &str) -> SpanData {
        let mut found: Vec<SpanData> = self
            .spans()
            .into_iter()
            .filter(|s| s.name == name)
            .collect();
        assert_eq!(found.len(), 1, "one span {name}");
        found.remove(0)
    }

    /// The metrics collected now.
    fn metrics(&self) -> Vec<ResourceMetrics> {
        self.meter_provider.force_flush().unwrap();
        self.metrics.get_finished_metrics().unwrap()
    }
}

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "b7ad6b7169203331";

fn server() -> Server {
    Server::builder("otel", "1.0.0")
        .tool(
            from_fn("echo", |args: Arguments, _| async move {
                Ok(ToolResult::text(args.str("text")?.to_string()))
            })
            .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
        )
        .tool(
            from_fn("later", |_, _| async { Ok(ToolResult::text("done")) })
                .task_support(TaskSupport::Required),
        )
        .build()
        .unwrap()
}

async fn dispatch(server: &Server, text: &str) -> Value {
    match server
        .dispatch(text.as_bytes(), TransportInfo::default())
        .await
    {
        Dispatched::Reply(reply) => serde_json::from_slice(&reply.body).unwrap(),
        other => panic!("expected one reply, got {other:?}"),
    }
}

#[tokio::test]
async fn the_server_span_continues_the_trace_named_in_meta() {
    let otel = otel();
    let _turn = otel.turn().await;
    let server = server();
    let reply = dispatch(
        &server,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{},
            "traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#,
    )
    .await;
    assert_eq!(reply["result"]["content"][0]["text"], "hi", "{reply}");
    let span = otel.span("tools/call echo");
    assert_eq!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT).unwrap());
    assert!(span.parent_span_is_remote);
    assert!(span.span_context.is_sampled());
}

#[tokio::test]
async fn without_a_traceparent_the_server_span_starts_a_trace() {
    let otel = otel();
    let _turn = otel.turn().await;
    let server = server();
    dispatch(
        &server,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    )
    .await;
    let span = otel.span("tools/call echo");
    assert_ne!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(span.parent_span_id, SpanId::INVALID, "a root span");
}

#[tokio::test]
async fn an_initialize_era_server_span_continues_the_trace_named_in_meta() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let otel = otel();
    let _turn = otel.turn().await;
    let server = server();
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server_side);
    tokio::spawn(async move {
        server
            .serve_lines(
                server_in,
                server_out,
                snodo::transport::StdioOptions::default(),
            )
            .await
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let text = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#,
        "\n",
    );
    write.write_all(text.as_bytes()).await.unwrap();
    for _ in 0..2 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(5), lines.next_line())
            .await
            .expect("an answer within 5 s")
            .unwrap()
            .unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
    }
    let span = otel.span("tools/call echo");
    assert_eq!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT).unwrap());
}

#[tokio::test]
async fn an_in_process_clients_span_is_the_parent_of_the_servers() {
    let otel = otel();
    let _turn = otel.turn().await;
    let client = Client::connect(server()).await.unwrap();
    let result = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "hi");
    let spans = otel.spans();
    let side = |kind: &str| -> &SpanData {
        let found: Vec<&SpanData> = spans
            .iter()
            .filter(|s| s.name == "tools/call echo" && s.span_kind == kind_of(kind))
            .collect();
        assert_eq!(found.len(), 1, "one {kind} span in {spans:?}");
        found[0]
    };
    let (client_span, server_span) = (side("client"), side("server"));
    assert_eq!(
        server_span.span_context.trace_id(),
        client_span.span_context.trace_id()
    );
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id()
    );
}

fn kind_of(kind: &str) -> opentelemetry::trace::SpanKind {
    match kind {
        "client" => opentelemetry::trace::SpanKind::Client,
        _ => opentelemetry::trace::SpanKind::Server,
    }
}

/// The metric `name` among `collected`, the last collection that has it.
fn metric<'a>(collected: &'a [ResourceMetrics], name: &str) -> Option<&'a AggregatedMetrics> {
    collected
        .iter()
        .rev()
        .flat_map(|r| r.scope_metrics())
        .filter(|s| s.scope().name() == "snodo")
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
        .map(|m| m.data())
}

#[tokio::test]
async fn register_metrics_records_the_durations_the_gauges_and_settled_tasks() {
    let otel = otel();
    let _turn = otel.turn().await;
    let server = server();
    for id in 1..=3 {
        dispatch(
            &server,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},
                "_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
            ),
        )
        .await;
    }
    // And one task, run to its end.
    let created = dispatch(
        &server,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"later",
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#,
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_string();
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{{"taskId":"{task}",
        "_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}}}}}"#
    );
    let mut status = Value::Null;
    for _ in 0..250 {
        status = dispatch(&server, &get).await["result"]["status"].clone();
        if status == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(status, "completed");
    let collected = otel.metrics();
    let Some(AggregatedMetrics::F64(MetricData::Histogram(durations))) =
        metric(&collected, "mcp.server.operation.duration")
    else {
        panic!("no server duration histogram in {collected:?}");
    };
    // The series of these calls (other tests add theirs).
    let series = |p: &&opentelemetry_sdk::metrics::data::HistogramDataPoint<f64>| {
        let has = |key: &str, value: &str| {
            p.attributes()
                .any(|kv| kv.key.as_str() == key && kv.value.as_str() == value)
        };
        has("gen_ai.tool.name", "echo")
            && has("mcp.method.name", "tools/call")
            && has("mcp.protocol.version", "2026-07-28")
    };
    let echo: Vec<_> = durations.data_points().filter(series).collect();
    assert!(!echo.is_empty(), "a series for echo in {durations:?}");
    assert!(echo.iter().map(|p| p.count()).sum::<u64>() >= 3);
    assert_eq!(
        echo[0].bounds().collect::<Vec<_>>(),
        [
            0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0
        ],
        "the conventions' buckets"
    );
    for gauge in [
        "snodo.server.active_requests",
        "snodo.server.listen_streams",
        "snodo.server.sessions",
        "snodo.server.tasks",
    ] {
        assert!(
            matches!(
                metric(&collected, gauge),
                Some(AggregatedMetrics::I64(MetricData::Gauge(_)))
            ),
            "the gauge {gauge} in {collected:?}"
        );
    }
    let Some(AggregatedMetrics::U64(MetricData::Sum(settled))) =
        metric(&collected, "snodo.server.tasks.settled")
    else {
        panic!("no settled-task counter in {collected:?}");
    };
    let completed: u64 = settled
        .data_points()
        .filter(|p| {
            p.attributes()
                .any(|kv| kv.key.as_str() == "mcp.task.status" && kv.value.as_str() == "completed")
        })
        .map(|p| p.value())
        .sum();
    assert!(completed >= 1, "{settled:?}");
}

/// A prompt, so that `prompts/get` of a name nobody registered is the
/// client's mistake (-32602) rather than an unknown method.
struct Hello;

impl Prompt for Hello {
    fn name(&self) -> &str {
        "hello"
    }
    async fn get(
        &self,
        _args: snodo::prompt::PromptArguments,
        _cx: Context,
    ) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new([PromptMessage::user_text("Hello")]))
    }
}

#[tokio::test]
async fn names_the_client_made_up_are_not_metric_attributes() {
    let otel = otel();
    let _turn = otel.turn().await;
    let server = Server::builder("otel", "1.0.0")
        .tool(from_fn("echo", |_, _| async { Ok(ToolResult::text("hi")) }))
        .prompt(Hello)
        .build()
        .unwrap();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let made_up = [
        (
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"made-up/method","params":{{{meta}}}}}"#),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"1999-made-up","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_string(),
            -32022,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{{meta},"name":"made-up-tool"}}}}"#),
            -32602,
        ),
        (
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{{{meta},"name":"made-up-prompt"}}}}"#),
            -32602,
        ),
    ];
    for (request, code) in &made_up {
        let reply = dispatch(&server, request).await;
        assert_eq!(reply["error"]["code"], *code, "{reply}");
    }
    let collected = otel.metrics();
    let Some(AggregatedMetrics::F64(MetricData::Histogram(durations))) =
        metric(&collected, "mcp.server.operation.duration")
    else {
        panic!("no server duration histogram in {collected:?}");
    };
    let points: Vec<Vec<(String, String)>> = durations
        .data_points()
        .map(|p| {
            p.attributes()
                .map(|kv| (kv.key.to_string(), kv.value.as_str().into_owned()))
                .collect()
        })
        .collect();
    for point in &points {
        assert!(
            point.iter().all(|(_, value)| !value.contains("made-up")),
            "a made-up name became an attribute: {point:?}"
        );
    }
    let has = |point: &[(String, String)], key: &str, value: &str| {
        point.iter().any(|(k, v)| k == key && v == value)
    };
    let find = |method: &str, version: &str, status: &str| {
        points
            .iter()
            .find(|p| {
                has(p, "mcp.method.name", method)
                    && has(p, "mcp.protocol.version", version)
                    && has(p, "rpc.response.status_code", status)
            })
            .unwrap_or_else(|| panic!("no series {method} {version} {status} in {points:?}"))
    };
    find("_OTHER", "2026-07-28", "-32601");
    let revision = find("tools/call", "_OTHER", "-32022");
    assert!(
        !revision.iter().any(|(k, _)| k.starts_with("gen_ai.")),
        "{revision:?}"
    );
    for (method, name) in [
        ("tools/call", "gen_ai.tool.name"),
        ("prompts/get", "gen_ai.prompt.name"),
    ] {
        let point = find(method, "2026-07-28", "-32602");
        assert!(
            !point.iter().any(|(k, _)| k == name),
            "{name} left out: {point:?}"
        );
    }
}
