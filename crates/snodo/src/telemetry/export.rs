//! The seams an exporter plugs into: what the `snodo-otlp` crate uses, open
//! to any other exporter or `tracing` layer.
//!
//! - **Metrics.** A [`Recorder`] installed once with [`install_recorder`]
//!   receives every request's duration with its [`Series`] of attributes,
//!   and every task run that ends; from then on the [`Gauge`]s are counted,
//!   for the exporter to read when it exports.
//! - **Trace context.** A `tracing` layer that keeps W3C trace contexts
//!   takes, as it sees a new span, the remote parent the server read from
//!   `params._meta` ([`take_remote_parent`]), and answers its `downcast_raw`
//!   for [`ContextHook`] so that the client can write the context of the
//!   span a request is sent in ([`inject`]). [`start_span`] is how the
//!   server creates a request's span with the remote parent waiting.
//! - **Times.** The server reads the clock once at each end of a request
//!   and offers that time to the span being created or closed:
//!   [`offered_or_now_ns`] takes it (or reads the clock), so that a span's
//!   times and the request's duration agree.
//!
//! ```
//! use snodo::telemetry::export::{Attr, Series};
//! let series = Series::new("tools/call").with_tool("add");
//! let mut seen = Vec::new();
//! series.each(|key, value| {
//!     if let Attr::Str(text) = value {
//!         seen.push((key, text.to_owned()));
//!     }
//! });
//! assert!(seen.contains(&("gen_ai.tool.name", "add".to_owned())));
//! ```

pub use super::clock::{now_ns, offered_or_now_ns};
pub use super::context::remote::take as take_remote_parent;
pub use super::context::{ContextHook, TraceContext};
pub use super::metrics::{
    Attr, DURATION_BUCKETS, Gauge, Recorder, Series, Side, install as install_recorder,
};
pub use super::propagation::{inject, start_span};
