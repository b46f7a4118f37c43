//! OTLP export for [`snodo`] servers and clients: spans and the MCP
//! metrics over OTLP/HTTP, configured by the standard `OTEL_*` variables.
//!
//! [`init`] is one call for a binary: it installs a `tracing` subscriber that
//! writes log lines to stderr (filtered by `RUST_LOG`, `warn` by default)
//! and, when the environment asks for it, exports spans and metrics over
//! OTLP/HTTP. [`Exporter::from_env`] gives the same pieces to an application
//! that composes its own subscriber.
//!
//! Export is on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or the signal's own
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`) is set, or
//! `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` is `otlp`. It is off for
//! a signal whose `OTEL_*_EXPORTER` is `none`, and entirely with
//! `OTEL_SDK_DISABLED=true`. The rest is read as the specification defines
//! it: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (each with its
//! per-signal `…_TRACES_…`/`…_METRICS_…` form), `OTEL_TRACES_SAMPLER` and
//! `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_SCHEDULE_DELAY`,
//! `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` and
//! `OTEL_METRIC_EXPORT_INTERVAL`. The protocol is `http/protobuf` (another
//! `OTEL_EXPORTER_OTLP_PROTOCOL`, or a compression other than `none`, is
//! refused with an error naming the variable). Logs are not exported.
//!
//! The exporter is snodo's own, built for the request path: a span's
//! attributes are encoded into OTLP protobuf as `tracing` records them, a
//! closed span is a few appends to a batch, and the durations are
//! aggregated in process. Spans of any target at `INFO` and above are
//! exported; trace context crosses MCP through `_meta` (the layer keeps
//! W3C contexts itself). An application that runs the OpenTelemetry SDK
//! instead uses snodo's `otel` feature with `tracing-opentelemetry` and
//! `snodo::telemetry::register_metrics`. The exporter plugs into the seams
//! of `snodo::telemetry::export`.
//!
//! ```no_run
//! // In main, before serving; keep the guard until the end (it flushes).
//! let _telemetry = snodo_otlp::init("my-server").unwrap();
//! ```

mod aggregate;
mod config;
mod envelope;
mod error;
mod export;
mod http;
mod ids;
mod layer;
mod proto;
mod sampler;

use tracing_subscriber::Layer;
use tracing_subscriber::filter::{EnvFilter, LevelFilter, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use self::config::Config;
pub use self::error::ExportError;
use self::export::Worker;

/// The OTLP exporter of spans and metrics. Dropping it exports what is
/// left and stops its thread.
#[derive(Debug)]
pub struct Exporter {
    worker: Worker,
    traces: bool,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Exporter {
    /// The exporter the `OTEL_*` variables ask for, or `None` when they ask
    /// for none. `default_service` names the service when neither
    /// `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` does. When
    /// metrics are exported, this process's durations and gauges are
    /// recorded from now on.
    pub fn from_env(default_service: &str) -> Result<Option<Self>, ExportError> {
        match Config::read(&env, None, default_service)? {
            Some(config) => Self::start(config).map(Some),
            None => Ok(None),
        }
    }

    /// Exports spans and metrics to the OTLP/HTTP collector at `endpoint`
    /// (`http://127.0.0.1:4318`: `/v1/traces` and `/v1/metrics` are added),
    /// whatever the `OTEL_EXPORTER_OTLP_*ENDPOINT` variables say; the other
    /// `OTEL_*` variables still apply.
    pub fn to_endpoint(endpoint: &str, default_service: &str) -> Result<Self, ExportError> {
        let config = Config::read(&env, Some(endpoint), default_service)?
            .ok_or_else(|| ExportError::new("OTEL_SDK_DISABLED is true"))?;
        Self::start(config)
    }

    fn start(config: Config) -> Result<Self, ExportError> {
        let traces = config.traces.is_some();
        if config.metrics.is_some() {
            let aggregate = export::aggregate();
            snodo::telemetry::export::install_recorder(|| Box::new(aggregate));
        }
        let worker = Worker::start(config).map_err(|e| ExportError::caused(e.to_string(), e))?;
        Ok(Self { worker, traces })
    }

    /// The `tracing` layer that exports spans (at `INFO` and above), if
    /// spans are exported.
    pub fn layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync + 'static>>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        // Its own filter: spans up to `INFO` (and `enabled!` asking about
        // them), no events, so that `DEBUG` and `TRACE` callsites stay off
        // unless another layer wants them.
        let filter = filter_fn(|m| !m.is_event() && *m.level() <= tracing::Level::INFO)
            .with_max_level_hint(LevelFilter::INFO);
        self.traces.then(|| {
            layer::SpanLayer::<S>::new(self.worker.spans().clone())
                .with_filter(filter)
                .boxed()
        })
    }

    /// Exports what is buffered now, and returns once it was sent (or the
    /// export failed).
    pub fn flush(&self) {
        self.worker.flush();
    }

    /// How many spans were dropped because the queue
    /// (`OTEL_BSP_MAX_QUEUE_SIZE`) was full.
    pub fn dropped_spans(&self) -> u64 {
        self.worker.spans().dropped()
    }
}

/// The log filter of `RUST_LOG`, or `default` (e.g. `"warn"`) when it is
/// unset or invalid.
pub fn log_filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default))
}

/// Installs the global `tracing` subscriber: log lines on stderr filtered by
/// `RUST_LOG`, and the OTLP export the `OTEL_*` variables ask for. Keep the
/// returned exporter (if any) alive: dropping it flushes.
pub fn init(default_service: &str) -> Result<Option<Exporter>, ExportError> {
    let exporter = Exporter::from_env(default_service)?;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(log_filter("warn"));
    let otel = exporter.as_ref().and_then(|e| e.layer());
    tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init()
        .map_err(|e| ExportError::caused(e.to_string(), e))?;
    Ok(exporter)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tracing::Level;

    use super::config::{Batching, Target};
    use super::sampler::Sampler;
    use super::*;

    #[test]
    fn the_layer_wants_info_spans_only() {
        let exporter = Exporter::start(Config {
            traces: Some(Target {
                url: "http://127.0.0.1:9/v1/traces".into(),
                headers: Vec::new(),
                timeout: Duration::from_millis(100),
            }),
            metrics: None,
            sampler: Sampler::AlwaysOn,
            batching: Batching {
                delay: Duration::from_secs(60),
                max_queue: 16,
                max_batch: 16,
            },
            metric_interval: Duration::from_secs(60),
            resource: vec![("service.name".into(), "test".into())],
        })
        .unwrap();
        let subscriber = tracing_subscriber::registry().with(exporter.layer());
        tracing::subscriber::with_default(subscriber, || {
            assert!(tracing::enabled!(target: "snodo::server", Level::INFO));
            assert!(!tracing::info_span!("kept").is_disabled());
            assert!(tracing::debug_span!("skipped").is_disabled());
            assert!(!tracing::event_enabled!(Level::ERROR));
            assert!(!tracing::enabled!(Level::DEBUG));
        });
    }
}
