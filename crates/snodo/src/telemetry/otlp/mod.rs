//! OTLP export over HTTP, configured by the standard `OTEL_*` variables
//! (the `otlp` feature).
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
//! `OTEL_SDK_DISABLED=true`. The SDK reads the rest: `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or
//! `http/json`), `OTEL_EXPORTER_OTLP_TIMEOUT` (at most 10 s: the exporter's
//! HTTP client gives up then), `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*` and
//! `OTEL_METRIC_EXPORT_INTERVAL`. Logs are not exported.
//!
//! ```no_run
//! // In main, before serving; keep the guard until the end (it flushes).
//! let _telemetry = snodo::telemetry::otlp::init("my-server").unwrap();
//! ```

mod http;

use std::fmt;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{EnvFilter, LevelFilter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// Why export could not be set up.
#[derive(Debug)]
pub struct ExportError(String);

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenTelemetry export: {}", self.0)
    }
}

impl std::error::Error for ExportError {}

/// The OTLP exporters of spans and metrics. Dropping it flushes both and
/// shuts them down.
#[derive(Debug)]
pub struct Exporter {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether a signal is exported: not `none`, and either asked for by name
/// or given an endpoint.
fn wanted(exporter_var: &str, endpoint_var: &str) -> Result<bool, ExportError> {
    match env(exporter_var).as_deref().map(str::trim) {
        Some("none") => return Ok(false),
        Some("otlp") => return Ok(true),
        Some(other) => {
            return Err(ExportError(format!(
                "{exporter_var}={other} is not supported (otlp or none)"
            )));
        }
        None => {}
    }
    Ok(env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() || env(endpoint_var).is_some())
}

impl Exporter {
    /// The exporters the `OTEL_*` variables ask for, or `None` when they ask
    /// for none. `default_service` names the service when neither
    /// `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` does. Installs
    /// the W3C trace-context and baggage propagator, the global meter
    /// provider, and snodo's instruments ([`register_metrics`](super::register_metrics)).
    pub fn from_env(default_service: &str) -> Result<Option<Self>, ExportError> {
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let traces = wanted("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")?;
        let metrics = wanted(
            "OTEL_METRICS_EXPORTER",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        )?;
        if !traces && !metrics {
            return Ok(None);
        }
        Self::build(traces, metrics, None, default_service).map(Some)
    }

    /// Exports spans and metrics to the OTLP/HTTP collector at `endpoint`
    /// (`http://127.0.0.1:4318`: `/v1/traces` and `/v1/metrics` are added),
    /// whatever the `OTEL_EXPORTER_OTLP_*ENDPOINT` variables say; the other
    /// `OTEL_*` variables still apply.
    pub fn to_endpoint(endpoint: &str, default_service: &str) -> Result<Self, ExportError> {
        Self::build(
            true,
            true,
            Some(endpoint.trim_end_matches('/')),
            default_service,
        )
    }

    /// The signal's protocol: its own variable, else the generic one, else
    /// `http/protobuf`.
    fn protocol(signal_var: &str) -> Result<opentelemetry_otlp::Protocol, ExportError> {
        use opentelemetry_otlp::Protocol;
        match env(signal_var)
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .as_deref()
            .map(str::trim)
        {
            None | Some("http/protobuf") => Ok(Protocol::HttpBinary),
            Some("http/json") => Ok(Protocol::HttpJson),
            Some(other) => Err(ExportError(format!(
                "the OTLP protocol {other:?} is not supported (http/protobuf or http/json)"
            ))),
        }
    }

    fn build(
        traces: bool,
        metrics: bool,
        endpoint: Option<&str>,
        default_service: &str,
    ) -> Result<Self, ExportError> {
        let client = http::ExportClient::start().map_err(|e| ExportError(e.to_string()))?;
        let named = env("OTEL_SERVICE_NAME").is_some()
            || env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
        let mut resource = Resource::builder();
        if !named {
            resource = resource.with_service_name(default_service.to_owned());
        }
        let resource = resource.build();
        let tracer = if traces {
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Self::protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")?)
                .with_http_client(client.clone());
            if let Some(base) = endpoint {
                builder = builder.with_endpoint(format!("{base}/v1/traces"));
            }
            let exporter = builder.build().map_err(|e| ExportError(e.to_string()))?;
            Some(
                SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource.clone())
                    .build(),
            )
        } else {
            None
        };
        let meter = if metrics {
            let mut builder = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_protocol(Self::protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")?)
                .with_http_client(client);
            if let Some(base) = endpoint {
                builder = builder.with_endpoint(format!("{base}/v1/metrics"));
            }
            let exporter = builder.build().map_err(|e| ExportError(e.to_string()))?;
            let provider = SdkMeterProvider::builder()
                .with_periodic_exporter(exporter)
                .with_resource(resource)
                .build();
            opentelemetry::global::set_meter_provider(provider.clone());
            super::register_metrics();
            Some(provider)
        } else {
            None
        };
        opentelemetry::global::set_text_map_propagator(
            opentelemetry::propagation::TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]),
        );
        Ok(Self { tracer, meter })
    }

    /// The `tracing` layer that turns spans into exported OpenTelemetry
    /// spans (spans at `INFO` and above), if spans are exported.
    pub fn layer<S>(&self) -> Option<Box<dyn Layer<S> + Send + Sync + 'static>>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        let tracer = self.tracer.as_ref()?.tracer("snodo");
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                // The conventions' attributes only: no code location,
                // thread or busy/idle timings on every request span.
                .with_location(false)
                .with_threads(false)
                .with_tracked_inactivity(false)
                .with_target(false)
                .with_filter(LevelFilter::INFO)
                .boxed(),
        )
    }

    /// Exports what is buffered now.
    pub fn flush(&self) {
        if let Some(t) = &self.tracer {
            let _ = t.force_flush();
        }
        if let Some(m) = &self.meter {
            let _ = m.force_flush();
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if let Some(t) = self.tracer.take() {
            let _ = t.shutdown();
        }
        if let Some(m) = self.meter.take() {
            let _ = m.shutdown();
        }
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
        .map_err(|e| ExportError(e.to_string()))?;
    Ok(exporter)
}
