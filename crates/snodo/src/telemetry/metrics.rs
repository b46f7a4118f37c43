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
//! The instruments exist once [`register`] ran (the OTLP installer calls
//! it; an application that sets up OpenTelemetry itself calls it after
//! installing its meter provider). Before that, and without the `otel`
//! feature, nothing is recorded and the gauges are not counted.

use std::sync::atomic::{AtomicI64, Ordering};

/// A gauge this crate keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gauge {
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
    fn cell(self) -> &'static AtomicI64 {
        &GAUGES[self as usize]
    }

    /// Counts one until the guard drops.
    #[inline]
    pub(crate) fn hold(self) -> Held {
        if registered() {
            self.cell().fetch_add(1, Ordering::Relaxed);
            Held(Some(self))
        } else {
            Held(None)
        }
    }

    /// The current value.
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) fn get(self) -> i64 {
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

#[cfg(feature = "otel")]
pub(crate) use instruments::instruments;

#[cfg(feature = "otel")]
mod instruments {
    use std::sync::OnceLock;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, Meter};

    use crate::telemetry::metrics::Gauge;

    /// The bucket boundaries the conventions recommend for the operation
    /// durations, in seconds.
    pub(crate) const DURATION_BUCKETS: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];

    /// The instruments, once registered.
    #[derive(Debug)]
    pub(crate) struct Instruments {
        pub(crate) server_duration: Histogram<f64>,
        #[cfg_attr(not(feature = "client"), allow(dead_code))]
        pub(crate) client_duration: Histogram<f64>,
        pub(crate) tasks_settled: Counter<u64>,
    }

    pub(super) static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

    /// The instruments, if [`register`](crate::telemetry::metrics::register) ran.
    #[inline]
    pub(crate) fn instruments() -> Option<&'static Instruments> {
        INSTRUMENTS.get()
    }

    pub(super) fn build(meter: &Meter) -> Instruments {
        for (name, gauge, description) in [
            (
                "snodo.server.active_requests",
                Gauge::ActiveRequests,
                "Requests being served",
            ),
            (
                "snodo.server.listen_streams",
                Gauge::ListenStreams,
                "Open subscriptions/listen streams",
            ),
            (
                "snodo.server.sessions",
                Gauge::Sessions,
                "Initialize-era sessions held in this process",
            ),
        ] {
            let _ = meter
                .i64_observable_gauge(name)
                .with_description(description)
                .with_unit("{item}")
                .with_callback(move |observer| observer.observe(gauge.get(), &[]))
                .build();
        }
        let _ = meter
            .i64_observable_gauge("snodo.server.tasks")
            .with_description("Tasks running in this process, by status")
            .with_unit("{task}")
            .with_callback(|observer| {
                observer.observe(
                    Gauge::Tasks.get(),
                    &[KeyValue::new("mcp.task.status", "working")],
                )
            })
            .build();
        Instruments {
            server_duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_description(
                    "MCP request or notification duration as observed on the receiver",
                )
                .with_unit("s")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            client_duration: meter
                .f64_histogram("mcp.client.operation.duration")
                .with_description("MCP request duration as observed on the sender")
                .with_unit("s")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            tasks_settled: meter
                .u64_counter("snodo.server.tasks.settled")
                .with_description("Task runs that ended, by the status they ended in")
                .with_unit("{task}")
                .build(),
        }
    }
}

/// Creates the instruments from the global meter provider (scope `snodo`).
/// Call it once the provider is installed; later calls do nothing.
///
/// ```
/// # #[cfg(feature = "otel")] {
/// // After opentelemetry::global::set_meter_provider(...):
/// snodo::telemetry::register_metrics();
/// # }
/// ```
#[cfg(feature = "otel")]
pub fn register() {
    instruments::INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter_with_scope(
            opentelemetry::InstrumentationScope::builder("snodo")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        );
        instruments::build(&meter)
    });
}

#[inline]
fn registered() -> bool {
    #[cfg(feature = "otel")]
    {
        instruments::INSTRUMENTS.get().is_some()
    }
    #[cfg(not(feature = "otel"))]
    {
        false
    }
}

/// Counts a task run that ended in `status`.
#[inline]
pub(crate) fn task_settled(status: &'static str) {
    #[cfg(feature = "otel")]
    if let Some(i) = instruments() {
        i.tasks_settled.add(
            1,
            &[opentelemetry::KeyValue::new("mcp.task.status", status)],
        );
    }
    #[cfg(not(feature = "otel"))]
    let _ = status;
}
