//! The workloads, in report order, and which servers can run each.

use crate::harness::procs::{SERVERS, VALIDATED, VALIDATED_BASIC};

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

/// Workloads that use the machine's CPUs differently: not judged on CPU.
pub(super) const OPEN_LOOP: [&str; 3] = ["http_open_50", "http_open_80", "http_open_same"];

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
pub(super) fn validator(workload: &str, server: &str) -> Option<&'static str> {
    SERVERS
        .iter()
        .find(|s| s.name == server)
        .and_then(|s| s.validating(workload))
        .map(|v| v.checks)
}
