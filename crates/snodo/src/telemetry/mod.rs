//! Observability: spans, metrics and logs through [`tracing`], named by the
//! OpenTelemetry semantic conventions for MCP.
//!
//! - **Spans.** Every request a server serves is a span of target
//!   `snodo::server` (`otel.kind = server`), every request a client sends a
//!   span of target `snodo::client` (`otel.kind = client`), both at `INFO`
//!   and named `{mcp.method.name} {target}` (the tool or prompt name; a
//!   resource URI only with [`Capture::uri_in_span_name`]). Their fields are
//!   the conventions' attributes ([`attributes`]): `mcp.method.name`,
//!   `mcp.protocol.version`, `mcp.session.id` (initialize-era sessions only),
//!   `jsonrpc.request.id`, `gen_ai.tool.name`, `error.type` (the JSON-RPC
//!   code, or `tool_error` for a result with `isError: true`), the network
//!   attributes, and so on. On the server, -32700, -32600, -32601, -32602 and
//!   -32002 are the client's mistakes: they are recorded in
//!   `rpc.response.status_code`, not as errors.
//! - **Trace context** (with an exporter that keeps it, or the `otel`
//!   feature): the server continues the trace named by `traceparent`,
//!   `tracestate` and `baggage` in `params._meta` on every revision and the
//!   client writes them.
//! - **Metrics** (once an exporter installs its recorder, or with the `otel`
//!   feature): see [`metrics`](mod@metrics).
//! - **Logs** (events): the internal cause of an error at `ERROR`, with the
//!   request id (a handler's panic included); a request refused at `DEBUG`;
//!   a limit reached at `WARN`, summarized under a flood of refusals (target
//!   `snodo::limits`, see [`refusals`]).
//! - **The wire view**: see [`wire`].
//! - **Export**: the `snodo-otlp` crate, snodo's own exporter, sends the
//!   spans and metrics as OTLP over HTTP, configured by the standard
//!   `OTEL_*` variables; [`export`] holds the seams it plugs into.
//!
//! Arguments and results are recorded only when opted in ([`Capture`]); no
//! credential (an `Authorization` value, a token, a header other than the
//! session id the conventions ask for) is ever recorded. With no subscriber
//! installed the cost is a few relaxed loads per request.

pub mod attributes;
#[cfg(feature = "client")]
pub(crate) mod client;
pub(crate) mod clock;
pub(crate) mod context;
pub(crate) mod entered;
pub mod export;
pub(crate) mod measure;
pub mod metrics;
pub(crate) mod names;
pub(crate) mod outcome;
pub(crate) mod propagation;
pub mod refusals;
pub(crate) mod server;
pub(crate) mod text;
pub mod wire;

#[cfg(feature = "otel")]
pub use metrics::register as register_metrics;

/// What the spans may record beyond the defaults. Everything is off by
/// default: arguments and results may hold personal data, and a URI in a
/// span name makes names of unbounded cardinality.
///
/// ```
/// use snodo::telemetry::Capture;
/// let capture = Capture::new().arguments(true).uri_in_span_name(true);
/// assert!(capture.records_arguments());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capture {
    pub(crate) arguments: bool,
    pub(crate) results: bool,
    pub(crate) uri_in_span_name: bool,
}

impl Capture {
    /// Nothing beyond the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record a tool call's arguments (`gen_ai.tool.call.arguments`).
    pub fn arguments(mut self, on: bool) -> Self {
        self.arguments = on;
        self
    }

    /// Record every request's result object, as JSON, in
    /// `gen_ai.tool.call.result` (tool results and every other method's).
    pub fn results(mut self, on: bool) -> Self {
        self.results = on;
        self
    }

    /// Name resource spans `resources/read {uri}`.
    pub fn uri_in_span_name(mut self, on: bool) -> Self {
        self.uri_in_span_name = on;
        self
    }

    /// Whether arguments are recorded.
    pub fn records_arguments(&self) -> bool {
        self.arguments
    }

    /// Whether results are recorded.
    pub fn records_results(&self) -> bool {
        self.results
    }
}
