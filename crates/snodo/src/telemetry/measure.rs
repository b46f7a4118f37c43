//! What both sides do when a request's observation ends: the outcome on its
//! span, its duration in the side's histogram.

use std::sync::Arc;
use std::time::Instant;

use tracing::Span;

use super::attributes as attr;
use super::metrics::{Name, Series, Side};
use super::names::Names;
use super::outcome::Outcome;

/// A request's timer and the attributes its duration is recorded with.
pub(crate) struct Measure {
    start: Instant,
    series: Option<Series>,
}

impl Measure {
    /// Starts the timer at `start`. With `metrics`, the attributes both
    /// sides share are made now, from closed sets where the client could
    /// make them up.
    pub(crate) fn start(
        start: Instant,
        method: &str,
        version: &str,
        names: &Names<'_>,
        transport: Option<&'static str>,
        metrics: bool,
    ) -> Self {
        use crate::protocol::{Method, Revision};
        let series = metrics.then(|| Series {
            method: Method::parse(method).map_or(OTHER, Method::as_str),
            version: (!version.is_empty())
                .then(|| Revision::parse(version).map_or(OTHER, Revision::as_str)),
            tool: names.tool.map(Name::new),
            prompt: names.prompt.map(Name::new),
            transport,
            ..Series::default()
        });
        Self { start, series }
    }

    /// Records the HTTP version of the connection.
    pub(crate) fn http_version(&mut self, version: &'static str) {
        if let Some(s) = &mut self.series {
            s.http_version = Some(version);
        }
    }

    /// Records the server the client talks to.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn server(&mut self, host: &Arc<str>, port: u16) {
        if let Some(s) = &mut self.series {
            s.server = Some((Arc::clone(host), port));
        }
    }

    /// Records `outcome` on `span` and the duration up to `end` in `side`'s
    /// histogram.
    pub(crate) fn end(&mut self, span: &Span, outcome: &Outcome, side: Side, end: Instant) {
        let error_type = outcome.error_type(side == Side::Server);
        let status = outcome.status_code();
        if !span.is_disabled() {
            if let Some(kind) = &error_type {
                span.record(attr::ERROR_TYPE, tracing::field::display(kind));
                span.record("otel.status_code", "error");
                if let Outcome::Rpc { message, .. } = outcome {
                    span.record("otel.status_description", message.as_str());
                }
            }
            if let Some(code) = status {
                span.record(
                    attr::RPC_RESPONSE_STATUS_CODE,
                    tracing::field::display(code),
                );
            }
        }
        if let (Some(series), Some(recorder)) = (&mut self.series, super::metrics::recorder()) {
            if status.is_some_and(|c| super::outcome::CLIENT_FAULT_CODES.contains(&c)) {
                // A name the client made up (an unknown tool, say) would be
                // a new series for every request: it is not recorded.
                series.tool = None;
                series.prompt = None;
            }
            series.error_type = error_type;
            series.status = status;
            recorder.duration(
                side,
                series,
                end.saturating_duration_since(self.start).as_secs_f64(),
            );
        }
    }
}

/// The value of a closed-set attribute the client made up: a method or
/// revision it invents must not open a new series.
const OTHER: &str = "_OTHER";
