//! Medians over rounds, the markdown table (absolute figures and snodo's
//! ratios to each peer), the goal check, and the JSON document.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::procs::{SERVERS, VALIDATED, VALIDATED_BASIC};
use super::provenance::Provenance;

/// Every workload, in report order: name, and what its figures mean.
pub(crate) const WORKLOADS: &[(&str, &str)] = &[
    (
        "http_call_c1",
        "HTTP `tools/call echo`, 1 connection (closed loop)",
    ),
    ("http_call_c16", "HTTP `tools/call echo`, 16 connections"),
    ("http_call_c64", "HTTP `tools/call echo`, 64 connections"),
    (
        "http_add_c64",
        "HTTP `tools/call add`, 64 connections: structured content with an output schema (no server checks the content against it; snodo's default validator checks only that it is there)",
    ),
    (
        VALIDATED,
        "HTTP `tools/call echo`, 64 connections, arguments validated against `inputSchema` by a full JSON Schema 2020-12 validator on each side: snodo with `Full` (its `jsonschema` feature: the `jsonschema` crate 0.61, `format` an annotation), tower-mcp with its `schema-validation` feature (the `jsonschema` crate 0.58, `format` asserted); rmcp has no argument validation",
    ),
    (
        VALIDATED_BASIC,
        "HTTP `tools/call echo`, 64 connections, arguments validated against `inputSchema` by snodo's bundled `Basic` subset (`type`, `required`, `properties`, bounds, `pattern`; no `$ref`, combinators or `format`), not a full validator: snodo only, compared with its own `http_call_c64`",
    ),
    (
        "http_open_50",
        "HTTP `tools/call echo` at a fixed arrival rate of 50 % of the server's own `http_call_c64` rate in the same round (the ceiling: of snodo's, as a control of what the load generator and the kernel leave at that rate), 64 connections, latency from the scheduled send time",
    ),
    (
        "http_open_80",
        "HTTP `tools/call echo` at 80 % of the server's own `http_call_c64` rate, as above",
    ),
    (
        "http_open_same",
        "HTTP `tools/call echo` at one arrival rate for every server: 80 % of the slowest library server's own `http_call_c64` rate in the same round, as above",
    ),
    (
        "http_call_c64_2cpu",
        "HTTP `tools/call echo`, 64 connections, the server on both CPUs and the load generator (two threads) sharing them",
    ),
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

/// One measurement of one workload on one server in one round (the raw
/// per-round samples of the JSON document).
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Sample {
    /// Requests (round trips) per second.
    pub(crate) rps: Option<f64>,
    /// Median latency, µs (start-up time for `startup_*`).
    pub(crate) p50_us: Option<f64>,
    /// 99th-percentile latency, µs.
    pub(crate) p99_us: Option<f64>,
    /// 99.9th-percentile latency, µs.
    pub(crate) p999_us: Option<f64>,
    /// `VmHWM` after the workload (or `VmRSS`, see [`WORKLOADS`]), KiB.
    pub(crate) peak_rss_kb: Option<u64>,
    /// Wrong answers and failures.
    pub(crate) errors: u64,
    /// Mean response size in bytes.
    #[serde(skip)]
    pub(crate) bytes_per_response: Option<f64>,
    /// The first error seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) first_error: Option<String>,
    /// The server's CPU use over the measured window, % of one CPU.
    pub(crate) server_cpu: Option<f64>,
    /// The load generator's CPU use over the measured window, % of one CPU.
    pub(crate) loadgen_cpu: Option<f64>,
    /// Server CPU time per completed request over the measured window, µs.
    pub(crate) cpu_us_per_req: Option<f64>,
    /// Open-loop runs: the arrival rate asked for, requests per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target_rps: Option<f64>,
    /// Open-loop runs: p99 of the load generator's own lateness in queueing
    /// a request, µs (its stalls, charged to the server's latency).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scheduler_late_p99_us: Option<f64>,
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

/// One entry of the JSON document: medians over rounds, the spread, and the
/// per-round samples.
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
    /// Median of the per-round 99.9th percentiles, µs.
    pub(crate) p999_us: Option<f64>,
    /// Median peak RSS, KiB.
    pub(crate) peak_rss_kb: Option<u64>,
    /// Wrong answers and failures, summed over rounds.
    pub(crate) errors: u64,
    /// Why figures are missing, or what was measured instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    /// The validated workloads: what this server's build checks the
    /// arguments with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) validator: Option<&'static str>,
    /// The lowest and highest per-round requests per second.
    pub(crate) rps_min: Option<f64>,
    /// See `rps_min`.
    pub(crate) rps_max: Option<f64>,
    /// Median server CPU per request over the measured window, µs.
    pub(crate) cpu_us_per_req: Option<f64>,
    /// Median server CPU use, % of one CPU.
    pub(crate) server_cpu_pct: Option<f64>,
    /// Median load generator CPU use, % of one CPU.
    pub(crate) loadgen_cpu_pct: Option<f64>,
    /// Which side limited the run: `server`, `load generator`, `both` or
    /// `neither` (from the CPU use; closed-loop runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bottleneck: Option<&'static str>,
    /// Open-loop runs: the median arrival rate asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target_rps: Option<f64>,
    /// Every round's sample.
    pub(crate) samples: Vec<Sample>,
    #[serde(skip)]
    bytes_per_response: Option<f64>,
    #[serde(skip)]
    first_error: Option<String>,
}

/// The JSON document.
#[derive(Debug, Serialize)]
pub(crate) struct Document {
    /// What was measured with what: commit, toolchain, lockfile, machine
    /// (as earlier documents have them), options.
    pub(crate) meta: serde_json::Value,
    /// One entry per workload and server.
    pub(crate) runs: Vec<Run>,
    /// Each goal, its figure and whether it was met.
    pub(crate) goals: Vec<Goal>,
}

/// The main run's JSON document, with the provenance block.
pub(crate) fn document(
    meta: serde_json::Value,
    runs: Vec<Run>,
    goals: Vec<Goal>,
    provenance: &Provenance,
) -> serde_json::Value {
    let doc = Document { meta, runs, goals };
    provenance.stamp(serde_json::to_value(&doc).unwrap_or_default())
}

/// One goal's verdict.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Goal {
    /// What the goal asks.
    pub(crate) goal: String,
    /// The figure it is judged on.
    pub(crate) figure: Option<f64>,
    /// Whether it was met (`None`: figures missing).
    pub(crate) met: Option<bool>,
    /// Why it is not met, or what else to know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
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

/// Workloads that use the machine's CPUs differently: not judged on CPU.
const OPEN_LOOP: [&str; 3] = ["http_open_50", "http_open_80", "http_open_same"];

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
    if workload == VALIDATED || workload == VALIDATED_BASIC {
        if validator(workload, server).is_some() {
            return None;
        }
        return Some(match server {
            "rmcp" | "rmcp-doc" => "rmcp does not validate arguments against inputSchema",
            "ceiling" => "the ceiling parses nothing",
            _ if workload == VALIDATED_BASIC => {
                "Basic is snodo's own subset, measured against snodo without a validator"
            }
            _ => "no validating build",
        });
    }
    let core = matches!(
        workload,
        "http_call_c1"
            | "http_call_c16"
            | "http_call_c64"
            | "http_add_c64"
            | "http_open_50"
            | "http_open_80"
            | "http_open_same"
            | "http_call_c64_2cpu"
            | "rss_idle_http"
    );
    match server {
        "snodo-axum" if !core && workload != "http_list_c16" => {
            Some("the axum-mounted variant runs the HTTP tools workloads")
        }
        "rmcp-doc" if !core && !workload.starts_with("stdio_call") => Some(
            "the documented style has only its #[tool] methods (no runtime tools, no listen): tools/call workloads only",
        ),
        "ceiling" => match workload {
            "http_list_c16" => Some("the ceiling answers tools/call only"),
            "rss_listen_1000" => Some("the ceiling has no subscriptions/listen"),
            "http_session_call_c64" | "rss_sessions_1000" => Some("the ceiling has no sessions"),
            _ => None,
        },
        _ => None,
    }
}

/// What `server`'s build checks the arguments with in validated `workload`.
fn validator(workload: &str, server: &str) -> Option<&'static str> {
    SERVERS
        .iter()
        .find(|s| s.name == server)
        .and_then(|s| s.validating(workload))
        .map(|v| v.checks)
}

/// Which side limited a closed-loop run, from the CPU use (% of one CPU) and
/// the CPUs each side had.
fn bottleneck(workload: &str, server: Option<f64>, loadgen: Option<f64>) -> Option<&'static str> {
    if OPEN_LOOP.contains(&workload)
        || (!workload.starts_with("http_") && !workload.starts_with("stdio_"))
    {
        return None;
    }
    let (server, loadgen) = (server?, loadgen?);
    if workload.ends_with("_2cpu") {
        // Both sides share two CPUs.
        return Some(if server + loadgen >= 180.0 {
            "both (the two CPUs are full)"
        } else {
            "neither"
        });
    }
    Some(match (server >= 90.0, loadgen >= 90.0) {
        (true, true) => "both",
        (true, false) => "server",
        (false, true) => "load generator",
        (false, false) => "neither (latency-bound)",
    })
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
            let p999 = median_f(list.iter().filter_map(|s| s.p999_us)).map(round1);
            let rps_all = list.iter().filter_map(|s| s.rps);
            let rps_min = rps_all.clone().reduce(f64::min).map(round1);
            let rps_max = rps_all.reduce(f64::max).map(round1);
            let cpu_per_req = median_f(list.iter().filter_map(|s| s.cpu_us_per_req))
                .map(|c| (c * 100.0).round() / 100.0);
            let target_rps = median_f(list.iter().filter_map(|s| s.target_rps)).map(round1);
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
                p999_us: p999,
                peak_rss_kb: rss,
                errors,
                note,
                validator: validator(workload, server),
                rps_min,
                rps_max,
                cpu_us_per_req: cpu_per_req,
                server_cpu_pct: server_cpu.map(round1),
                loadgen_cpu_pct: loadgen_cpu.map(round1),
                bottleneck: bottleneck(workload, server_cpu, loadgen_cpu),
                target_rps,
                samples: list.to_vec(),
                bytes_per_response: bytes,
                first_error,
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
    P999,
    Rss,
    StartMs,
    CpuPerReq,
    Bottleneck,
}

fn value(run: &Run, field: Field) -> Option<f64> {
    match field {
        Field::Rps => run.rps,
        Field::P50 => run.p50_us,
        Field::P99 => run.p99_us,
        Field::P999 => run.p999_us,
        Field::Rss => run.peak_rss_kb.map(|k| k as f64),
        Field::StartMs => run.p50_us.map(|us| us / 1000.0),
        Field::CpuPerReq => run.cpu_us_per_req,
        Field::Bottleneck => None,
    }
}

fn fmt_value(v: f64, field: Field) -> String {
    match field {
        Field::Rps | Field::Rss => group_thousands(v.round() as u64),
        Field::P50 | Field::P99 | Field::P999 => {
            if v >= 100.0 {
                group_thousands(v.round() as u64)
            } else {
                format!("{v:.1}")
            }
        }
        Field::StartMs | Field::CpuPerReq => format!("{v:.1}"),
        Field::Bottleneck => String::new(),
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
        "HTTP tools/call, c=64: req/s",
        "http_call_c64",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, c=64: server CPU µs/request",
        "http_call_c64",
        Field::CpuPerReq,
        false,
    ),
    (
        "HTTP tools/call, c=64: bottleneck",
        "http_call_c64",
        Field::Bottleneck,
        false,
    ),
    (
        "HTTP tools/call, c=64: p99 µs (closed loop)",
        "http_call_c64",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/call add (output schema), c=64: req/s",
        "http_add_c64",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call add, c=64: server CPU µs/request",
        "http_add_c64",
        Field::CpuPerReq,
        false,
    ),
    (
        "HTTP tools/call add, c=64: bottleneck",
        "http_add_c64",
        Field::Bottleneck,
        false,
    ),
    (
        "HTTP tools/call, arguments validated by a full JSON Schema 2020-12 validator (snodo: Full; tower-mcp: schema-validation), c=64: req/s",
        VALIDATED,
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, validated by a full JSON Schema validator, c=64: server CPU µs/request",
        VALIDATED,
        Field::CpuPerReq,
        false,
    ),
    (
        "HTTP tools/call, arguments validated by snodo's Basic subset (not a full validator), c=64: req/s",
        VALIDATED_BASIC,
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, validated by snodo's Basic subset, c=64: server CPU µs/request",
        VALIDATED_BASIC,
        Field::CpuPerReq,
        false,
    ),
    (
        "HTTP tools/call, open loop at 50 % of own max (ceiling: of snodo's): p50 µs",
        "http_open_50",
        Field::P50,
        false,
    ),
    (
        "HTTP tools/call, open loop at 50 %: p99 µs",
        "http_open_50",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/call, open loop at 50 %: p99.9 µs",
        "http_open_50",
        Field::P999,
        false,
    ),
    (
        "HTTP tools/call, open loop at 80 % of own max (ceiling: of snodo's): req/s achieved",
        "http_open_80",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, open loop at 80 %: p50 µs",
        "http_open_80",
        Field::P50,
        false,
    ),
    (
        "HTTP tools/call, open loop at 80 %: p99 µs",
        "http_open_80",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/call, open loop at 80 %: p99.9 µs",
        "http_open_80",
        Field::P999,
        false,
    ),
    (
        "HTTP tools/call, open loop, one rate for all (80 % of the slowest's max): req/s achieved",
        "http_open_same",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, open loop, one rate for all: p50 µs",
        "http_open_same",
        Field::P50,
        false,
    ),
    (
        "HTTP tools/call, open loop, one rate for all: p99 µs",
        "http_open_same",
        Field::P99,
        false,
    ),
    (
        "HTTP tools/call, open loop, one rate for all: p99.9 µs",
        "http_open_same",
        Field::P999,
        false,
    ),
    (
        "HTTP tools/call, c=64, both CPUs shared: req/s",
        "http_call_c64_2cpu",
        Field::Rps,
        true,
    ),
    (
        "HTTP tools/call, c=64, both CPUs shared: server CPU µs/request",
        "http_call_c64_2cpu",
        Field::CpuPerReq,
        false,
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
        "stdio tools/call, 1 in flight: server CPU µs/request",
        "stdio_call_f1",
        Field::CpuPerReq,
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
        "peak RSS under HTTP tools/call (c=1, 16, 64, add): KiB",
        "http_add_c64",
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

/// The peers snodo's ratio columns divide by.
const RATIO_PEERS: [&str; 4] = ["rmcp", "rmcp-doc", "tower-mcp", "ceiling"];

fn cell(runs: &[Run], workload: &str, server: &str, field: Field) -> String {
    let Some(run) = find(runs, workload, server) else {
        return "n/a".into();
    };
    if run.note.is_some() && run.errors == 0 {
        return "n/a".into();
    }
    if field == Field::Bottleneck {
        return match (run.bottleneck, run.server_cpu_pct, run.loadgen_cpu_pct) {
            (Some(b), Some(s), Some(l)) => format!("{b} ({s:.0}/{l:.0} %)"),
            _ => "n/a".into(),
        };
    }
    let mut text = value(run, field).map_or_else(|| "n/a".to_string(), |v| fmt_value(v, field));
    if field == Field::Rps
        && let (Some(median), Some(lo), Some(hi)) = (run.rps, run.rps_min, run.rps_max)
        && median > 0.0
        && run.samples.len() > 1
    {
        let _ = write!(text, " ±{:.0} %", (hi - lo) / 2.0 / median * 100.0);
    }
    if run.errors > 0 {
        let _ = write!(text, " ({} err)", run.errors);
    }
    text
}

fn ratio_of(runs: &[Run], workload: &str, a: &str, b: &str, field: Field) -> Option<f64> {
    let a = find(runs, workload, a).filter(|r| r.note.is_none())?;
    let b = find(runs, workload, b).filter(|r| r.note.is_none())?;
    let (a, b) = (value(a, field)?, value(b, field)?);
    (b > 0.0).then(|| a / b)
}

/// `server`'s throughput in workload `a` over its throughput in `b`.
fn ratio_of_workloads(runs: &[Run], a: &str, b: &str, server: &str) -> Option<f64> {
    let rps = |workload| {
        find(runs, workload, server)
            .filter(|r| r.note.is_none())
            .and_then(|r| r.rps)
    };
    rps(a)
        .zip(rps(b))
        .filter(|(_, b)| *b > 0.0)
        .map(|(a, b)| a / b)
}

fn ratio(runs: &[Run], workload: &str, peer: &str, field: Field) -> Option<f64> {
    ratio_of(runs, workload, "snodo", peer, field)
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}×"))
}

/// The markdown table.
pub(crate) fn table(runs: &[Run]) -> String {
    let mut out = String::from("| Metric | better |");
    for spec in SERVERS {
        let _ = write!(out, " {} |", spec.name);
    }
    for peer in RATIO_PEERS {
        let _ = write!(out, " snodo/{peer} |");
    }
    out.push_str("\n|---|:-:|");
    out.push_str(&"--:|".repeat(SERVERS.len() + RATIO_PEERS.len()));
    out.push('\n');
    for (label, workload, field, higher) in ROWS {
        let arrow = match field {
            Field::Bottleneck => "",
            _ if *higher => "↑",
            _ => "↓",
        };
        let _ = write!(out, "| {label} | {arrow} |");
        for spec in SERVERS {
            let _ = write!(out, " {} |", cell(runs, workload, spec.name, *field));
        }
        for peer in RATIO_PEERS {
            let r = match field {
                Field::Bottleneck => "".to_string(),
                _ => fmt_ratio(ratio(runs, workload, peer, *field)),
            };
            let _ = write!(out, " {r} |");
        }
        out.push('\n');
    }
    out
}

/// Collects the goals' verdicts.
struct Goals<'a> {
    runs: &'a [Run],
    list: Vec<Goal>,
}

impl Goals<'_> {
    fn add(
        &mut self,
        goal: String,
        figure: Option<f64>,
        met: Option<bool>,
        reason: Option<String>,
    ) {
        self.list.push(Goal {
            goal,
            figure,
            met,
            reason: if met == Some(true) { None } else { reason },
        });
    }

    fn cpu(&self, workload: &str, server: &str) -> Option<f64> {
        find(self.runs, workload, server).and_then(|r| r.cpu_us_per_req)
    }

    fn cpu_text(&self, workload: &str, servers: &[&str]) -> String {
        servers
            .iter()
            .map(|s| {
                self.cpu(workload, s)
                    .map_or(format!("{s} n/a"), |c| format!("{s} {c:.1} µs"))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The goals, each with its figure, its verdict and, when not met, why.
/// Any error anywhere in the run fails every verdict.
pub(crate) fn goals(runs: &[Run]) -> Vec<Goal> {
    let mut g = Goals {
        runs,
        list: Vec::new(),
    };
    for workload in ["http_call_c64", "http_add_c64"] {
        for peer in ["rmcp", "rmcp-doc", "tower-mcp"] {
            let r = ratio(runs, workload, peer, Field::Rps);
            let reason = format!(
                "server CPU per request: {}; the ceiling is {} {peer}",
                g.cpu_text(workload, &["snodo", peer, "ceiling"]),
                fmt_ratio(ratio_of(runs, workload, "ceiling", peer, Field::Rps)),
            );
            g.add(
                format!("{workload} throughput, snodo ≥ 3× {peer}"),
                r,
                r.map(|r| r >= 3.0),
                Some(reason),
            );
        }
        // CPU per request: the ceiling's over snodo's (higher is better).
        let r = ratio_of(runs, workload, "ceiling", "snodo", Field::CpuPerReq);
        g.add(
            format!("{workload} server CPU per request, snodo ≤ 1.4× the ceiling's (ceiling/snodo ≥ 0.7)"),
            r,
            r.map(|r| r >= 0.7),
            Some(g.cpu_text(workload, &["snodo", "ceiling"])),
        );
    }
    {
        let r = ratio_of_workloads(runs, VALIDATED_BASIC, "http_call_c64", "snodo");
        g.add(
            format!("{VALIDATED_BASIC}: snodo with Basic ≥ 0.9× snodo without"),
            r,
            r.map(|r| r >= 0.9),
            Some(format!(
                "server CPU per request: with Basic {}, without {}",
                g.cpu_text(VALIDATED_BASIC, &["snodo"]),
                g.cpu_text("http_call_c64", &["snodo"])
            )),
        );
    }
    {
        // Like for like: a full JSON Schema validator on each side, held to
        // the bar of the unvalidated rows.
        let r = ratio(runs, VALIDATED, "tower-mcp", Field::Rps);
        g.add(
            format!(
                "{VALIDATED} throughput, snodo with Full ≥ 3× tower-mcp with schema-validation"
            ),
            r,
            r.map(|r| r >= 3.0),
            Some(format!(
                "server CPU per request: {}",
                g.cpu_text(VALIDATED, &["snodo", "tower-mcp"])
            )),
        );
    }
    for peer in ["rmcp", "rmcp-doc", "tower-mcp"] {
        let r = ratio(runs, "http_open_80", peer, Field::P99);
        let p99 = |server| {
            find(runs, "http_open_80", server)
                .filter(|r| r.note.is_none())
                .and_then(|r| value(r, Field::P99))
        };
        let reason = p99("ceiling").zip(p99("snodo")).zip(p99(peer)).map(
            |((ceiling, snodo), other)| {
                format!(
                    "p99 snodo {snodo:.0} µs, {peer} {other:.0} µs at its own lower rate; the ceiling, which parses nothing, at snodo's rate: {ceiling:.0} µs"
                )
            },
        );
        g.add(
            format!("open-loop p99 at 80 % of own max, snodo below {peer} (ratio < 1)"),
            r,
            r.map(|r| r < 1.0),
            reason,
        );
    }
    {
        let r = ratio(runs, "stdio_call_f1", "rmcp", Field::Rps);
        let floor = ratio_of(runs, "stdio_call_f1", "ceiling", "rmcp", Field::Rps);
        let reason = floor.map(|f| {
            format!(
                "the stdio ceiling, which parses nothing and answers a fixed line, reaches {f:.2}× rmcp in this run{}; server CPU per round trip: {}",
                if f < 1.5 { ", so 1.5× is below the floor of a pipe round trip here" } else { "" },
                g.cpu_text("stdio_call_f1", &["snodo", "rmcp", "ceiling"])
            )
        });
        g.add(
            "stdio_call_f1 round trips/s, snodo ≥ 1.5× rmcp".into(),
            r,
            r.map(|r| r >= 1.5),
            reason,
        );
    }
    {
        let r = ratio(runs, "stdio_call_f64", "rmcp", Field::Rps);
        g.add(
            "stdio_call_f64 round trips/s, snodo ≥ 1.5× rmcp".into(),
            r,
            r.map(|r| r >= 1.5),
            None,
        );
    }
    for (workload, what) in [
        ("http_add_c64", "peak RSS under HTTP load"),
        ("rss_listen_1000", "RSS with 1 000 listen streams"),
    ] {
        for peer in ["rmcp", "tower-mcp"] {
            let r = ratio(runs, workload, peer, Field::Rss);
            g.add(
                format!("{what}, snodo below {peer} (ratio < 1)"),
                r,
                r.map(|r| r < 1.0),
                None,
            );
        }
    }
    for peer in ["rmcp", "tower-mcp"] {
        let r = ratio(runs, "http_call_c1", peer, Field::P99);
        g.add(
            format!("http_call_c1 p99, snodo ≤ {peer}"),
            r,
            r.map(|r| r <= 1.0),
            None,
        );
    }
    {
        // Not a ratio between servers: snodo protected against snodo open.
        let protected = find(runs, "http_call_auth_c16", "snodo").and_then(|r| r.rps);
        let open = find(runs, "http_call_c16", "snodo").and_then(|r| r.rps);
        let r = protected
            .zip(open)
            .filter(|(_, o)| *o > 0.0)
            .map(|(p, o)| p / o);
        g.add(
            "http_call_auth_c16: a JWT on every call ≥ 0.8× snodo without".into(),
            r,
            r.map(|r| r >= 0.8),
            None,
        );
    }
    for peer in ["rmcp", "tower-mcp"] {
        let r = ratio(runs, "http_session_call_c64", peer, Field::Rps);
        g.add(
            format!("http_session_call_c64 throughput, snodo ≥ 1.5× {peer}"),
            r,
            r.map(|r| r >= 1.5),
            None,
        );
        let r = ratio(runs, "rss_sessions_1000", peer, Field::Rss);
        g.add(
            format!("RSS of 1 000 idle sessions, snodo below {peer}"),
            r,
            r.map(|r| r < 1.0),
            None,
        );
    }
    let errors: u64 = runs.iter().map(|r| r.errors).sum();
    if errors > 0 {
        for goal in &mut g.list {
            if goal.met.is_some() {
                goal.met = Some(false);
                goal.reason = Some(format!("{errors} errors in this run fail every verdict"));
            }
        }
    }
    g.list
}

/// The goals as markdown lines.
pub(crate) fn goals_markdown(goals: &[Goal]) -> String {
    let mut out = String::new();
    for g in goals {
        let verdict = match g.met {
            Some(true) => "met",
            Some(false) => "NOT met",
            None => "unknown (missing figures)",
        };
        let _ = write!(out, "- {}: {} → **{verdict}**", g.goal, fmt_ratio(g.figure));
        if let Some(reason) = &g.reason {
            let _ = write!(out, " ({reason})");
        }
        out.push('\n');
    }
    out
}

/// Errors, the open-loop rates, and response sizes worth reading under the
/// table.
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
    for workload in OPEN_LOOP {
        let rates: Vec<String> = runs
            .iter()
            .filter(|r| r.workload == workload)
            .filter_map(|r| {
                let late = median_f(r.samples.iter().filter_map(|s| s.scheduler_late_p99_us));
                Some(format!(
                    "{} {} asked, {} achieved, the load generator's own lateness p99 {} µs",
                    r.server,
                    group_thousands(r.target_rps?.round() as u64),
                    group_thousands(r.rps?.round() as u64),
                    late.map_or("?".into(), |l| format!("{l:.0}"))
                ))
            })
            .collect();
        if !rates.is_empty() {
            let _ = writeln!(
                out,
                "- {workload} arrival rates (req/s): {}",
                rates.join(", ")
            );
        }
    }
    for workload in [VALIDATED, VALIDATED_BASIC] {
        let checks: Vec<String> = runs
            .iter()
            .filter(|r| r.workload == workload && r.note.is_none())
            .filter_map(|r| Some(format!("{}: {}", r.server, r.validator?)))
            .collect();
        if !checks.is_empty() {
            let _ = writeln!(out, "- {workload} validators: {}", checks.join("; "));
        }
    }
    // What each of snodo's validators costs it: no figure is judged on it.
    let snodo = |workload| {
        find(runs, workload, "snodo")
            .filter(|r| r.note.is_none())
            .and_then(|r| r.cpu_us_per_req)
    };
    let costs: Vec<String> = [("Full", VALIDATED), ("Basic", VALIDATED_BASIC)]
        .into_iter()
        .filter_map(|(name, workload)| {
            let r = ratio_of_workloads(runs, workload, "http_call_c64", "snodo")?;
            Some(format!(
                "{name} {r:.2}× the throughput{}",
                snodo(workload).map_or(String::new(), |c| format!(", {c:.1} µs"))
            ))
        })
        .collect();
    if !costs.is_empty() {
        let _ = writeln!(
            out,
            "- snodo's validators against none (`http_call_c64`{}): {}",
            snodo("http_call_c64").map_or(String::new(), |c| format!(
                ", {c:.1} µs of server CPU per request"
            )),
            costs.join("; ")
        );
    }
    for (workload, what) in [
        ("http_list_c16", "`tools/list`"),
        ("http_call_c64", "`tools/call echo`"),
        ("http_add_c64", "`tools/call add`"),
    ] {
        let sizes: Vec<String> = runs
            .iter()
            .filter(|r| r.workload == workload)
            .filter_map(|r| {
                r.bytes_per_response
                    .map(|b| format!("{} {}", r.server, group_thousands(b.round() as u64)))
            })
            .collect();
        if !sizes.is_empty() {
            let _ = writeln!(out, "- {what} response bytes: {}", sizes.join(", "));
        }
    }
    out
}
