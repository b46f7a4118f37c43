//! What a proxy counts of its forwarded requests, per backend and method,
//! and its report of each backend: for dashboards (Prometheus text) and
//! an admin surface (a typed status).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// The upper bounds of the duration histogram's buckets, in seconds.
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A limit that refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Refusal {
    Rate,
    Breaker,
}

#[derive(Debug, Default, Clone)]
struct Counters {
    requests: u64,
    errors: u64,
    /// Per bucket (the last one is `+Inf`), not cumulative.
    buckets: [u64; BUCKETS.len() + 1],
    seconds: f64,
}

impl Tables {
    /// The counters of each backend and method, in that order.
    fn each_call(&self) -> impl Iterator<Item = ((&str, &str), &Counters)> {
        self.calls.iter().flat_map(|(backend, methods)| {
            methods
                .iter()
                .map(move |(method, c)| ((backend.as_str(), *method), c))
        })
    }
}

#[derive(Debug, Default)]
struct Tables {
    /// By backend, then method (found without building a key).
    calls: BTreeMap<String, BTreeMap<&'static str, Counters>>,
    refusals: BTreeMap<(String, Refusal), u64>,
    withdrawals: BTreeMap<String, u64>,
}

/// A proxy's counters, and where its audit lines go.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    tables: Mutex<Tables>,
    audit: std::sync::RwLock<Option<super::audit::Audit>>,
}

impl Stats {
    fn lock(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a forwarded request that took `took` and failed or not.
    pub(crate) fn request(
        &self,
        backend: &str,
        method: &'static str,
        took: Duration,
        failed: bool,
    ) {
        let secs = took.as_secs_f64();
        let mut tables = self.lock();
        let methods = match tables.calls.get_mut(backend) {
            Some(methods) => methods,
            None => tables.calls.entry(backend.to_owned()).or_default(),
        };
        let counters = methods.entry(method).or_default();
        counters.requests += 1;
        counters.errors += u64::from(failed);
        counters.seconds += secs;
        let bucket = BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BUCKETS.len());
        counters.buckets[bucket] += 1;
    }

    /// Sets where audit lines go.
    pub(crate) fn set_audit(&self, audit: Option<super::audit::Audit>) {
        *self.audit.write().unwrap_or_else(|e| e.into_inner()) = audit;
    }

    /// The audit log, if one is kept.
    pub(crate) fn audit(&self) -> Option<super::audit::Audit> {
        self.audit.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Counts a request a limit refused.
    pub(crate) fn refused(&self, backend: &str, why: Refusal) {
        *self
            .lock()
            .refusals
            .entry((backend.to_owned(), why))
            .or_default() += 1;
    }

    /// Counts definitions withdrawn because their pins changed.
    pub(crate) fn withdrawn(&self, backend: &str, count: usize) {
        *self
            .lock()
            .withdrawals
            .entry(backend.to_owned())
            .or_default() += count as u64;
    }

    /// The counters as Prometheus text, the gauges of `backends` after.
    pub(crate) fn render(&self, backends: &[BackendStatus]) -> String {
        let tables = self.lock();
        let mut out = String::new();
        let label = |s: &str| {
            s.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n")
        };
        out.push_str("# HELP snodo_proxy_requests_total Requests forwarded to a backend.\n");
        out.push_str("# TYPE snodo_proxy_requests_total counter\n");
        for ((backend, method), c) in tables.each_call() {
            let _ = writeln!(
                out,
                "snodo_proxy_requests_total{{backend=\"{}\",method=\"{method}\"}} {}",
                label(backend),
                c.requests
            );
        }
        out.push_str(
            "# HELP snodo_proxy_errors_total Forwarded requests answered with a JSON-RPC error.\n",
        );
        out.push_str("# TYPE snodo_proxy_errors_total counter\n");
        for ((backend, method), c) in tables.each_call() {
            let _ = writeln!(
                out,
                "snodo_proxy_errors_total{{backend=\"{}\",method=\"{method}\"}} {}",
                label(backend),
                c.errors
            );
        }
        out.push_str(
            "# HELP snodo_proxy_request_duration_seconds How long forwarded requests took.\n",
        );
        out.push_str("# TYPE snodo_proxy_request_duration_seconds histogram\n");
        for ((backend, method), c) in tables.each_call() {
            let labels = format!("backend=\"{}\",method=\"{method}\"", label(backend));
            let mut cumulative = 0;
            for (i, bound) in BUCKETS.iter().enumerate() {
                cumulative += c.buckets[i];
                let _ = writeln!(
                    out,
                    "snodo_proxy_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            cumulative += c.buckets[BUCKETS.len()];
            let _ = writeln!(
                out,
                "snodo_proxy_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {cumulative}"
            );
            let _ = writeln!(
                out,
                "snodo_proxy_request_duration_seconds_sum{{{labels}}} {}",
                c.seconds
            );
            let _ = writeln!(
                out,
                "snodo_proxy_request_duration_seconds_count{{{labels}}} {}",
                c.requests
            );
        }
        out.push_str(
            "# HELP snodo_proxy_limiter_rejections_total Requests refused by a backend's rate or open breaker.\n",
        );
        out.push_str("# TYPE snodo_proxy_limiter_rejections_total counter\n");
        for ((backend, why), n) in &tables.refusals {
            let limit = match why {
                Refusal::Rate => "rate",
                Refusal::Breaker => "breaker",
            };
            let _ = writeln!(
                out,
                "snodo_proxy_limiter_rejections_total{{backend=\"{}\",limit=\"{limit}\"}} {n}",
                label(backend)
            );
        }
        out.push_str(
            "# HELP snodo_proxy_pinned_withdrawals_total Definitions withdrawn because they changed from their pins.\n",
        );
        out.push_str("# TYPE snodo_proxy_pinned_withdrawals_total counter\n");
        for (backend, n) in &tables.withdrawals {
            let _ = writeln!(
                out,
                "snodo_proxy_pinned_withdrawals_total{{backend=\"{}\"}} {n}",
                label(backend)
            );
        }
        drop(tables);
        out.push_str("# HELP snodo_proxy_backend_up Whether a backend's components are served.\n");
        out.push_str("# TYPE snodo_proxy_backend_up gauge\n");
        for b in backends {
            let _ = writeln!(
                out,
                "snodo_proxy_backend_up{{backend=\"{}\"}} {}",
                label(&b.id),
                u8::from(b.withdrawn.is_none())
            );
        }
        out.push_str(
            "# HELP snodo_proxy_breaker_state A backend's circuit breaker: 0 closed, 1 open, 2 half-open.\n",
        );
        out.push_str("# TYPE snodo_proxy_breaker_state gauge\n");
        for b in backends {
            let state = match b.breaker {
                Some("open") => 1,
                Some("half-open") => 2,
                Some(_) => 0,
                None => continue,
            };
            let _ = writeln!(
                out,
                "snodo_proxy_breaker_state{{backend=\"{}\"}} {state}",
                label(&b.id)
            );
        }
        out.push_str(
            "# HELP snodo_proxy_caller_servers The servers a backend started per caller runs now.\n",
        );
        out.push_str("# TYPE snodo_proxy_caller_servers gauge\n");
        for b in backends {
            if let Some(n) = b.callers {
                let _ = writeln!(
                    out,
                    "snodo_proxy_caller_servers{{backend=\"{}\"}} {n}",
                    label(&b.id)
                );
            }
        }
        out
    }
}

/// One backend as a proxy reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackendStatus {
    /// Its id.
    pub id: String,
    /// The protocol revision its client speaks.
    pub revision: String,
    /// Its tools, resources (and templates) and prompts served now.
    pub tools: usize,
    /// Resources and resource templates served now.
    pub resources: usize,
    /// Prompts served now.
    pub prompts: usize,
    /// Why its components are withdrawn, if they are.
    pub withdrawn: Option<String>,
    /// Its circuit breaker's state (`closed`, `open`, `half-open`), if it
    /// has one.
    pub breaker: Option<&'static str>,
    /// Its limits, as [`BackendLimits::describe`](super::BackendLimits::describe) says them.
    pub limits: String,
    /// The definitions withdrawn because they changed from their pins
    /// (keys, as [`PinStore::pending`](super::PinStore::pending) names them).
    pub pending: Vec<String>,
    /// How many callers' servers run, for a backend started per caller
    /// ([`Proxy::per_caller`](super::Proxy::per_caller)).
    pub callers: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_as_prometheus_text() {
        let stats = Stats::default();
        stats.request("docs", "tools/call", Duration::from_millis(3), false);
        stats.request("docs", "tools/call", Duration::from_millis(30), true);
        stats.refused("docs", Refusal::Rate);
        stats.withdrawn("docs", 2);
        let text = stats.render(&[BackendStatus {
            id: "docs".into(),
            revision: "2026-07-28".into(),
            tools: 1,
            resources: 0,
            prompts: 0,
            withdrawn: None,
            breaker: Some("open"),
            limits: String::new(),
            pending: Vec::new(),
            callers: Some(3),
        }]);
        // Each backend and method counted apart, in name order.
        stats.request("web", "tools/call", Duration::from_millis(1), false);
        stats.request("docs", "prompts/get", Duration::from_millis(1), false);
        let requests = text_lines(&stats, "snodo_proxy_requests_total{");
        assert_eq!(
            requests,
            [
                "snodo_proxy_requests_total{backend=\"docs\",method=\"prompts/get\"} 1",
                "snodo_proxy_requests_total{backend=\"docs\",method=\"tools/call\"} 2",
                "snodo_proxy_requests_total{backend=\"web\",method=\"tools/call\"} 1",
            ]
        );
        for line in [
            "snodo_proxy_requests_total{backend=\"docs\",method=\"tools/call\"} 2",
            "snodo_proxy_errors_total{backend=\"docs\",method=\"tools/call\"} 1",
            "snodo_proxy_request_duration_seconds_bucket{backend=\"docs\",method=\"tools/call\",le=\"0.005\"} 1",
            "snodo_proxy_request_duration_seconds_bucket{backend=\"docs\",method=\"tools/call\",le=\"0.05\"} 2",
            "snodo_proxy_request_duration_seconds_bucket{backend=\"docs\",method=\"tools/call\",le=\"+Inf\"} 2",
            "snodo_proxy_request_duration_seconds_count{backend=\"docs\",method=\"tools/call\"} 2",
            "snodo_proxy_limiter_rejections_total{backend=\"docs\",limit=\"rate\"} 1",
            "snodo_proxy_pinned_withdrawals_total{backend=\"docs\"} 2",
            "snodo_proxy_backend_up{backend=\"docs\"} 1",
            "snodo_proxy_breaker_state{backend=\"docs\"} 1",
            "snodo_proxy_caller_servers{backend=\"docs\"} 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
    }

    /// The lines of `stats`' text that start with `prefix`.
    fn text_lines(stats: &Stats, prefix: &str) -> Vec<String> {
        let text = stats.render(&[]);
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect()
    }
}
