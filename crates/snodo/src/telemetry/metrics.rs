//! The metrics: the conventions' `mcp.server.operation.duration` and
//! `mcp.client.operation.duration` histograms (seconds), and the gauges an
//! operator watches.
//!
//! | instrument | kind | what it counts |
//! |---|---|---|
//! | `mcp.server.operation.duration` | histogram (s) | every request served, with the span's attributes |
//! | `mcp.client.operation.duration` | histogram (s) | every request a [`Client`](crate::client::Client) sent |
//! | `snodo.server.active_requests` | gauge | requests being served in this process |
//! | `snodo.server.listen_streams` | gauge | open `subscriptions/listen` streams |
//! | `snodo.server.sessions` | gauge | initialize-era sessions held in this process |
//! | `snodo.server.tasks` | gauge | tasks running on this process (`mcp.task.status` = `working`) |
//! | `snodo.server.tasks.settled` | counter | task runs that ended, by `mcp.task.status` |
//!
//! They are recorded once a recorder is installed: an exporter's own (the
//! `snodo-otlp` crate's, or any [`Recorder`] given to
//! [`install_recorder`](super::export::install_recorder)), or the
//! `opentelemetry` API's instruments that `register` creates from the global
//! meter provider (the `otel` feature, for an application that sets up
//! OpenTelemetry itself). The first one installed stays. Before that nothing
//! is recorded and the gauges are not counted.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};

use super::outcome::ErrorType;

/// A gauge this crate keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gauge {
    /// Requests being served.
    ActiveRequests,
    /// Open listen streams.
    ListenStreams,
    /// Initialize-era sessions.
    Sessions,
    /// Tasks running here.
    Tasks,
}

static GAUGES: [AtomicI64; 4] = [
    AtomicI64::new(0),
    AtomicI64::new(0),
    AtomicI64::new(0),
    AtomicI64::new(0),
];

impl Gauge {
    /// Every gauge, with its instrument's name, description and unit.
    pub const ALL: &'static [(Gauge, &'static str, &'static str, &'static str)] = &[
        (
            Gauge::ActiveRequests,
            "snodo.server.active_requests",
            "Requests being served",
            "{item}",
        ),
        (
            Gauge::ListenStreams,
            "snodo.server.listen_streams",
            "Open subscriptions/listen streams",
            "{item}",
        ),
        (
            Gauge::Sessions,
            "snodo.server.sessions",
            "Initialize-era sessions held in this process",
            "{item}",
        ),
        (
            Gauge::Tasks,
            "snodo.server.tasks",
            "Tasks running in this process, by status",
            "{task}",
        ),
    ];

    fn cell(self) -> &'static AtomicI64 {
        &GAUGES[self as usize]
    }

    /// Counts one until the guard drops.
    #[inline]
    pub(crate) fn hold(self) -> Held {
        if recorder().is_some() {
            self.cell().fetch_add(1, Ordering::Relaxed);
            Held(Some(self))
        } else {
            Held(None)
        }
    }

    /// The current value (0 until a recorder is installed).
    pub fn get(self) -> i64 {
        self.cell().load(Ordering::Relaxed)
    }
}

/// One count of a [`Gauge`], released on drop.
#[derive(Debug)]
pub(crate) struct Held(Option<Gauge>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(g) = self.0 {
            g.cell().fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Which side observed a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The server that answered it.
    Server,
    /// The client that sent it.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    Client,
}

impl Side {
    /// The histogram's name and description (its unit is `s`).
    pub fn histogram(self) -> (&'static str, &'static str) {
        match self {
            Side::Server => (
                "mcp.server.operation.duration",
                "MCP request or notification duration as observed on the receiver",
            ),
            Side::Client => (
                "mcp.client.operation.duration",
                "MCP request duration as observed on the sender",
            ),
        }
    }
}

/// The bucket boundaries the conventions recommend for the operation
/// durations, in seconds.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The attributes of one duration series: closed sets and names the server
/// knows, never a value the client made up. An exporter reads them with
/// [`each`](Self::each) and may key its series by them (`Hash`, `Eq`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Series {
    /// `mcp.method.name` (`_OTHER` for an unknown method).
    pub(crate) method: &'static str,
    /// `mcp.protocol.version` (`_OTHER` for an unknown revision).
    pub(crate) version: Option<&'static str>,
    /// `gen_ai.tool.name` (and `gen_ai.operation.name = execute_tool`).
    pub(crate) tool: Option<Name>,
    /// `gen_ai.prompt.name`.
    pub(crate) prompt: Option<Name>,
    /// `network.transport` (and `network.protocol.name = http` over tcp).
    pub(crate) transport: Option<&'static str>,
    /// `network.protocol.version`.
    pub(crate) http_version: Option<&'static str>,
    /// `server.address` and `server.port` (the client's).
    pub(crate) server: Option<(Arc<str>, u16)>,
    /// `error.type`.
    pub(crate) error_type: Option<ErrorType>,
    /// `rpc.response.status_code`.
    pub(crate) status: Option<i64>,
}

impl Series {
    /// A series of `method` (`mcp.method.name`) and no other attribute.
    pub fn new(method: &'static str) -> Self {
        Self {
            method,
            ..Self::default()
        }
    }

    /// This series with `gen_ai.tool.name` set to `tool`.
    pub fn with_tool(mut self, tool: &str) -> Self {
        self.tool = Some(Name::new(tool));
        self
    }

    /// Each attribute, in a fixed order, with `visit`.
    pub fn each(&self, mut visit: impl FnMut(&'static str, Attr<'_>)) {
        use super::attributes as attr;
        visit(attr::MCP_METHOD_NAME, Attr::Str(self.method));
        if let Some(v) = self.version {
            visit(attr::MCP_PROTOCOL_VERSION, Attr::Str(v));
        }
        if let Some(t) = &self.tool {
            visit(attr::GEN_AI_TOOL_NAME, Attr::Str(t.as_str()));
            visit(attr::GEN_AI_OPERATION_NAME, Attr::Str(attr::EXECUTE_TOOL));
        }
        if let Some(p) = &self.prompt {
            visit(attr::GEN_AI_PROMPT_NAME, Attr::Str(p.as_str()));
        }
        if let Some(t) = self.transport {
            visit(attr::NETWORK_TRANSPORT, Attr::Str(t));
            if t == "tcp" {
                visit(attr::NETWORK_PROTOCOL_NAME, Attr::Str("http"));
            }
        }
        if let Some(v) = self.http_version {
            visit(attr::NETWORK_PROTOCOL_VERSION, Attr::Str(v));
        }
        if let Some((host, port)) = &self.server {
            visit(attr::SERVER_ADDRESS, Attr::Str(host));
            visit(attr::SERVER_PORT, Attr::Int(i64::from(*port)));
        }
        match self.error_type {
            Some(ErrorType::Named(name)) => visit(attr::ERROR_TYPE, Attr::Str(name)),
            Some(ErrorType::Code(code)) => visit(attr::ERROR_TYPE, Attr::Code(code)),
            None => {}
        }
        if let Some(code) = self.status {
            visit(attr::RPC_RESPONSE_STATUS_CODE, Attr::Code(code));
        }
    }
}

/// A tool or prompt name in a [`Series`]: kept inline up to
/// [`Name::INLINE`] bytes, so that measuring a request allocates nothing.
#[derive(Clone)]
pub(crate) enum Name {
    /// A short name: its length and bytes.
    Inline(u8, [u8; Name::INLINE]),
    /// A longer one.
    Heap(Box<str>),
}

impl Name {
    /// The longest name kept inline.
    pub(crate) const INLINE: usize = 46;

    pub(crate) fn new(name: &str) -> Self {
        if name.len() <= Self::INLINE {
            let mut bytes = [0; Self::INLINE];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            Name::Inline(name.len() as u8, bytes)
        } else {
            Name::Heap(name.into())
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            Name::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Name::Heap(name) => name.as_bytes(),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Inline bytes are always a whole `&str`'s.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Name {}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.as_bytes());
        state.write_u8(0xff);
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// One attribute value of a [`Series`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Attr<'a> {
    /// Text.
    Str(&'a str),
    /// A number.
    Int(i64),
    /// A JSON-RPC code, recorded as text (`error.type`,
    /// `rpc.response.status_code`).
    Code(i64),
}

/// Where the measurements go: an exporter's aggregation, installed once with
/// [`install_recorder`](super::export::install_recorder).
pub trait Recorder: Send + Sync + 'static {
    /// A request's duration in `side`'s histogram.
    fn duration(&self, side: Side, series: &Series, seconds: f64);
    /// A task run that ended in `status`.
    fn task_settled(&self, status: &'static str);
}

static RECORDER: OnceLock<Box<dyn Recorder>> = OnceLock::new();

/// Installs `recorder` unless one is installed already; whether it was
/// (`recorder` is called only then). From then on every request's duration
/// reaches it and the [`Gauge`]s are counted.
pub fn install(recorder: impl FnOnce() -> Box<dyn Recorder>) -> bool {
    let mut installed = false;
    RECORDER.get_or_init(|| {
        installed = true;
        recorder()
    });
    installed
}

/// The installed recorder.
#[inline]
pub(crate) fn recorder() -> Option<&'static dyn Recorder> {
    RECORDER.get().map(|r| &**r)
}

/// Counts a task run that ended in `status`.
#[inline]
pub(crate) fn task_settled(status: &'static str) {
    if let Some(r) = recorder() {
        r.task_settled(status);
    }
}

#[cfg(feature = "otel")]
mod instruments {
    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, Meter};

    use crate::telemetry::metrics::{Attr, DURATION_BUCKETS, Gauge, Recorder, Series, Side};

    /// The `opentelemetry` API's instruments.
    pub(super) struct Instruments {
        server_duration: Histogram<f64>,
        client_duration: Histogram<f64>,
        tasks_settled: Counter<u64>,
    }

    impl Recorder for Instruments {
        fn duration(&self, side: Side, series: &Series, seconds: f64) {
            let mut attrs = Vec::with_capacity(12);
            series.each(|key, value| {
                attrs.push(match value {
                    Attr::Str(s) => KeyValue::new(key, s.to_owned()),
                    Attr::Int(i) => KeyValue::new(key, i),
                    Attr::Code(c) => KeyValue::new(key, c.to_string()),
                })
            });
            let histogram = match side {
                Side::Server => &self.server_duration,
                Side::Client => &self.client_duration,
            };
            histogram.record(seconds, &attrs);
        }

        fn task_settled(&self, status: &'static str) {
            self.tasks_settled
                .add(1, &[KeyValue::new("mcp.task.status", status)]);
        }
    }

    pub(super) fn build(meter: &Meter) -> Instruments {
        for &(gauge, name, description, unit) in Gauge::ALL {
            let attrs: &'static [KeyValue] = if gauge == Gauge::Tasks {
                Box::leak(Box::new([KeyValue::new("mcp.task.status", "working")]))
            } else {
                &[]
            };
            let _ = meter
                .i64_observable_gauge(name)
                .with_description(description)
                .with_unit(unit)
                .with_callback(move |observer| observer.observe(gauge.get(), attrs))
                .build();
        }
        let histogram = |side: Side| {
            let (name, description) = side.histogram();
            meter
                .f64_histogram(name)
                .with_description(description)
                .with_unit("s")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        Instruments {
            server_duration: histogram(Side::Server),
            client_duration: histogram(Side::Client),
            tasks_settled: meter
                .u64_counter("snodo.server.tasks.settled")
                .with_description("Task runs that ended, by the status they ended in")
                .with_unit("{task}")
                .build(),
        }
    }
}

/// Creates the instruments from the global meter provider (scope `snodo`)
/// and records into them. Call it once the provider is installed; later
/// calls, or calls after the OTLP exporter installed its own recorder, do
/// nothing.
///
/// ```
/// # #[cfg(feature = "otel")] {
/// // After opentelemetry::global::set_meter_provider(...):
/// snodo::telemetry::register_metrics();
/// # }
/// ```
#[cfg(feature = "otel")]
pub fn register() {
    install(|| {
        let meter = opentelemetry::global::meter_with_scope(
            opentelemetry::InstrumentationScope::builder("snodo")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        );
        Box::new(instruments::build(&meter))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_and_hash_by_their_text_inline_or_not() {
        use std::hash::{BuildHasher, RandomState};
        let state = RandomState::new();
        let short = "é".repeat(23);
        let long = "é".repeat(24);
        for text in ["", "echo", short.as_str(), long.as_str()] {
            let (a, b) = (Name::new(text), Name::new(text));
            assert_eq!(a.as_str(), text);
            assert_eq!(a, b);
            assert_eq!(state.hash_one(&a), state.hash_one(&b));
            assert_eq!(format!("{a:?}"), format!("{text:?}"));
        }
        assert!(matches!(Name::new(&short), Name::Inline(46, _)));
        assert!(matches!(Name::new(&long), Name::Heap(_)));
        assert_ne!(Name::new("add"), Name::new("add2"));
    }
}
