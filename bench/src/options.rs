//! The command line: the options, their defaults and the usage text.

use std::path::PathBuf;
use std::time::Duration;

use crate::harness::procs::SERVERS;
use crate::harness::report::{self};

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) quick: bool,
    pub(crate) json: Option<PathBuf>,
    pub(crate) rounds: usize,
    pub(crate) warmup: Duration,
    pub(crate) measure: Duration,
    pub(crate) startup_reps: usize,
    pub(crate) servers: Vec<&'static str>,
    pub(crate) workloads: Vec<&'static str>,
    pub(crate) pin: bool,
    pub(crate) wait_idle: bool,
    pub(crate) show_stderr: bool,
    pub(crate) build: bool,
    pub(crate) fanout: bool,
    pub(crate) telemetry: bool,
    pub(crate) bridge: bool,
    pub(crate) gateway: bool,
    pub(crate) baseline: Option<String>,
    pub(crate) variants: Option<Vec<String>>,
    pub(crate) listeners: usize,
    pub(crate) buses: Vec<String>,
    pub(crate) update_docs: bool,
    pub(crate) charts_from: Option<PathBuf>,
    pub(crate) args: Vec<String>,
}

const USAGE: &str = "\
usage: snodo-bench [--quick] [--json PATH] [options]

  --quick               2 rounds of 1 s runs (under 2 minutes) instead of 5 rounds of 2.5 s
  --json PATH           also write the medians as JSON to PATH, and the charts
                        (SVG) next to it
  --rounds N            rounds (default 5, quick 2)
  --measure SECS        measured seconds per run (default 2, quick 0.8)
  --warmup SECS         warm-up seconds per run (default 0.5, quick 0.2)
  --servers LIST        comma-separated subset of
                        snodo,snodo-axum,rmcp,rmcp-doc,tower-mcp,ceiling
  --workloads LIST      comma-separated subset of the workloads (see README)
  --no-pin              do not pin the servers and the load generator to CPUs
  --no-wait-idle        start each round at once, even if other processes use the CPUs
  --show-server-stderr  let the servers' stderr through
  --no-build            do not build the server binaries first
  --update-docs         write the report into README.md, bench/README.md (between
                        their marker lines) and bench/results/latest.md, and its
                        charts into bench/results/latest-*.svg
  --charts-from PATH    instead: draw the charts of a results JSON written
                        earlier (any mode) next to it; runs nothing
  --fanout              instead: events fanned out to listen streams on three
                        `snodo demo` nodes joined by each bus (see README)
  --telemetry           instead: what the instrumentation costs, snodo built
                        with tracing compiled out, with no subscriber, and
                        exporting every span over OTLP (see README)
  --bridge              instead: what `snodo serve` adds in front of the snodo
                        server (over stdio and over HTTP) against a direct
                        connection: throughput, p50 and p99 (see README)
  --gateway             instead: one HTTP backend direct, behind a bare reverse
                        proxy, `snodo proxy` and mcp-proxy 0.6 (minimal and with
                        limits), at 1, 8 and 32 clients in initialize-era sessions;
                        and `snodo serve --stdio` against a bare byte relay
                        (see README)
  --baseline REV        with --telemetry: also the server as it was at the git
                        revision REV (built in a worktree under target/)
  --variants LIST       with --gateway: the variants to run (direct always
                        runs; goals need all of them)
  --variants LIST       with --telemetry: a comma-separated subset of
                        before,bare,on,exported,sampled
  --listeners N         listen streams in the fan-out runs (default 1000)
  --buses LIST          buses of the fan-out runs (default redis,postgres)
";

pub(crate) fn parse_args() -> Result<Options, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut o = Options {
        quick: false,
        json: None,
        rounds: 0,
        warmup: Duration::ZERO,
        measure: Duration::ZERO,
        startup_reps: 0,
        servers: SERVERS.iter().map(|s| s.name).collect(),
        workloads: report::WORKLOADS.iter().map(|(w, _)| *w).collect(),
        pin: true,
        wait_idle: true,
        show_stderr: false,
        build: true,
        fanout: false,
        telemetry: false,
        bridge: false,
        gateway: false,
        baseline: None,
        variants: None,
        listeners: 1000,
        buses: vec!["redis".into(), "postgres".into()],
        update_docs: false,
        charts_from: None,
        args: args.clone(),
    };
    let (mut rounds, mut warmup, mut measure) = (None, None, None);
    let mut it = args.into_iter();
    let secs = |v: Option<String>, flag: &str| -> Result<Duration, String> {
        v.and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("{flag} needs a positive number of seconds"))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--json" => o.json = Some(it.next().ok_or("--json needs a path")?.into()),
            "--rounds" => {
                rounds = Some(
                    it.next()
                        .and_then(|n| n.parse::<usize>().ok())
                        .filter(|n| *n > 0)
                        .ok_or("--rounds needs a positive integer")?,
                )
            }
            "--measure" => measure = Some(secs(it.next(), "--measure")?),
            "--warmup" => warmup = Some(secs(it.next(), "--warmup")?),
            "--servers" => {
                let list = it.next().ok_or("--servers needs a list")?;
                o.servers = Vec::new();
                for name in list.split(',') {
                    let spec = SERVERS
                        .iter()
                        .find(|s| s.name == name.trim())
                        .ok_or_else(|| format!("unknown server {name:?}"))?;
                    o.servers.push(spec.name);
                }
            }
            "--workloads" => {
                let list = it.next().ok_or("--workloads needs a list")?;
                o.workloads = Vec::new();
                for name in list.split(',') {
                    let (w, _) = report::WORKLOADS
                        .iter()
                        .find(|(w, _)| *w == name.trim())
                        .ok_or_else(|| format!("unknown workload {name:?}"))?;
                    o.workloads.push(w);
                }
            }
            "--no-pin" => o.pin = false,
            "--no-wait-idle" => o.wait_idle = false,
            "--show-server-stderr" => o.show_stderr = true,
            "--no-build" => o.build = false,
            "--update-docs" => o.update_docs = true,
            "--charts-from" => {
                o.charts_from = Some(it.next().ok_or("--charts-from needs a path")?.into())
            }
            "--fanout" => o.fanout = true,
            "--telemetry" => o.telemetry = true,
            "--bridge" => o.bridge = true,
            "--gateway" => o.gateway = true,
            "--baseline" => o.baseline = Some(it.next().ok_or("--baseline needs a git revision")?),
            "--variants" => {
                let list = it.next().ok_or("--variants needs a list")?;
                o.variants = Some(list.split(',').map(str::to_owned).collect());
            }
            "--listeners" => {
                o.listeners = it
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--listeners needs a positive integer")?
            }
            "--buses" => {
                let list = it.next().ok_or("--buses needs a list")?;
                o.buses = Vec::new();
                for bus in list.split(',') {
                    match bus.trim() {
                        b @ ("redis" | "postgres") => o.buses.push(b.to_string()),
                        other => return Err(format!("unknown bus {other:?}")),
                    }
                }
            }
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    o.rounds = rounds.unwrap_or(if o.quick { 2 } else { 5 });
    o.warmup = warmup.unwrap_or(Duration::from_millis(if o.quick { 200 } else { 500 }));
    o.measure = measure.unwrap_or(Duration::from_millis(if o.quick { 800 } else { 2000 }));
    o.startup_reps = if o.quick { 2 } else { 3 };
    Ok(o)
}
