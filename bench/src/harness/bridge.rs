//! `--bridge`: what `snodo serve` costs in front of a server. The benchmark's
//! snodo server three ways, in one run and a random order each round:
//!
//! - `direct`: `bench-server-snodo --http`, the load generator talks to it;
//! - `bridge-stdio`: `snodo serve --http` with the same server as its stdio
//!   child (what a host that only speaks HTTP gets from a stdio server);
//! - `bridge-http`: `snodo serve --http` in front of the same server over
//!   Streamable HTTP (a revision or auth gateway).
//!
//! Every response is checked. The table gives throughput, p50 and p99 at one
//! request in flight (the added latency) and at 16, with the ratios
//! against `direct`; the bridge and its backend share the servers' CPU.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::http_load::{self, Target};
use super::output::{self, ChartFile};
use super::procs::{self, HttpServer, Launcher, Spec};
use super::provenance::Provenance;
use super::telemetry::{median, ratio_median, shuffled};
use super::wire::{Expect, Work};

/// The loads: (name, connections).
pub(crate) const LOADS: [(&str, usize); 2] = [("http_call_c1", 1), ("http_call_c16", 16)];
/// The variants, `direct` first (the ratios' base).
pub(crate) const VARIANTS: [&str; 3] = ["direct", "bridge-stdio", "bridge-http"];

/// One measured run.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Run {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    errors: u64,
}

/// What the runs need from the command line.
#[derive(Debug)]
pub(crate) struct Setup {
    pub(crate) launcher: Launcher,
    pub(crate) rounds: usize,
    pub(crate) warmup: Duration,
    pub(crate) measure: Duration,
    pub(crate) json: Option<PathBuf>,
    pub(crate) command: String,
    pub(crate) pinned: bool,
    pub(crate) provenance: Provenance,
}

/// What a bridge run gives: the markdown report and the charts written
/// next to the JSON.
#[derive(Debug)]
pub(crate) struct Report {
    /// The header and the table.
    pub(crate) md: String,
    /// The JSON document.
    pub(crate) doc: serde_json::Value,
    /// The charts written next to the JSON file (none without one).
    pub(crate) charts: Vec<ChartFile>,
}

/// The `--bridge` JSON document: the settings, the figures of each load
/// (`loads`) and the provenance block.
pub(crate) fn document(
    setup: &Setup,
    loads: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    setup.provenance.stamp(serde_json::json!({"bridge": {
        "rounds": setup.rounds,
        "warmup_s": setup.warmup.as_secs_f64(),
        "measure_s": setup.measure.as_secs_f64(),
        "pinned": setup.pinned,
        "loads": loads,
    }}))
}

/// A running variant: the process the load generator talks to and, for
/// `bridge-http`, the backend behind it.
struct Running {
    front: HttpServer,
    backend: Option<HttpServer>,
}

impl Running {
    fn target(&self) -> &Target {
        &self.front.target
    }

    async fn stop(self) {
        self.front.stop().await;
        if let Some(b) = self.backend {
            b.stop().await;
        }
    }
}

/// `snodo serve --http 127.0.0.1:0 TARGET...`, pinned like the servers.
async fn bridge(launcher: &Launcher, target: &[String]) -> Result<HttpServer, String> {
    let mut cmd = launcher.command_of(SNODO, &[("RUST_LOG", "error")], "serve");
    cmd.args(["--http", "127.0.0.1:0", "--server-stderr", "quiet", "--"])
        .args(target);
    launcher.http_spawned("snodo serve", cmd).await
}

async fn start(setup: &Setup, spec: &Spec, variant: &str) -> Result<Running, String> {
    let launcher = &setup.launcher;
    Ok(match variant {
        "direct" => Running {
            front: launcher.http(spec).await?,
            backend: None,
        },
        "bridge-stdio" => {
            let server = launcher.dir.join(spec.bin).display().to_string();
            Running {
                front: bridge(launcher, &[server, "--stdio".into()]).await?,
                backend: None,
            }
        }
        _ => {
            let backend = launcher.http(spec).await?;
            let url = format!("http://{}{}", backend.target.addr, backend.target.path);
            Running {
                front: bridge(launcher, &[url]).await?,
                backend: Some(backend),
            }
        }
    })
}

/// Runs every round and writes the JSON (and its chart) if asked; any error
/// fails the run once the JSON is written.
pub(crate) async fn run(setup: Setup, spec: Spec) -> Result<Report, String> {
    // runs[load][variant]
    let mut runs: Vec<Vec<Vec<Run>>> = vec![vec![Vec::new(); VARIANTS.len()]; LOADS.len()];
    for round in 1..=setup.rounds {
        eprintln!("round {round}/{}", setup.rounds);
        let mut running = Vec::new();
        for variant in VARIANTS {
            let r = start(&setup, &spec, variant).await?;
            http_load::one(r.target(), Work::Echo, Expect::Echo, 1)
                .await
                .map_err(|e| format!("{variant}: first request failed: {e}"))?;
            running.push(r);
        }
        for (l, (load, connections)) in LOADS.iter().enumerate() {
            for v in shuffled(VARIANTS.len(), round) {
                let out = http_load::run(
                    running[v].target(),
                    Work::Echo,
                    Expect::Echo,
                    *connections,
                    setup.warmup,
                    setup.measure,
                )
                .await;
                let run = Run {
                    rps: out.rps(),
                    p50_us: out.hist.percentile(50.0) as f64 / 1000.0,
                    p99_us: out.hist.percentile(99.0) as f64 / 1000.0,
                    errors: out.errors,
                };
                eprintln!(
                    "  {load} {}: {:.0} req/s, p50 {:.0} µs, p99 {:.0} µs, {} errors{}",
                    VARIANTS[v],
                    run.rps,
                    run.p50_us,
                    run.p99_us,
                    run.errors,
                    out.first_error
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default()
                );
                runs[l][v].push(run);
            }
        }
        for r in running {
            r.stop().await;
        }
    }
    let mut md = format!(
        "Command: `cargo run --release -p snodo-bench --{}`\n\n{}\n\
         The benchmark's snodo server three ways: `direct` (the load generator talks to it), \
         `bridge-stdio` (`snodo serve --http` with the server as its stdio child) and `bridge-http` \
         (`snodo serve --http` in front of the server over Streamable HTTP); `tools/call echo`, \
         {} rounds of {:.1} s warm-up + {:.1} s measured, a random order each round, medians \
         (min-max of the rates) and the median of the per-round ratios against `direct`; {}.\n\n\
         | load | variant | req/s | / direct | p50 µs | p99 µs | added p50 µs | added p99 µs | errors |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|\n",
        setup.command,
        setup.provenance.markdown(),
        setup.rounds,
        setup.warmup.as_secs_f64(),
        setup.measure.as_secs_f64(),
        if setup.pinned {
            "the servers (the bridge and its backend included) on CPU 0, the load generator on CPU 1"
        } else {
            "not pinned"
        }
    );
    let mut json = serde_json::Map::new();
    let mut total_errors = 0;
    for (l, (load, _)) in LOADS.iter().enumerate() {
        let med = |v: usize, f: fn(&Run) -> f64| {
            median(runs[l][v].iter().map(f).collect()).unwrap_or(0.0)
        };
        let mut entries = serde_json::Map::new();
        for (v, name) in VARIANTS.iter().enumerate() {
            let ratio = ratio_median(
                runs[l][v].iter().map(|r| r.rps),
                runs[l][0].iter().map(|r| r.rps),
            );
            let rates: Vec<f64> = runs[l][v].iter().map(|r| r.rps).collect();
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(0.0, f64::max);
            let (p50, p99) = (med(v, |r| r.p50_us), med(v, |r| r.p99_us));
            let (added50, added99) = (p50 - med(0, |r| r.p50_us), p99 - med(0, |r| r.p99_us));
            let errors: u64 = runs[l][v].iter().map(|r| r.errors).sum();
            total_errors += errors;
            let added = |a: f64| {
                if v == 0 {
                    "-".to_string()
                } else {
                    format!("{a:.0}")
                }
            };
            md.push_str(&format!(
                "| {load} | {name} | {:.0} ({lo:.0}-{hi:.0}) | {ratio:.2} | {p50:.0} | {p99:.0} | {} | {} | {errors} |\n",
                med(v, |r| r.rps),
                added(added50),
                added(added99),
            ));
            entries.insert(
                (*name).into(),
                serde_json::json!({
                    "rps_median": med(v, |r| r.rps),
                    "over_direct": ratio,
                    "p50_us": p50,
                    "p99_us": p99,
                    "added_p50_us": if v == 0 { None } else { Some(added50) },
                    "added_p99_us": if v == 0 { None } else { Some(added99) },
                    "errors": errors,
                    "samples": runs[l][v],
                }),
            );
        }
        json.insert((*load).into(), serde_json::Value::Object(entries));
    }
    if total_errors > 0 {
        md.push_str(&format!(
            "\n**{total_errors} errors: the figures are not valid.**\n"
        ));
    }
    let doc = document(&setup, json);
    let charts = match &setup.json {
        Some(path) => output::write(path, &doc)?,
        None => Vec::new(),
    };
    if total_errors > 0 {
        return Err(format!("{total_errors} errors\n{md}"));
    }
    Ok(Report { md, doc, charts })
}

/// The `snodo` command's binary (package `snodo-cli`).
const SNODO: &str = "snodo";

/// Builds the `snodo` command next to the servers.
pub(crate) fn build_cli(dir: &Path) -> Result<(), String> {
    procs::build_packages(dir, &["snodo-cli"])?;
    let bin = dir.join(SNODO);
    if bin.is_file() {
        Ok(())
    } else {
        Err(format!(
            "{} not found (cargo build --release -p snodo-cli)",
            bin.display()
        ))
    }
}
