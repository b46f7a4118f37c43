//! The server under test: its tools, and a listener on a loopback port.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use http::StatusCode;
use serde_json::{Value, json};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Arguments, CallResult, Context, Server, Tool, ToolResult};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::SOON;
use crate::clients::{CALL_OK, call_headers, h1_client, post};

/// A tool whose `region` argument is mirrored into `Mcp-Param-Region`.
struct Forecast;

impl Tool for Forecast {
    fn name(&self) -> &str {
        "forecast"
    }
    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"]
        })
    }
    async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
        Ok(ToolResult::text(format!(
            "Sunny in {}",
            args.str("region")?
        )))
    }
}

/// Counts how many calls run at once, and which were cancelled.
#[derive(Default)]
pub(crate) struct Gauge {
    pub(crate) now: AtomicUsize,
    pub(crate) max: AtomicUsize,
    pub(crate) cancelled: AtomicBool,
}

/// Sleeps `ms` milliseconds (default 20) while counted by the gauge.
struct Slow(Arc<Gauge>);

impl Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}})
    }
    async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
        let ms = args.i64("ms").unwrap_or(20) as u64;
        let n = self.0.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.max.fetch_max(n, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.0.now.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolResult::text("done"))
    }
}

/// Never finishes (after one progress notification, when the caller asked
/// for progress); notes when its request's signal fires.
struct Hang(Arc<Gauge>);

impl Tool for Hang {
    fn name(&self) -> &str {
        "hang"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _args: Arguments, cx: Context) -> CallResult {
        let gauge = Arc::clone(&self.0);
        let signal = cx.cancellation().clone();
        tokio::spawn(async move {
            signal.cancelled().await;
            gauge.cancelled.store(true, Ordering::SeqCst);
        });
        if cx.wants_progress() {
            let _ = cx.progress(0.0, None, Some("started")).await;
        }
        std::future::pending::<()>().await;
        Ok(ToolResult::text("unreachable"))
    }
}

pub(crate) fn server(gauge: &Arc<Gauge>) -> Server {
    Server::builder("t", "1")
        .tool(Forecast)
        .tool(Slow(Arc::clone(gauge)))
        .tool(Hang(Arc::clone(gauge)))
        .build()
        .expect("the test server builds")
}

/// A listener on 127.0.0.1:0 that stops when dropped or stopped.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) url: String,
    pub(crate) gauge: Arc<Gauge>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl Running {
    pub(crate) async fn start(options: HttpOptions) -> Running {
        let gauge = Arc::new(Gauge::default());
        let listener = HttpListener::bind(&server(&gauge), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr();
        let url = listener.url();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(listener.run(async {
            let _ = stopped.await;
        }));
        Running {
            addr,
            url,
            gauge,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub(crate) async fn default() -> Running {
        Running::start(HttpOptions::new()).await
    }

    /// Stops the listener and waits for `run` to return.
    pub(crate) async fn stop(mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let task = self.task.take().unwrap();
        let out = tokio::time::timeout(SOON, task)
            .await
            .expect("run returns after shutdown");
        out.expect("run did not panic").expect("run returns Ok");
    }

    /// One well-formed `tools/call` over a fresh HTTP/1.1 client.
    pub(crate) async fn assert_still_answers(&self) {
        let reply = post(
            &h1_client(),
            &self.url,
            &call_headers("forecast", Some("us-west1")),
            CALL_OK,
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(
            reply.json()["result"]["content"][0]["text"],
            "Sunny in us-west1"
        );
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
    }
}
