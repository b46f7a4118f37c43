//! Samples, their medians over rounds per workload and server, and the JSON
//! document.

use std::collections::BTreeMap;

use serde::Serialize;

use super::workloads::{OPEN_LOOP, WORKLOADS, not_applicable, validator};
use crate::harness::procs::SERVERS;
use crate::harness::provenance::Provenance;

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
    pub(super) bytes_per_response: Option<f64>,
    #[serde(skip)]
    pub(super) first_error: Option<String>,
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

pub(super) fn median_f(values: impl Iterator<Item = f64>) -> Option<f64> {
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
