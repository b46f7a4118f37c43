//! What the command writes about itself: log lines on stderr (`RUST_LOG`),
//! the wire view (`-v` frames, `-vv` frames and HTTP headers, credentials
//! redacted by the library), and the OTLP export the `OTEL_*` variables ask
//! for. A client's log lines and wire view quote servers: they are escaped
//! ([`crate::escape`]).

use std::fmt::Write as _;
use std::io::Write as _;

use snodo_otlp::{self as otlp, Exporter};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use crate::escape;

/// How log lines look.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogStyle {
    /// The standard `tracing` format with timestamps (servers).
    Server,
    /// `warning: …` lines (client commands).
    Client,
}

/// Installs the subscriber; the returned exporter flushes when dropped.
pub(crate) fn init(service: &str, verbose: u8, style: LogStyle) -> Option<Exporter> {
    let exporter = match Exporter::from_env(service) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("snodo: {e}");
            None
        }
    };
    let logs = match style {
        // A server's -v raises its own log level (when RUST_LOG is unset).
        LogStyle::Server => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(otlp::log_filter(match verbose {
                0 => "warn",
                1 => "warn,snodo=debug",
                _ => "warn,snodo=trace",
            }))
            .boxed(),
        LogStyle::Client => Lines.with_filter(otlp::log_filter("warn")).boxed(),
    };
    let wire = (verbose > 0).then(|| {
        let level = if verbose > 1 {
            Level::TRACE
        } else {
            Level::DEBUG
        };
        WireView.with_filter(Targets::new().with_target(snodo::telemetry::wire::TARGET, level))
    });
    let otel = exporter.as_ref().and_then(|e| e.layer());
    let installed = tracing_subscriber::registry()
        .with(logs)
        .with(wire)
        .with(otel)
        .try_init();
    if let Err(e) = installed {
        eprintln!("snodo: cannot install the log subscriber: {e}");
    }
    exporter
}

/// Collects an event's fields.
#[derive(Default)]
struct Fields {
    message: String,
    direction: String,
    head: String,
    frame: String,
    headers: String,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "direction" => self.direction = value.to_owned(),
            "head" => self.head = value.to_owned(),
            _ => self.record_debug(field, &value),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "frame" => self.frame = format!("{value:?}"),
            "headers" => self.headers = format!("{value:?}"),
            "direction" | "transport" | "head" => {}
            name => {
                let _ = write!(self.rest, " {name}={value:?}");
            }
        }
    }
}

/// Prints `snodo::wire` events: `> frame` for what was sent, `< frame` for
/// what was received, headers indented under their request or status line.
struct WireView;

impl<S: Subscriber> Layer<S> for WireView {
    fn on_event(&self, event: &Event<'_>, _cx: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let arrow = if f.direction == "send" { '>' } else { '<' };
        let mut out = String::new();
        if !f.head.is_empty() {
            let _ = writeln!(out, "{arrow} {}", escape::line(&f.head));
            for line in f.headers.lines() {
                let _ = writeln!(out, "{arrow}   {}", escape::line(line));
            }
        } else {
            let _ = writeln!(out, "{arrow} {}", escape::block(&f.frame));
        }
        let _ = std::io::stderr().lock().write_all(out.as_bytes());
    }
}

/// Prints log events as `warning: …` / `error: …` lines.
struct Lines;

impl<S: Subscriber> Layer<S> for Lines {
    fn on_event(&self, event: &Event<'_>, _cx: Context<'_, S>) {
        if event.metadata().target() == snodo::telemetry::wire::TARGET {
            return;
        }
        let mut f = Fields::default();
        event.record(&mut f);
        let level = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            Level::INFO => "info",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        };
        let text = format!("{}{}", f.message, f.rest);
        eprintln!("{level}: {}", escape::line(&text));
    }
}
