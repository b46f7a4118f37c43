//! The markdown table: absolute figures and snodo's ratios to each peer.

use std::fmt::Write as _;

use super::figures::{Field, find, fmt_ratio, fmt_value, ratio, value};
use super::summary::Run;
use crate::harness::procs::{SERVERS, VALIDATED, VALIDATED_BASIC};

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
