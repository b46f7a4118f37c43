//! The notes under the table: errors, open-loop rates, validators and
//! response sizes.

use std::fmt::Write as _;

use super::figures::{find, group_thousands, ratio_of_workloads};
use super::summary::{Run, median_f};
use super::workloads::OPEN_LOOP;
use crate::harness::procs::{VALIDATED, VALIDATED_BASIC};

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
