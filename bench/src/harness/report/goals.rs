//! The goals: each with its figure, its verdict and, when not met, why.

use std::fmt::Write as _;

use super::figures::{Field, find, fmt_ratio, ratio, ratio_of, ratio_of_workloads, value};
use super::summary::{Goal, Run};
use crate::harness::procs::{VALIDATED, VALIDATED_BASIC};

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
