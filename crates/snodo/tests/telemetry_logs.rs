//! The log lines an operator gets through `tracing`: an internal error's
//! cause and a handler's panic at ERROR with the request id (and never in
//! the response), a refused request at DEBUG, a limit reached at WARN.

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use snodo::prelude::*;
use tracing_subscriber::fmt::MakeWriter;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[snodo::tool(description = "Panics", input_schema = {"type": "object"})]
async fn explode(_args: Arguments) -> CallResult {
    panic!("the flux capacitor broke")
}

#[snodo::tool(description = "Fails inside", input_schema = {"type": "object"})]
async fn store(_args: Arguments) -> CallResult {
    Err(snodo::Error::internal("Storage failed")
        .with_cause("disk volume-7 is full")
        .into())
}

/// Log lines at `level` and above captured on this thread, and a
/// current-thread runtime that runs there.
fn capture(
    level: tracing::Level,
) -> (
    Captured,
    tracing::subscriber::DefaultGuard,
    tokio::runtime::Runtime,
) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_max_level(level)
        .with_ansi(false)
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    (captured, guard, runtime)
}

fn request(id: u64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn causes_panics_refusals_and_limits_are_logged() {
    let (captured, _guard, runtime) = capture(tracing::Level::DEBUG);
    let server = Server::builder("logs", "1.0.0")
        .tool(explode)
        .tool(store)
        .build()
        .unwrap();
    runtime.block_on(async {
        let out = server
            .dispatch_value(request(
                71,
                "tools/call",
                json!({"name": "explode", "arguments": {}}),
            ))
            .await
            .unwrap();
        assert_eq!(out["error"]["code"], -32603, "{out}");
        assert!(
            !out.to_string().contains("flux"),
            "the panic stays out of the reply: {out}"
        );
        let out = server
            .dispatch_value(request(
                72,
                "tools/call",
                json!({"name": "store", "arguments": {}}),
            ))
            .await
            .unwrap();
        assert_eq!(out["error"]["message"], "Storage failed");
        assert!(!out.to_string().contains("disk"), "{out}");
        let out = server
            .dispatch_value(request(
                73,
                "tools/call",
                json!({"name": "nope", "arguments": {}}),
            ))
            .await
            .unwrap();
        assert_eq!(out["error"]["code"], -32602);
    });
    let logs = captured.text();
    let line = |needle: &str| {
        logs.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{logs}"))
            .to_string()
    };
    let panic = line("the flux capacitor broke");
    assert!(
        panic.contains("ERROR") && panic.contains("request_id=71"),
        "{panic}"
    );
    let cause = line("disk volume-7 is full");
    assert!(
        cause.contains("ERROR") && cause.contains("request_id=72"),
        "{cause}"
    );
    let refused = line("request refused");
    assert!(
        refused.contains("DEBUG") && refused.contains("request_id=73"),
        "{refused}"
    );
}

#[test]
fn a_line_over_the_limit_is_a_warning() {
    let (captured, _guard, runtime) = capture(tracing::Level::WARN);
    let server = Server::builder("limits", "1.0.0").build().unwrap();
    runtime.block_on(async {
        let (mut client, server_side) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_side);
        let options = snodo::transport::stdio::StdioOptions::new().max_line_bytes(64);
        let serving = tokio::spawn(async move { server.serve_lines(read, write, options).await });
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let long = format!("{}\n", "x".repeat(200));
        client.write_all(long.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 256];
        let n = client.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).contains("-32600"));
        drop(client);
        let _ = serving.await;
    });
    let logs = captured.text();
    assert!(
        logs.lines().any(|l| l.contains("WARN")
            && l.contains("limit reached")
            && l.contains("max_line=64")),
        "{logs}"
    );
}
