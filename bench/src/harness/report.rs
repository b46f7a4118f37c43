//! Medians over rounds, the markdown table (absolute figures and snodo's
//! ratios to each peer), the goal check, and the JSON document.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::procs::SERVERS;

/// Every workload, in report order: name, and what its figures mean.
pub(crate) const WORKLOADS: &[(&str, &str)] = &[
    (
        "http_call_c1",
        "HTTP `tools/call echo`, 1 connection (closed loop)",
    ),
    ("http_call_c16", "HTTP `tools/call echo`, 16 connections"),
    ("http_call_c64", "HTTP `tools/call echo`, 64 connections"),
    (
        "http_call_auth_c16",
        "HTTP `tools/call echo`, 16 connections, a JWT access token on every call (keys cached, a verified token remembered; snodo only)",
    ),
    (
        "http_call_jwt_sig_c16",
        "HTTP `tools/call echo`, 16 connections, the JWT's ES256 signature checked on every call (keys cached, nothing remembered; snodo only)",
    ),
    (
        "http_list_c16",
        "HTTP `tools/list` (52 tools), 16 connections",
    ),
    (
        "http_task_memory_c16",
        "HTTP tasks, 16 connections: create, poll `tasks/get` every 1 ms, read the result (req/s = tasks/s; tasks in memory; snodo only)",
    ),
    (
        "http_task_sqlite_c16",
        "HTTP tasks, 16 connections, as above, tasks in a SQLite file (snodo only)",
    ),
    (
        "http_task_postgres_c16",
        "HTTP tasks, 16 connections, as above, tasks in PostgreSQL on 127.0.0.1 (snodo only)",
    ),
    (
        "stdio_call_f1",
        "stdio `tools/call echo`, 1 request in flight",
    ),
    (
        "stdio_call_f64",
        "stdio `tools/call echo`, 64 requests in flight",
    ),
    (
        "startup_http",
        "spawn to first correct HTTP `tools/call` response (p50_us = median)",
    ),
    (
        "startup_stdio",
        "spawn to first correct stdio `tools/call` response (p50_us = median)",
    ),
    (
        "rss_idle_http",
        "RSS of an HTTP server after one request (peak_rss_kb = VmRSS)",
    ),
    (
        "rss_listen_1000",
        "RSS with 1 000 open `subscriptions/listen` streams (peak_rss_kb = VmRSS)",
    ),
    (
        "http_session_call_c64",
        "HTTP `tools/call echo` at 2025-11-25, each of 64 connections in its own initialized session (stateful modes)",
    ),
    (
        "rss_sessions_1000",
        "RSS with 1 000 idle initialized 2025-11-25 sessions (peak_rss_kb = VmRSS)",
    ),
];

/// One measurement of one workload on one server in one round.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sample {
    /// Requests (round trips) per second.
    pub(crate) rps: Option<f64>,
    /// Median latency, µs (start-up time for `startup_*`).
    pub(crate) p50_us: Option<f64>,
    /// 99th-percentile latency, µs.
    pub(crate) p99_us: Option<f64>,
    /// `VmHWM` after the workload (or `VmRSS`, see [`WORKLOADS`]), KiB.
    pub(crate) peak_rss_kb: Option<u64>,
    /// Wrong answers and failures.
    pub(crate) errors: u64,
    /// Mean response size in bytes.
    pub(crate) bytes_per_response: Option<f64>,
    /// The first error seen.
    pub(crate) first_error: Option<String>,
    /// The server's CPU use during the run, % of one CPU.
    pub(crate) server_cpu: Option<f64>,
    /// The load generator's CPU use during the run, % of one CPU.
    pub(crate) loadgen_cpu: Option<f64>,
}

/// Samples by (workload, server).
#[derive(Debug, Default)]
pub(crate) struct Samples {
    by_key: BTreeMap<(&'static str, &'static str), Vec<Sample>>,
}

impl Samples {
    /// Adds one round's sample.
    pub(crate) fn add(&mut self, workload: &'static str, server: &'static str, sample: Sample) {
        self.by_key
            .entry((workload, server))
            .or_default()
            .push(sample);
    }
}

/// One entry of the JSON document: medians over rounds.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Run {
    /// The workload's name (see [`WORKLOADS`]).
    pub(crate) workload: String,
    /// `snodo`, `rmcp`, `tower-mcp` or `ceiling`.
    pub(crate) server: String,
    /// Median requests per second.
    pub(crate) rps: Option<f64>,
    /// Median of the per-round median latencies, µs.
    pub(crate) p50_us: Option<f64>,
    /// Median of the per-round 99th percentiles, µs.
    pub(crate) p99_us: Option<f64>,
    /// Median peak RSS, KiB.
    pub(crate) peak_rss_kb: Option<u64>,
    /// Wrong answers and failures, summed over rounds.
    pub(crate) errors: u64,
    /// Why figures are missing, or what was measured instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    #[serde(skip)]
    bytes_per_response: Option<f64>,
    #[serde(skip)]
    first_error: Option<String>,
    #[serde(skip)]
    server_cpu: Option<f64>,
    #[serde(skip)]
    loadgen_cpu: Option<f64>,
}

/// The JSON document.
#[derive(Debug, Serialize)]
pub(crate) struct Document {
    /// One entry per workload and server.
    pub(crate) runs: Vec<Run>,
}

fn median_f(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if !n.is_multiple_of(2) {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Why a server has no figures for a workload, if it cannot run it.
pub(crate) fn not_applicable(workload: &str, server: &str) -> Option<&'static str> {
    if (workload == "http_call_auth_c16" || workload == "http_call_jwt_sig_c16")
        && server != "snodo"
    {
        return Some("the protected workload measures snodo's own resource server");
    }
    if workload.starts_with("http_task_") && server != "snodo" {
        return Some("the task workloads measure snodo's own task stores");
    }
    if server != "ceiling" {
        return None;
    }
    match workload {
        "http_list_c16" => Some("the ceiling answers tools/call only"),
        "rss_listen_1000" => Some("the ceiling has no subscriptions/listen"),
        "http_session_call_c64" | "rss_sessions_1000" => Some("the ceiling has no sessions"),
        _ => None,
    }
}

/// Medians per (workload, server), in report order.
pub(crate) fn summarize(
    samples: &Samples,
    servers: &[&'static str],
    workloads: &[&'static str],
) -> Vec<Run> {
    let mut runs = Vec::new();
    for (workload, _) in WORKLOADS {
        for spec in SERVERS {
            let server = spec.name;
            let list = samples.by_key.get(&(*workload, server));
            let mut note = not_applicable(workload, server).map(str::to_string);
            if note.is_none() && !servers.contains(&server) {
                note = Some("not run (--servers)".into());
            }
            if note.is_none() && !workloads.contains(workload) {
                note = Some("not run (--workloads)".into());
            }
            let list = list.map(Vec::as_slice).unwrap_or_default();
            if note.is_none() && list.is_empty() {
                note = Some("no sample".into());
            }
            let rps = median_f(list.iter().filter_map(|s| s.rps)).map(round1);
            let p50 = median_f(list.iter().filter_map(|s| s.p50_us)).map(round1);
            let p99 = median_f(list.iter().filter_map(|s| s.p99_us)).map(round1);
            let rss = median_f(list.iter().filter_map(|s| s.peak_rss_kb.map(|k| k as f64)))
                .map(|k| k.round() as u64);
            let errors = list.iter().map(|s| s.errors).sum();
            let bytes = median_f(list.iter().filter_map(|s| s.bytes_per_response));
            let first_error = list.iter().find_map(|s| s.first_error.clone());
            let server_cpu = median_f(list.iter().filter_map(|s| s.server_cpu));
            let loadgen_cpu = median_f(list.iter().filter_map(|s| s.loadgen_cpu));
            runs.push(Run {
                workload: (*workload).to_string(),
                server: server.to_string(),
                rps,
                p50_us: p50,
                p99_us: p99,
                peak_rss_kb: rss,
                errors,
                note,
                bytes_per_response: bytes,
                first_error,
                server_cpu,
                loadgen_cpu,
            });
        }
    }
    runs
}

fn find<'a>(runs: &'a [Run], workload: &str, server: &str) -> Option<&'a Run> {
    runs.iter()
        .find(|r| r.workload == workload && r.server == server)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Rps,
    P50,
    P99,
    Rss,
    StartMs,
}

fn value(run: &Run, field: Field) -> Option<f64> {
    match field {
        Field::Rps => run.rps,
        Field::P50 => run.p50_us,
        Field::P99 => run.p99_us,
        Field::Rss => run.peak_rss_kb.map(|k| k as f64),
        Field::StartMs => run.p50_us.map(|us| us / 1000.0),
    }
}

fn fmt_value(v: f64, field: Field) -> String {
    match field {
        Field::Rps | Field::Rss => group_thousands(v.round() as u64),
        Field::P50 | Field::P99 => {
            if v >= 100.0 {
                group_thousands(v.round() as u64)
            } else {
                format!("{v:.1}")
            }
        }
        Field::StartMs => format!("{v:.1}"),
    }
}

fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The rows of the table: label, workload, field, whether higher is better.
const ROWS: &[(&str, &str, Field, bool)] = &[
    (
        "HTTP tools/call, c=1: req/s",
        "http_call_c1",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, c=1: p50 µs",
        "http_call_c1",
        Field::P50,
        false,
    ),
    (
        "HTTP tools/call, c=1: p99 µs",
        "http_call_c1",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/call, c=16: req/s",
        "http_call_c16",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, c=16: p50 µs",
        "http_call_c16",
        Field::P50,
        false,
    ),
    (
        "HTTP tools/call, c=16: p99 µs",
        "http_call_c16",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/call, c=64: req/s",
        "http_call_c64",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call with a JWT, c=16: req/s",
        "http_call_auth_c16",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, JWT signature checked per call, c=16: req/s",
        "http_call_jwt_sig_c16",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, c=64: p50 µs",
        "http_call_c64",
        Field::P50,
        false,
    ),
    (
        "HTTP tools/call, c=64: p99 µs",
        "http_call_c64",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/list, c=16: req/s",
        "http_list_c16",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/list, c=16: p99 µs",
        "http_list_c16",
        Field::P99,
        false,
    ),
    (
        "stdio tools/call, 1 in flight: round trips/s",
        "stdio_call_f1",
        Field::Rps,
        true,
    ),
    (
        "stdio tools/call, 1 in flight: p99 µs",
        "stdio_call_f1",
        Field::P99,
        false,
    ),
    (
        "stdio tools/call, 64 in flight: round trips/s",
        "stdio_call_f64",
        Field::Rps,
        true,
    ),
    (
        "stdio tools/call, 64 in flight: p99 µs",
        "stdio_call_f64",
        Field::P99,
        false,
    ),
    (
        "start-up, HTTP: ms to first response",
        "startup_http",
        Field::StartMs,
        false,
    ),
    (
        "start-up, stdio: ms to first response",
        "startup_stdio",
        Field::StartMs,
        false,
    ),
    (
        "RSS idle (HTTP, after 1 request): KiB",
        "rss_idle_http",
        Field::Rss,
        false,
    ),
    (
        "peak RSS under HTTP tools/call (c=1, 16, 64): KiB",
        "http_call_c64",
        Field::Rss,
        false,
    ),
    (
        "peak RSS under stdio tools/call: KiB",
        "stdio_call_f64",
        Field::Rss,
        false,
    ),
    (
        "RSS with 1 000 listen streams: KiB",
        "rss_listen_1000",
        Field::Rss,
        false,
    ),
    (
        "HTTP 2025-11-25 sessions, tools/call, c=64: req/s",
        "http_session_call_c64",
        Field::Rps,
        true,
    ),
    (
        "HTTP 2025-11-25 sessions, tools/call, c=64: p99 µs",
        "http_session_call_c64",
        Field::P99,
        false,
    ),
    (
        "RSS with 1 000 idle 2025-11-25 sessions: KiB",
        "rss_sessions_1000",
        Field::Rss,
        false,
    ),
];

fn cell(runs: &[Run], workload: &str, server: &str, field: Field) -> String {
    let Some(run) = find(runs, workload, server) else {
        return "n/a".into();
    };
    if run.note.is_some() && run.errors == 0 {
        return "n/a".into();
    }
    let mut text = value(run, field).map_or_else(|| "n/a".to_string(), |v| fmt_value(v, field));
    if run.errors > 0 {
        let _ = write!(text, " ({} err)", run.errors);
    }
    text
}

fn ratio(runs: &[Run], workload: &str, peer: &str, field: Field) -> Option<f64> {
    let a = find(runs, workload, "snodo").filter(|r| r.note.is_none())?;
    let b = find(runs, workload, peer).filter(|r| r.note.is_none())?;
    let (a, b) = (value(a, field)?, value(b, field)?);
    (b > 0.0).then(|| a / b)
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}×"))
}

/// The markdown table.
pub(crate) fn table(runs: &[Run]) -> String {
    let mut out = String::new();
    out.push_str("| Metric | better | snodo | rmcp | tower-mcp | ceiling | snodo/rmcp | snodo/tower-mcp | snodo/ceiling |\n");
    out.push_str("|---|:-:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (label, workload, field, higher) in ROWS {
        let _ = write!(out, "| {label} | {} |", if *higher { "↑" } else { "↓" });
        for spec in SERVERS {
            let _ = write!(out, " {} |", cell(runs, workload, spec.name, *field));
        }
        for peer in ["rmcp", "tower-mcp", "ceiling"] {
            let _ = write!(out, " {} |", fmt_ratio(ratio(runs, workload, peer, *field)));
        }
        out.push('\n');
    }
    out
}

/// The goals of the issue, each with its figure and whether it is met.
pub(crate) fn goals(runs: &[Run]) -> String {
    let mut out = String::new();
    let mut line = |name: &str, r: Option<f64>, ok: Option<bool>| {
        let verdict = match ok {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "unknown (missing figures)",
        };
        let _ = writeln!(out, "- {name}: {} → **{verdict}**", fmt_ratio(r));
    };
    {
        // Not a ratio between servers: snodo protected against snodo open.
        let protected =
            find(runs, "http_call_auth_c16", "snodo").and_then(|r| value(r, Field::Rps));
        let open = find(runs, "http_call_c16", "snodo").and_then(|r| value(r, Field::Rps));
        let r = protected
            .zip(open)
            .filter(|(_, o)| *o > 0.0)
            .map(|(p, o)| p / o);
        line(
            "HTTP tools/call c=16 with a JWT on every call, ≥ 0.8× snodo without",
            r,
            r.map(|r| r >= 0.8),
        );
    }
    for (peer, min) in [("rmcp", 1.5), ("tower-mcp", 1.5), ("ceiling", 0.6)] {
        let r = ratio(runs, "http_call_c64", peer, Field::Rps);
        line(
            &format!("HTTP tools/call c=64 throughput, snodo ≥ {min}× {peer}"),
            r,
            r.map(|r| r >= min),
        );
    }
    for peer in ["rmcp", "tower-mcp"] {
        let r = ratio(runs, "http_call_c1", peer, Field::P99);
        line(
            &format!("HTTP tools/call c=1 p99 latency, snodo ≤ {peer} (ratio ≤ 1)"),
            r,
            r.map(|r| r <= 1.0),
        );
    }
    for workload in ["stdio_call_f1", "stdio_call_f64"] {
        let r = ratio(runs, workload, "rmcp", Field::Rps);
        line(
            &format!("stdio round trips/s ({workload}), snodo ≥ 1.5× rmcp"),
            r,
            r.map(|r| r >= 1.5),
        );
    }
    for peer in ["rmcp", "tower-mcp"] {
        let r = ratio(runs, "http_call_c64", peer, Field::Rss);
        line(
            &format!("peak RSS under HTTP load, snodo ≤ {peer} (ratio ≤ 1)"),
            r,
            r.map(|r| r <= 1.0),
        );
    }
    for peer in ["rmcp", "tower-mcp"] {
        let r = ratio(runs, "http_session_call_c64", peer, Field::Rps);
        line(
            &format!("HTTP 2025-11-25 session tools/call c=64 throughput, snodo ≥ 1.5× {peer}"),
            r,
            r.map(|r| r >= 1.5),
        );
    }
    for peer in ["rmcp", "tower-mcp"] {
        let r = ratio(runs, "rss_sessions_1000", peer, Field::Rss);
        line(
            &format!("RSS of 1 000 idle sessions, snodo < {peer} (ratio < 1)"),
            r,
            r.map(|r| r < 1.0),
        );
    }
    out
}

/// Errors, notes and response sizes worth reading under the table.
pub(crate) fn notes(runs: &[Run]) -> String {
    let mut out = String::new();
    for run in runs {
        if run.errors > 0 {
            let _ = writeln!(
                out,
                "- {} / {}: {} errors; first: {}",
                run.workload,
                run.server,
                run.errors,
                run.first_error.as_deref().unwrap_or("?")
            );
        }
    }
    for workload in [
        "http_call_c64",
        "http_list_c16",
        "stdio_call_f64",
        "http_session_call_c64",
    ] {
        let cpu: Vec<String> = runs
            .iter()
            .filter(|r| r.workload == workload)
            .filter_map(|r| {
                Some(format!(
                    "{} {:.0} % / {:.0} %",
                    r.server, r.server_cpu?, r.loadgen_cpu?
                ))
            })
            .collect();
        if !cpu.is_empty() {
            let _ = writeln!(
                out,
                "- CPU use during {workload} (server / load generator, % of one CPU): {}",
                cpu.join(", ")
            );
        }
    }
    let sizes: Vec<String> = runs
        .iter()
        .filter(|r| r.workload == "http_list_c16")
        .filter_map(|r| {
            r.bytes_per_response
                .map(|b| format!("{} {}", r.server, group_thousands(b.round() as u64)))
        })
        .collect();
    if !sizes.is_empty() {
        let _ = writeln!(out, "- `tools/list` response bytes: {}", sizes.join(", "));
    }
    let sizes: Vec<String> = runs
        .iter()
        .filter(|r| r.workload == "http_call_c64")
        .filter_map(|r| {
            r.bytes_per_response
                .map(|b| format!("{} {}", r.server, group_thousands(b.round() as u64)))
        })
        .collect();
    if !sizes.is_empty() {
        let _ = writeln!(
            out,
            "- `tools/call echo` response bytes: {}",
            sizes.join(", ")
        );
    }
    out
}
