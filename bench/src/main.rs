//! `snodo-bench`: the same small MCP server written with snodo, rmcp 3.11 and
//! tower-mcp 0.25, plus a bare-hyper ceiling, measured in alternation over
//! MCP 2026-07-28 Streamable HTTP and stdio.
//!
//! ```text
//! cargo run --release -p snodo-bench -- [--quick] [--json PATH]
//! ```
//!
//! The markdown report goes to stdout, progress to stderr. See `bench/README.md`.

mod harness;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness::http_load;
use harness::procs::{self, Launcher, SERVERS, Spec};
use harness::provenance::Provenance;
use harness::report::{self, Sample, Samples};
use harness::stdio_load;
use harness::wire::{Expect, Work};

/// The CPU the servers run on; the harness takes the other one.
const SERVER_CPU: usize = 0;
/// The CPU of the harness (load generator).
const HARNESS_CPU: usize = 1;
/// How many `subscriptions/listen` streams the memory workload opens.
const LISTEN_STREAMS: usize = 1000;
/// How many idle initialize-era sessions the memory workload opens.
const IDLE_SESSIONS: usize = 1000;
/// Connections of the initialize-era throughput workload.
const SESSION_CONCURRENCY: usize = 64;

#[derive(Debug, Clone)]
struct Options {
    quick: bool,
    json: Option<PathBuf>,
    rounds: usize,
    warmup: Duration,
    measure: Duration,
    startup_reps: usize,
    servers: Vec<&'static str>,
    workloads: Vec<&'static str>,
    pin: bool,
    wait_idle: bool,
    show_stderr: bool,
    build: bool,
    fanout: bool,
    telemetry: bool,
    bridge: bool,
    baseline: Option<String>,
    variants: Option<Vec<String>>,
    listeners: usize,
    buses: Vec<String>,
    update_docs: bool,
    charts_from: Option<PathBuf>,
    args: Vec<String>,
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
  --baseline REV        with --telemetry: also the server as it was at the git
                        revision REV (built in a worktree under target/)
  --variants LIST       with --telemetry: a comma-separated subset of
                        before,bare,on,exported,sampled
  --listeners N         listen streams in the fan-out runs (default 1000)
  --buses LIST          buses of the fan-out runs (default redis,postgres)
";

fn parse_args() -> Result<Options, String> {
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

/// Rates (updates per second) of the fan-out steps.
const FANOUT_RATES: [u64; 6] = [25, 50, 100, 200, 400, 800];

/// Where the fan-out runs find each bus.
fn fanout_bus_url(bus: &str) -> String {
    match bus {
        "redis" => {
            std::env::var("SNODO_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
        }
        _ => bench_postgres_url(),
    }
}

/// `--bridge`: the snodo server direct and behind `snodo serve`.
fn bridge_main(
    options: &Options,
    dir: std::path::PathBuf,
    provenance: Provenance,
) -> Result<(), String> {
    let snodo = SERVERS[0];
    if options.build {
        procs::build_these(&dir, &[snodo])?;
    }
    harness::bridge::build_cli(&dir)?;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = options.pin && cpus >= 2 && procs::have_taskset();
    if pinned {
        procs::pin_self(HARNESS_CPU)?;
    }
    let setup = harness::bridge::Setup {
        launcher: Launcher {
            dir,
            server_cpu: pinned.then(|| SERVER_CPU.to_string()),
            show_stderr: options.show_stderr,
        },
        rounds: options.rounds,
        warmup: options.warmup,
        measure: options.measure,
        json: options.json.clone(),
        command: options.args.iter().map(|a| format!(" {a}")).collect(),
        pinned,
        provenance,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let report = runtime.block_on(harness::bridge::run(setup, snodo))?;
    // The chart's name is the one next to the JSON file.
    print!(
        "{}",
        harness::docs::with_charts(&report.md, "", &report.charts, "")
    );
    if options.update_docs {
        let results = harness::provenance::workspace_root().join("bench/results");
        let charts = harness::output::write_charts(&results, "bridge", &report.doc)?;
        let md = harness::docs::with_charts(&report.md, "", &charts, "");
        std::fs::write(results.join("bridge.md"), md)
            .map_err(|e| format!("bench/results/bridge.md: {e}"))?;
    }
    Ok(())
}

/// `--telemetry`: the snodo server built bare (and, with `--baseline REV`,
/// as it was at REV), with no subscriber, and exporting, on the same loads
/// in a random order each round.
fn telemetry_main(
    options: &mut Options,
    dir: std::path::PathBuf,
    provenance: &Provenance,
) -> Result<(), String> {
    use harness::telemetry::{self, LOADS, Run};
    let snodo = procs::SNODO_FULL;
    let bare = procs::SNODO_BARE;
    if options.build {
        procs::build_these(&dir, &[snodo, bare])?;
    }
    for spec in [snodo, bare] {
        if !dir.join(spec.bin).is_file() {
            return Err(format!(
                "{} not found (cargo build --release -p {})",
                spec.bin, spec.bin
            ));
        }
    }
    let before_dir = match &options.baseline {
        Some(rev) => Some(telemetry::build_baseline(rev, &dir)?),
        None => None,
    };
    let mut variants: Vec<&'static str> = Vec::new();
    if before_dir.is_some() {
        variants.push("before");
    }
    variants.extend(["bare", "on", "exported", "sampled"]);
    if let Some(only) = &options.variants {
        if let Some(unknown) = only.iter().find(|o| !variants.contains(&o.as_str())) {
            return Err(format!("--variants: no variant {unknown:?} in this run"));
        }
        variants.retain(|v| only.iter().any(|o| o == v));
    }
    // The ratios are against a build without the instrumentation: the
    // commit before it when given, else the build with tracing compiled out.
    let base = 0;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = options.pin && cpus >= 2 && procs::have_taskset();
    if pinned {
        procs::pin_self(HARNESS_CPU)?;
    }
    let launcher = Launcher {
        dir,
        server_cpu: pinned.then(|| SERVER_CPU.to_string()),
        show_stderr: options.show_stderr,
    };
    let before_launcher = before_dir.map(|dir| Launcher {
        dir,
        ..launcher.clone()
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let window = options.warmup + options.measure;
    // runs[load][variant]: one Run per round.
    let mut runs: Vec<Vec<Vec<Run>>> = vec![vec![Vec::new(); variants.len()]; LOADS.len()];
    runtime.block_on(async {
        let (collector, sink) = telemetry::collector().await?;
        for round in 1..=options.rounds {
            eprintln!("round {round}/{}", options.rounds);
            if options.wait_idle {
                wait_for_idle().await;
            }
            let mut servers = Vec::new();
            for variant in &variants {
                let server = match *variant {
                    "before" => {
                        let l = before_launcher.as_ref().ok_or("no baseline")?;
                        l.http(&snodo).await?
                    }
                    "bare" => launcher.http(&bare).await?,
                    "on" => launcher.http(&snodo).await?,
                    other => {
                        let env = telemetry::exported_env(collector, other == "sampled");
                        launcher.http_env(&snodo, &env).await?
                    }
                };
                http_load::one(&server.target, Work::Echo, Expect::Echo, 1)
                    .await
                    .map_err(|e| format!("{variant}: first request failed: {e}"))?;
                servers.push(server);
            }
            tokio::time::sleep(telemetry::DRAIN).await;
            sink.take_spans();
            for (l, (load, connections)) in LOADS.iter().enumerate() {
                for v in telemetry::shuffled(variants.len(), round) {
                    let server = &servers[v];
                    let cpu0 = procs::cpu_ns(server.pid);
                    let out = http_load::run(
                        &server.target,
                        Work::Echo,
                        Expect::Echo,
                        *connections,
                        options.warmup,
                        options.measure,
                    )
                    .await;
                    let cpu1 = procs::cpu_ns(server.pid);
                    let served = out.rps() * window.as_secs_f64();
                    let spans_per_req = if matches!(variants[v], "exported" | "sampled") {
                        tokio::time::sleep(telemetry::DRAIN).await;
                        Some(sink.take_spans() as f64 / served.max(1.0))
                    } else {
                        None
                    };
                    let run = Run {
                        rps: out.rps(),
                        cpu_us_per_req: cpu0
                            .zip(cpu1)
                            .map(|(a, b)| (b.saturating_sub(a)) as f64 / 1000.0 / served.max(1.0)),
                        spans_per_req,
                        errors: out.errors,
                    };
                    eprintln!(
                        "  {load} {}: {:.0} req/s, {} errors{}",
                        variants[v],
                        run.rps,
                        run.errors,
                        run.spans_per_req
                            .map(|s| format!(", {s:.2} spans/request"))
                            .unwrap_or_default()
                    );
                    runs[l][v].push(run);
                }
            }
            for server in servers {
                server.stop().await;
            }
        }
        Ok::<_, String>(())
    })?;
    let mut md = format!(
        "Command: `cargo run --release -p snodo-bench --{}`\n\n{}\n\
         The snodo server {} ways, {} rounds of {:.1} s warm-up + {:.1} s measured, a random order each round, medians (min-max) and the median of the per-round ratios; {}. \
         {}`bare`: every tracing span and event compiled out (`tracing`'s `max_level_off`); `on`: the default build, no subscriber; \
         `exported`: every span and the metrics exported over OTLP/HTTP to a collector in the harness; \
         `sampled`: the same with the standard `traceidratio` sampler at 10 % (metrics for every request). \
         Server CPU per request counts the warm-up too.\n\n\
         | load | variant | req/s | / {} | server CPU µs/request | spans/request | errors |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
        options
            .args
            .iter()
            .map(|a| format!(" {a}"))
            .collect::<String>(),
        provenance.markdown(),
        variants.len(),
        options.rounds,
        options.warmup.as_secs_f64(),
        options.measure.as_secs_f64(),
        if pinned {
            "servers on CPU 0, load generator on CPU 1"
        } else {
            "not pinned"
        },
        match &options.baseline {
            Some(rev) =>
                format!("`before`: the same server at `{rev}`, before the instrumentation; "),
            None => String::new(),
        },
        variants[base],
    );
    let mut json = serde_json::Map::new();
    let mut verdicts = Vec::new();
    for (l, (load, _)) in LOADS.iter().enumerate() {
        let med = |v: usize, f: &dyn Fn(&Run) -> Option<f64>| {
            telemetry::median(runs[l][v].iter().filter_map(f).collect())
        };
        let ratio = |v: usize| {
            // The median of the per-round ratios: a round's runs are
            // neighbours in time.
            telemetry::median(
                runs[l][v]
                    .iter()
                    .zip(&runs[l][base])
                    .map(|(r, b)| r.rps / b.rps.max(1.0))
                    .collect(),
            )
            .unwrap_or(0.0)
        };
        let errors: u64 = runs[l].iter().flatten().map(|r| r.errors).sum();
        let mut entries = serde_json::Map::new();
        for (v, name) in variants.iter().enumerate() {
            let rps: Vec<f64> = runs[l][v].iter().map(|r| r.rps).collect();
            let lo = rps.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rps.iter().copied().fold(0.0, f64::max);
            let median_rps = med(v, &|r| Some(r.rps)).unwrap_or(0.0);
            let cpu = med(v, &|r| r.cpu_us_per_req);
            let spans = med(v, &|r| r.spans_per_req);
            let v_errors: u64 = runs[l][v].iter().map(|r| r.errors).sum();
            md.push_str(&format!(
                "| {load} | {name} | {median_rps:.0} ({lo:.0}-{hi:.0}) | {:.3} | {} | {} | {v_errors} |\n",
                ratio(v),
                cpu.map_or("-".into(), |c| format!("{c:.1}")),
                spans.map_or("-".into(), |s| format!("{s:.2}")),
            ));
            entries.insert(
                (*name).into(),
                serde_json::json!({
                    "rps_median": median_rps,
                    "over_baseline": ratio(v),
                    "cpu_us_per_req_median": cpu,
                    "spans_per_request": spans,
                    "errors": v_errors,
                    "samples": runs[l][v],
                }),
            );
        }
        // A goal holds only when its build really did what it names: the
        // collector received about one span per request (exported), or
        // about a tenth of them (sampled).
        for (name, goal, min, spans_expected) in [
            ("on", "with no subscriber", 0.98, None),
            (
                "exported",
                "exporting every span and the metrics",
                0.85,
                Some(0.95..=1.05),
            ),
            (
                "sampled",
                "exporting 10 % of the spans and every metric",
                0.85,
                Some(0.05..=0.15),
            ),
        ] {
            let Some(v) = variants.iter().position(|v| *v == name) else {
                continue;
            };
            let r = ratio(v);
            let spans = med(v, &|r| r.spans_per_req);
            let exported = match (&spans_expected, spans) {
                (None, _) => true,
                (Some(range), Some(s)) => range.contains(&s),
                (Some(_), None) => false,
            };
            let mut text = format!("{load}: {goal} at least {min}x `{}`", variants[base]);
            if let (Some(range), Some(s)) = (&spans_expected, spans) {
                text.push_str(&format!(
                    " with {:.2}-{:.2} spans/request exported ({s:.2})",
                    range.start(),
                    range.end()
                ));
            }
            verdicts.push((text, errors == 0 && exported && r >= min, r));
        }
        json.insert(
            (*load).into(),
            serde_json::json!({"baseline": variants[base], "variants": entries, "errors": errors}),
        );
    }
    let doc = telemetry::document(
        &telemetry::Settings {
            rounds: options.rounds,
            warmup: options.warmup,
            measure: options.measure,
            pinned,
            baseline: options.baseline.clone(),
        },
        json,
        provenance,
    );
    let charts = match &options.json {
        Some(path) => harness::output::write(path, &doc)?,
        None => Vec::new(),
    };
    let mut goals = String::from("\nGoals:\n\n");
    for (goal, met, ratio) in &verdicts {
        goals.push_str(&format!(
            "- {goal}: {} ({ratio:.3}x)\n",
            if *met { "met" } else { "not met" }
        ));
    }
    // The chart's name is the one next to the JSON file.
    print!("{}", harness::docs::with_charts(&md, &goals, &charts, ""));
    Ok(())
}

/// `--fanout`: three demo nodes per bus, the rate steps in each round, the
/// medians by rate.
fn fanout_main(
    options: &Options,
    dir: &std::path::Path,
    provenance: &Provenance,
) -> Result<(), String> {
    if options.build
        && let Some(cargo) = std::env::var_os("CARGO")
    {
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "--quiet", "-p", "snodo-cli"]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        if !cmd.status().map_err(|e| e.to_string())?.success() {
            return Err("building snodo-cli failed".into());
        }
    }
    let snodo = dir.join("snodo");
    if !snodo.is_file() {
        return Err(format!(
            "{} not found (cargo build --release -p snodo-cli)",
            snodo.display()
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let step = options.measure.max(Duration::from_secs(2));
    let mut md = format!(
        "Command: `cargo run --release -p snodo-bench --{}`\n\n{}\n\
         Fan-out: {} listen streams spread over {} `snodo demo` nodes, updates announced on the nodes in turn at each rate for {:.1} s; medians of {} rounds. Latency is from the announcing call to each delivery.\n\n\
         | bus | target updates/s | achieved | deliveries/s | delivered | p50 ms | p99 ms | max ms | resyncs | sustained |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        options
            .args
            .iter()
            .map(|a| format!(" {a}"))
            .collect::<String>(),
        provenance.markdown(),
        options.listeners,
        harness::fanout::NODES,
        step.as_secs_f64(),
        options.rounds,
    );
    let mut json = serde_json::Map::new();
    for bus in &options.buses {
        let url = fanout_bus_url(bus);
        let mut rounds = Vec::new();
        for round in 0..options.rounds {
            let channel = format!("snodo_bench_fanout_{}_{round}", std::process::id());
            let steps = runtime.block_on(harness::fanout::run(
                &snodo,
                &url,
                &channel,
                options.listeners,
                &FANOUT_RATES,
                step,
            ))?;
            rounds.push(steps);
        }
        let medians = harness::fanout::medians(&rounds);
        let mut rows = Vec::new();
        for s in &medians {
            md.push_str(&format!(
                "| {bus} | {} | {:.0} | {:.0} | {}/{} | {:.2} | {:.2} | {:.2} | {} | {} |\n",
                s.rate,
                s.achieved,
                s.deliveries_per_s,
                s.delivered,
                s.expected,
                s.p50_ms,
                s.p99_ms,
                s.max_ms,
                s.resyncs,
                if s.sustained() { "yes" } else { "no" }
            ));
            rows.push(serde_json::json!({
                "updates_per_s": s.rate, "achieved_updates_per_s": s.achieved, "published": s.published, "delivered": s.delivered,
                "expected": s.expected, "deliveries_per_s": s.deliveries_per_s, "p50_ms": s.p50_ms,
                "p99_ms": s.p99_ms, "max_ms": s.max_ms, "resyncs": s.resyncs, "sustained": s.sustained(),
            }));
        }
        json.insert(bus.clone(), serde_json::Value::Array(rows));
    }
    let doc = harness::fanout::document(options.listeners, options.rounds, step, json, provenance);
    let charts = match &options.json {
        Some(path) => harness::output::write(path, &doc)?,
        None => Vec::new(),
    };
    // The chart's name is the one next to the JSON file.
    print!("{}", harness::docs::with_charts(&md, "", &charts, ""));
    Ok(())
}

fn main() {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("snodo-bench: {e}");
            std::process::exit(2);
        }
    };
    match real_main(options) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("snodo-bench: {e}");
            std::process::exit(1);
        }
    }
}

fn real_main(mut options: Options) -> Result<(), String> {
    if let Some(path) = &options.charts_from {
        return harness::output::charts_from(path);
    }
    let dir = procs::exe_dir()?;
    let provenance = Provenance::collect();
    if options.fanout {
        return fanout_main(&options, &dir, &provenance);
    }
    if options.telemetry {
        return telemetry_main(&mut options, dir, &provenance);
    }
    if options.bridge {
        return bridge_main(&options, dir, provenance);
    }
    let packages = procs::packages_for(&selected(&options), &options.workloads);
    if options.build {
        procs::build_packages(&dir, &packages)?;
    }
    procs::check_binaries(&dir, &packages)?;
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let pinning = if !options.pin {
        "none (--no-pin)".to_string()
    } else if cpus < 2 {
        options.pin = false;
        format!("none ({cpus} CPU available)")
    } else if !procs::have_taskset() {
        options.pin = false;
        "none (taskset not found; install util-linux)".to_string()
    } else {
        // Before any thread exists, so every later thread inherits it.
        procs::pin_self(HARNESS_CPU)?;
        format!("servers on CPU {SERVER_CPU}, load generator on CPU {HARNESS_CPU} (taskset)")
    };
    let launcher = Launcher {
        dir,
        server_cpu: options.pin.then(|| SERVER_CPU.to_string()),
        show_stderr: options.show_stderr,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let load_before = loadavg();
    let started = Instant::now();
    let (samples, background, retries) = runtime.block_on(bench(&options, &launcher))?;
    let elapsed = started.elapsed();
    let load_after = loadavg();

    let runs = report::summarize(&samples, &options.servers, &options.workloads);
    let goals = report::goals(&runs);
    let shown_args: Vec<&str> = options
        .args
        .iter()
        .map(String::as_str)
        .filter(|a| *a != "--update-docs")
        .collect();
    // The header and the table, then the goals and notes; the charts go
    // between them.
    let mut top = format!(
        "Command: `cargo run --release -p snodo-bench --{}{}`\n\n",
        if shown_args.is_empty() { "" } else { " " },
        shown_args.join(" ")
    );
    top.push_str(&provenance.markdown());
    top.push_str(&format!(
        "\nPinning: {pinning}; the load generator is one thread (two in the shared-CPU workload): this machine has no CPU to give it more. \
         {} rounds, servers in a random order each round, {:.1} s warm-up + {:.1} s measured per run; medians, ±: half the min-max spread of the per-round rates; \
         server CPU per request and the CPU use over the measured window. \
         Load average before/after: {load_before} / {load_after}; {}. Took {:.0} s.\n\n",
        options.rounds,
        options.warmup.as_secs_f64(),
        options.measure.as_secs_f64(),
        if background.is_empty() {
            "background CPU use not checked".to_string()
        } else {
            format!(
                "other load's share of the CPUs during each round (of which the hypervisor's steal): {}; {retries} runs measured again",
                background
                    .iter()
                    .map(|(b, steal)| format!("{:.0} % ({:.0} %)", b * 100.0, steal * 100.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        elapsed.as_secs_f64()
    ));
    top.push_str(&report::table(&runs));
    let mut bottom = String::from("\nGoals:\n\n");
    bottom.push_str(&report::goals_markdown(&goals));
    let notes = report::notes(&runs);
    if !notes.is_empty() {
        bottom.push_str("\nNotes:\n\n");
        bottom.push_str(&notes);
    }
    let meta = serde_json::json!({
        "commit": provenance.commit_label(),
        "rustc": provenance.rustc,
        "cargo_lock_sha256": provenance.cargo_lock_sha256,
        "cpus": cpus,
        "cpu_model": provenance.machine.cpu_model,
        "kernel": harness::provenance::kernel(),
        "pinning": pinning,
        "rounds": options.rounds,
        "warmup_s": options.warmup.as_secs_f64(),
        "measure_s": options.measure.as_secs_f64(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "background_cpu_share_per_round": background.iter().map(|b| b.0).collect::<Vec<_>>(),
        "steal_share_per_round": background.iter().map(|b| b.1).collect::<Vec<_>>(),
        "runs_measured_again": retries,
        "seconds": elapsed.as_secs_f64(),
    });
    let doc = report::document(meta, runs, goals, &provenance);
    let charts = match &options.json {
        Some(path) => harness::output::write(path, &doc)?,
        None => Vec::new(),
    };
    // The charts' names are those next to the JSON file.
    println!("{}", harness::docs::with_charts(&top, &bottom, &charts, ""));
    if options.update_docs {
        let root = harness::provenance::workspace_root();
        let charts = harness::output::write_charts(&root.join("bench/results"), "latest", &doc)?;
        harness::docs::update(&root, &top, &bottom, &charts)?;
    }
    Ok(())
}

fn selected(options: &Options) -> Vec<Spec> {
    SERVERS
        .into_iter()
        .filter(|s| options.servers.contains(&s.name))
        .collect()
}

fn expect_for(spec: &Spec) -> Expect {
    expect_of(spec, Work::Echo)
}

/// How `spec`'s answers to `work` are judged (the ceiling's are fixed).
fn expect_of(spec: &Spec, work: Work) -> Expect {
    match (spec.name, work) {
        ("ceiling", _) => Expect::Ceiling,
        (_, Work::Add) => Expect::Add,
        (_, Work::List) => Expect::List,
        (_, Work::Echo) => Expect::Echo,
    }
}

/// CPU time of the server, of the harness and of the machine at the start
/// of a run, to tell how much other processes used during it.
struct CpuMark {
    server: Option<u64>,
    harness: Option<u64>,
    machine: Option<(u64, u64)>,
}

impl CpuMark {
    fn now(pid: u32) -> Self {
        Self {
            server: procs::cpu_ns(pid),
            harness: procs::cpu_ns(std::process::id()),
            machine: machine_ticks(),
        }
    }

    /// The share of all CPUs that other processes used since this mark:
    /// the machine's busy time less the server's and the harness's.
    fn others(&self, pid: u32) -> Option<f64> {
        const NS_PER_TICK: f64 = 10_000_000.0; // USER_HZ is 100 on Linux
        let (busy0, total0) = self.machine?;
        let (busy1, total1) = machine_ticks()?;
        let total = total1.checked_sub(total0).filter(|t| *t > 0)? as f64 * NS_PER_TICK;
        let busy = busy1.saturating_sub(busy0) as f64 * NS_PER_TICK;
        let ours = procs::cpu_ns(pid)?.saturating_sub(self.server?)
            + procs::cpu_ns(std::process::id())?.saturating_sub(self.harness?);
        Some(((busy - ours as f64) / total).max(0.0))
    }
}

/// A run during which other processes used more than this share of all CPUs
/// is measured again, after waiting for an idle machine.
const NOISY_RUN: f64 = 0.10;
/// Most runs measured again in one benchmark.
const MAX_RETRIES: usize = 24;

/// Runs `$run` (an expression producing an `Outcome`) until it was not
/// disturbed by other processes, within the retry budget; evaluates to the
/// last sample.
macro_rules! measured {
    ($options:expr, $retries:expr, $pid:expr, $label:expr, $run:expr) => {{
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mark = CpuMark::now($pid);
            let window = procs::WindowCpu::spawn($pid, $options.warmup, $options.measure);
            let out = $run;
            let sample = sample_of(&out, Some($pid), window.join());
            let others = mark.others($pid);
            match others {
                Some(o)
                    if o > NOISY_RUN
                        && $options.wait_idle
                        && attempt < 3
                        && *$retries < MAX_RETRIES =>
                {
                    *$retries += 1;
                    eprintln!(
                        "  {}: other processes used {:.0} % of the CPUs; measuring again",
                        $label,
                        o * 100.0
                    );
                    wait_for_idle().await;
                }
                _ => break sample,
            }
        }
    }};
}

fn sample_of(out: &http_load::Outcome, pid: Option<u32>, cpu: Option<procs::CpuUse>) -> Sample {
    let has = out.completed > 0;
    let pct = |ns: u64, c: &procs::CpuUse| ns as f64 * 100.0 / c.wall.as_nanos().max(1) as f64;
    Sample {
        server_cpu: cpu.as_ref().map(|c| pct(c.server_ns, c)),
        loadgen_cpu: cpu.as_ref().map(|c| pct(c.harness_ns, c)),
        cpu_us_per_req: cpu
            .filter(|_| has)
            .map(|c| c.server_ns as f64 / 1000.0 / out.completed as f64),
        target_rps: None,
        scheduler_late_p99_us: out.scheduler_late_p99_ns.map(|n| n as f64 / 1000.0),
        rps: has.then(|| out.rps()),
        p50_us: has.then(|| out.hist.percentile(50.0) as f64 / 1000.0),
        p99_us: has.then(|| out.hist.percentile(99.0) as f64 / 1000.0),
        p999_us: has.then(|| out.hist.percentile(99.9) as f64 / 1000.0),
        peak_rss_kb: pid.and_then(procs::memory_kb).map(|(_, hwm)| hwm),
        errors: out.errors,
        bytes_per_response: has.then(|| out.bytes as f64 / out.completed as f64),
        first_error: out.first_error.clone(),
    }
}

fn log_sample(round: usize, workload: &str, server: &str, s: &Sample) {
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
    eprintln!(
        "  round {round} {workload:<16} {server:<10} rps {:>9} p50 {:>8} µs p99 {:>8} µs rss {:>6} KiB cpu {:>4}/{:>4} %{}",
        f(s.rps),
        f(s.p50_us),
        f(s.p99_us),
        s.peak_rss_kb
            .map_or_else(|| "-".to_string(), |k| k.to_string()),
        s.server_cpu
            .map_or_else(|| "-".to_string(), |c| format!("{c:.0}")),
        s.loadgen_cpu
            .map_or_else(|| "-".to_string(), |c| format!("{c:.0}")),
        if s.errors > 0 {
            format!(
                "  {} ERRORS: {}",
                s.errors,
                s.first_error.as_deref().unwrap_or("?")
            )
        } else {
            String::new()
        }
    );
}

fn failed(error: String) -> Sample {
    Sample {
        errors: 1,
        first_error: Some(error),
        ..Sample::default()
    }
}

/// Busy time of all CPUs over `window`, as a fraction of their total time,
/// from `/proc/stat` (what other processes use while the harness is idle).
async fn cpu_busy(window: Duration) -> Option<f64> {
    fn read() -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|n| n.parse().ok())
            .collect();
        let total: u64 = fields.iter().take(8).sum();
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some((total, idle))
    }
    let (t0, i0) = read()?;
    tokio::time::sleep(window).await;
    let (t1, i1) = read()?;
    let total = t1.checked_sub(t0).filter(|t| *t > 0)?;
    Some(1.0 - (i1 - i0) as f64 / total as f64)
}

/// Most CPU other processes may use (fraction of all CPUs) for a round to
/// start; the harness waits up to [`IDLE_WAIT`] for it.
const IDLE_THRESHOLD: f64 = 0.10;
/// How long to wait for an idle machine before each round.
const IDLE_WAIT: Duration = Duration::from_secs(45);

/// Waits (bounded) until the machine looks idle; returns the busy fraction
/// seen last.
async fn wait_for_idle() -> Option<f64> {
    let started = Instant::now();
    let mut said = false;
    loop {
        let busy = cpu_busy(Duration::from_millis(1000)).await?;
        if busy <= IDLE_THRESHOLD || started.elapsed() >= IDLE_WAIT {
            if said || busy > IDLE_THRESHOLD {
                eprintln!(
                    "  other processes use {:.0} % of the CPUs ({:.0} s waited)",
                    busy * 100.0,
                    started.elapsed().as_secs_f64()
                );
            }
            return Some(busy);
        }
        if !said {
            eprintln!(
                "  waiting for an idle machine: other processes use {:.0} % of the CPUs",
                busy * 100.0
            );
            said = true;
        }
    }
}

/// CPU ticks (`USER_HZ`) this process and its waited-for children used.
fn own_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime is field 14.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|n| n.parse().ok())
        .collect();
    (fields.len() == 4).then(|| fields.iter().sum())
}

/// Busy and total CPU ticks of the whole machine.
fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|n| n.parse().ok())
        .collect();
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// How much of the machine other processes used between two marks.
struct Interference {
    own: Option<u64>,
    machine: Option<(u64, u64)>,
    steal: Option<u64>,
}

/// Ticks the hypervisor gave to other guests while this machine's CPUs
/// wanted to run (`steal` in `/proc/stat`).
fn steal_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().next()?.split_whitespace().nth(8)?.parse().ok()
}

impl Interference {
    fn start() -> Self {
        Self {
            own: own_ticks(),
            machine: machine_ticks(),
            steal: steal_ticks(),
        }
    }

    /// The hypervisor's steal as a share of all CPUs since `start` (part of
    /// what [`Interference::others`] counts).
    fn steal(&self) -> Option<f64> {
        let (_, total0) = self.machine?;
        let (_, total1) = machine_ticks()?;
        let total = total1.checked_sub(total0).filter(|t| *t > 0)?;
        Some(steal_ticks()?.saturating_sub(self.steal?) as f64 / total as f64)
    }

    /// Others' share of all CPUs since `start`.
    fn others(&self) -> Option<f64> {
        let (busy0, total0) = self.machine?;
        let (busy1, total1) = machine_ticks()?;
        let own = own_ticks()?.saturating_sub(self.own?);
        let total = total1.checked_sub(total0).filter(|t| *t > 0)?;
        let others = (busy1.saturating_sub(busy0)).saturating_sub(own);
        Some(others as f64 / total as f64)
    }
}

async fn bench(
    options: &Options,
    launcher: &Launcher,
) -> Result<(Samples, Vec<(f64, f64)>, usize), String> {
    let mut samples = Samples::default();
    let mut background = Vec::new();
    let mut retries = 0;
    let specs = selected(options);
    let stdio_specs: Vec<Spec> = specs.iter().copied().filter(|s| s.stdio).collect();
    let any = |names: &[&str]| names.iter().any(|n| options.workloads.contains(n));
    for round in 1..=options.rounds {
        eprintln!("round {round}/{}", options.rounds);
        if options.wait_idle {
            wait_for_idle().await;
        }
        let mark = Interference::start();
        if any(&[
            "rss_idle_http",
            "http_call_c1",
            "http_call_c16",
            "http_call_c64",
            "http_add_c64",
            "http_open_50",
            "http_open_80",
            "http_open_same",
            "http_list_c16",
        ]) {
            http_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&[procs::VALIDATED, procs::VALIDATED_BASIC]) {
            validated_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&["http_call_c64_2cpu"]) && options.pin {
            two_cpu_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&["http_call_auth_c16", "http_call_jwt_sig_c16"]) {
            auth_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&TASK_WORKLOADS.map(|(w, _)| w)) {
            task_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&["stdio_call_f1", "stdio_call_f64"]) {
            stdio_round(
                options,
                launcher,
                &stdio_specs,
                round,
                &mut samples,
                &mut retries,
            )
            .await?;
        }
        if any(&["startup_http", "startup_stdio"]) {
            startup_round(options, launcher, &specs, round, &mut samples).await;
        }
        if any(&["rss_listen_1000"]) {
            listen_round(launcher, &specs, round, &mut samples).await;
        }
        if any(&["http_session_call_c64", "rss_sessions_1000"]) {
            session_round(options, launcher, &specs, round, &mut samples, &mut retries).await;
        }
        if let Some(o) = mark.others() {
            let steal = mark.steal().unwrap_or(0.0);
            eprintln!(
                "  other processes used {:.0} % of the CPUs during round {round} (the hypervisor's steal: {:.0} %)",
                o * 100.0,
                steal * 100.0
            );
            background.push((o, steal));
        }
    }
    Ok((samples, background, retries))
}

/// The order servers run in this round: random, so that none always runs
/// first (or right after a given peer).
fn order(n: usize, round: usize) -> Vec<usize> {
    harness::telemetry::shuffled(n, round)
}

/// The closed-loop `tools/call` workloads, the open-loop ones (at a share
/// of each server's own `http_call_c64` rate of this round), `tools/list`,
/// and the idle and peak memory.
async fn http_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    let mut servers = Vec::new();
    for spec in specs {
        let server = launcher.http(spec).await?;
        http_load::one(&server.target, Work::Echo, expect_for(spec), 1)
            .await
            .map_err(|e| format!("{}: first request failed: {e}", spec.name))?;
        let idle = Sample {
            peak_rss_kb: procs::memory_kb(server.pid).map(|(rss, _)| rss),
            ..Sample::default()
        };
        samples.add("rss_idle_http", spec.name, idle);
        servers.push((*spec, server));
    }
    let mut own_max: Vec<Option<f64>> = vec![None; servers.len()];
    for (workload, work, concurrency) in [
        ("http_call_c1", Work::Echo, 1),
        ("http_call_c16", Work::Echo, 16),
        ("http_call_c64", Work::Echo, 64),
        ("http_add_c64", Work::Add, 64),
    ] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for i in order(servers.len(), round) {
            let (spec, server) = &servers[i];
            if report::not_applicable(workload, spec.name).is_some() {
                continue;
            }
            let s = measured!(
                options,
                retries,
                server.pid,
                format!("{workload} {}", spec.name),
                http_load::run(
                    &server.target,
                    work,
                    expect_of(spec, work),
                    concurrency,
                    options.warmup,
                    options.measure,
                )
                .await
            );
            if workload == "http_call_c64" && s.errors == 0 {
                own_max[i] = s.rps;
            }
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
        }
    }
    // The ceiling's closed-loop maximum is the load generator's: it runs the
    // open-loop workloads at snodo's rate instead, which shows what the load
    // generator and the kernel alone leave at that rate.
    let snodo_max = servers
        .iter()
        .position(|(spec, _)| spec.name == "snodo")
        .and_then(|i| own_max[i]);
    // One rate for every server: 80 % of the slowest library server's own
    // maximum in this round.
    let slowest_max = servers
        .iter()
        .zip(&own_max)
        .filter(|((spec, _), _)| spec.name != "ceiling")
        .map(|(_, max)| *max)
        .collect::<Option<Vec<f64>>>()
        .and_then(|maxes| maxes.into_iter().reduce(f64::min));
    for (workload, share) in [
        ("http_open_50", 0.5),
        ("http_open_80", 0.8),
        ("http_open_same", 0.8),
    ] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for i in order(servers.len(), round) {
            let (spec, server) = &servers[i];
            if report::not_applicable(workload, spec.name).is_some() {
                continue;
            }
            let (max, whose) = if workload == "http_open_same" {
                (slowest_max, "every server")
            } else if spec.name == "ceiling" {
                (snodo_max, "snodo")
            } else {
                (own_max[i], "this server")
            };
            let Some(max) = max else {
                let s = failed(format!(
                    "{workload} needs this round's http_call_c64 rate of {whose} (run that workload and server too)"
                ));
                samples.add(workload, spec.name, s);
                continue;
            };
            let rate = max * share;
            let mut s = measured!(
                options,
                retries,
                server.pid,
                format!("{workload} {}", spec.name),
                harness::open_load::run(
                    &server.target,
                    Work::Echo,
                    expect_for(spec),
                    rate,
                    64,
                    options.warmup,
                    options.measure,
                )
                .await
            );
            s.target_rps = Some(rate);
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
        }
    }
    if options.workloads.contains(&"http_list_c16") {
        for i in order(servers.len(), round) {
            let (spec, server) = &servers[i];
            if report::not_applicable("http_list_c16", spec.name).is_some() {
                continue;
            }
            let s = measured!(
                options,
                retries,
                server.pid,
                format!("http_list_c16 {}", spec.name),
                http_load::run(
                    &server.target,
                    Work::List,
                    Expect::List,
                    16,
                    options.warmup,
                    options.measure,
                )
                .await
            );
            log_sample(round, "http_list_c16", spec.name, &s);
            samples.add("http_list_c16", spec.name, s);
        }
    }
    for (_, server) in servers {
        server.stop().await;
    }
    Ok(())
}

/// `tools/call` at 64 connections with arguments validated, in each
/// validated workload selected: each server's validating build for it,
/// checked first to really refuse an argument that breaks the schema (and
/// that the handler would accept).
async fn validated_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    for workload in [procs::VALIDATED, procs::VALIDATED_BASIC] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for i in order(specs.len(), round) {
            let spec = &specs[i];
            let Some(build) = spec.validating(workload) else {
                continue;
            };
            let server = launcher.http_validated(build).await?;
            let s = match http_load::refuses_invalid(&server.target).await {
                Ok(true) => measured!(
                    options,
                    retries,
                    server.pid,
                    format!("{workload} {}", spec.name),
                    http_load::run(
                        &server.target,
                        Work::Echo,
                        expect_for(spec),
                        64,
                        options.warmup,
                        options.measure,
                    )
                    .await
                ),
                Ok(false) => failed(format!(
                    "{}: the validating build accepted a limit over the schema's maximum",
                    spec.name
                )),
                Err(e) => failed(format!("{}: validation probe: {e}", spec.name)),
            };
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
            server.stop().await;
        }
    }
    Ok(())
}

/// The CPUs both sides share in the several-core workload.
const ALL_CPUS: &str = "0,1";

/// `tools/call` at 64 connections with the server on both CPUs and the
/// load generator (two threads of 32 connections) sharing them.
async fn two_cpu_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    const WORKLOAD: &str = "http_call_c64_2cpu";
    let wide = Launcher {
        server_cpu: Some(ALL_CPUS.into()),
        ..launcher.clone()
    };
    for i in order(specs.len(), round) {
        let spec = &specs[i];
        if report::not_applicable(WORKLOAD, spec.name).is_some() {
            continue;
        }
        let server = wide.http(spec).await?;
        http_load::one(&server.target, Work::Echo, expect_for(spec), 1)
            .await
            .map_err(|e| format!("{}: first request failed: {e}", spec.name))?;
        let s = measured!(
            options,
            retries,
            server.pid,
            format!("{WORKLOAD} {}", spec.name),
            two_threads(&server.target, expect_for(spec), options)
        );
        log_sample(round, WORKLOAD, spec.name, &s);
        samples.add(WORKLOAD, spec.name, s);
        server.stop().await;
    }
    Ok(())
}

/// Two load generator threads on both CPUs, 32 connections each; blocks
/// until both finish.
fn two_threads(
    target: &http_load::Target,
    expect: Expect,
    options: &Options,
) -> http_load::Outcome {
    let (warmup, measure) = (options.warmup, options.measure);
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let target = target.clone();
            std::thread::spawn(move || {
                procs::pin_this_thread(ALL_CPUS)?;
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(runtime.block_on(http_load::run(
                    &target,
                    Work::Echo,
                    expect,
                    32,
                    warmup,
                    measure,
                )))
            })
        })
        .collect();
    let mut total = http_load::Outcome {
        window: measure,
        ..http_load::Outcome::default()
    };
    for t in threads {
        match t.join() {
            Ok(Ok(part)) => total.merge(part),
            Ok(Err(e)) => total.error(e),
            Err(_) => total.error("a load generator thread panicked".into()),
        }
    }
    total
}

/// The protected workload: snodo's resource server checking a JWT on every
/// call, the issuer's keys cached after the first.
async fn auth_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    let issuer = harness::issuer::Issuer::start().await?;
    for (workload, every_call) in [
        ("http_call_auth_c16", false),
        ("http_call_jwt_sig_c16", true),
    ] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for spec in specs {
            if report::not_applicable(workload, spec.name).is_some() {
                continue;
            }
            let server = launcher
                .http_protected(spec, &issuer.url, every_call)
                .await?;
            let mut target = server.target.clone();
            let url = format!("http://{}{}", target.addr, target.path);
            let token = issuer.token(&url)?;
            target.authorization = Some(
                http::HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|e| e.to_string())?,
            );
            http_load::one(&target, Work::Echo, expect_for(spec), 1)
                .await
                .map_err(|e| format!("{}: first protected request failed: {e}", spec.name))?;
            let s = measured!(
                options,
                retries,
                server.pid,
                format!("{workload} {}", spec.name),
                http_load::run(
                    &target,
                    Work::Echo,
                    expect_for(spec),
                    16,
                    options.warmup,
                    options.measure,
                )
                .await
            );
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
            server.stop().await;
        }
    }
    Ok(())
}

/// The task workloads and the store each uses.
const TASK_WORKLOADS: [(&str, &str); 3] = [
    ("http_task_memory_c16", "memory"),
    ("http_task_sqlite_c16", "sqlite"),
    ("http_task_postgres_c16", "postgres"),
];

/// Where the PostgreSQL task workload keeps its tasks (`SNODO_POSTGRES_URL`,
/// else the server on 127.0.0.1:5432, database `test`).
fn bench_postgres_url() -> String {
    std::env::var("SNODO_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// Task create-to-result throughput for each store (snodo only).
async fn task_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("snodo-bench-tasks-{}", std::process::id()));
    for (workload, store) in TASK_WORKLOADS {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for spec in specs {
            if report::not_applicable(workload, spec.name).is_some() {
                continue;
            }
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let store = match store {
                "sqlite" => format!("sqlite:{}", dir.join("tasks.db").display()),
                "postgres" => bench_postgres_url(),
                other => other.to_string(),
            };
            let server = launcher.http_tasks(spec, &store).await?;
            let s = measured!(
                options,
                retries,
                server.pid,
                format!("{workload} {}", spec.name),
                harness::task_load::run(&server.target, 16, options.warmup, options.measure).await
            );
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
            server.stop().await;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Workload 3.
async fn stdio_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    let mut servers = Vec::new();
    for spec in specs {
        let mut server = launcher.stdio(spec)?;
        if let Err(e) = tokio::time::timeout(Duration::from_secs(20), stdio_load::one(&mut server))
            .await
            .unwrap_or_else(|_| Err("no answer within 20 s".into()))
        {
            return Err(format!("{} (stdio): first request failed: {e}", spec.name));
        }
        servers.push((*spec, server));
    }
    for (workload, in_flight) in [("stdio_call_f1", 1), ("stdio_call_f64", 64)] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for i in order(servers.len(), round) {
            let (spec, server) = &mut servers[i];
            let pid = server.pid;
            let s = measured!(
                options,
                retries,
                pid,
                format!("{workload} {}", spec.name),
                stdio_load::run(server, in_flight, options.warmup, options.measure).await
            );
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
        }
    }
    for (_, server) in servers {
        server.stop().await;
    }
    Ok(())
}

/// Workload 4: spawn to first correct response, `startup_reps` times.
async fn startup_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
) {
    for _ in 0..options.startup_reps {
        for spec in specs.iter().filter(|s| {
            options.workloads.contains(&"startup_http")
                && report::not_applicable("startup_http", s.name).is_none()
        }) {
            let t0 = Instant::now();
            let result = async {
                let server = launcher.http(spec).await?;
                let r = http_load::one(&server.target, Work::Echo, expect_for(spec), 1).await;
                let elapsed = t0.elapsed();
                server.stop().await;
                r.map(|()| elapsed)
            }
            .await;
            let s = match result {
                Ok(elapsed) => Sample {
                    p50_us: Some(elapsed.as_secs_f64() * 1e6),
                    ..Sample::default()
                },
                Err(e) => failed(e),
            };
            log_sample(round, "startup_http", spec.name, &s);
            samples.add("startup_http", spec.name, s);
        }
        for spec in specs.iter().filter(|s| {
            s.stdio
                && options.workloads.contains(&"startup_stdio")
                && report::not_applicable("startup_stdio", s.name).is_none()
        }) {
            let t0 = Instant::now();
            let result = async {
                let mut server = launcher.stdio(spec)?;
                let r = tokio::time::timeout(Duration::from_secs(20), stdio_load::one(&mut server))
                    .await
                    .unwrap_or_else(|_| Err("no answer within 20 s".into()));
                let elapsed = t0.elapsed();
                server.stop().await;
                r.map(|()| elapsed)
            }
            .await;
            let s = match result {
                Ok(elapsed) => Sample {
                    p50_us: Some(elapsed.as_secs_f64() * 1e6),
                    ..Sample::default()
                },
                Err(e) => failed(e),
            };
            log_sample(round, "startup_stdio", spec.name, &s);
            samples.add("startup_stdio", spec.name, s);
        }
    }
}

/// Workload 5b: RSS with 1 000 open listen streams, on a fresh server.
async fn listen_round(launcher: &Launcher, specs: &[Spec], round: usize, samples: &mut Samples) {
    for spec in specs
        .iter()
        .filter(|s| s.listen && report::not_applicable("rss_listen_1000", s.name).is_none())
    {
        let s = fresh_rss(launcher.http(spec).await, |target| async move {
            http_load::one(&target, Work::Echo, Expect::Echo, 1).await?;
            let streams = http_load::open_listen_streams(&target, LISTEN_STREAMS).await?;
            Ok(Box::new(streams) as Box<dyn std::any::Any>)
        })
        .await;
        log_sample(round, "rss_listen_1000", spec.name, &s);
        samples.add("rss_listen_1000", spec.name, s);
    }
}

/// The RSS of a fresh server process once `open` has set up what it holds
/// (kept alive until the RSS is read), as a sample.
async fn fresh_rss<F, Fut>(server: Result<procs::HttpServer, String>, open: F) -> Sample
where
    F: FnOnce(http_load::Target) -> Fut,
    Fut: std::future::Future<Output = Result<Box<dyn std::any::Any>, String>>,
{
    let result = async {
        let server = server?;
        let r = async {
            let held = open(server.target.clone()).await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let rss = procs::memory_kb(server.pid).map(|(rss, _)| rss);
            drop(held);
            Ok::<_, String>(rss)
        }
        .await;
        server.stop().await;
        r
    }
    .await;
    match result {
        Ok(rss) => Sample {
            peak_rss_kb: rss,
            ..Sample::default()
        },
        Err(e) => failed(e),
    }
}

/// The initialize-era workloads: `tools/call` inside sessions on a server
/// in its stateful mode, and the memory of idle sessions (fresh process).
async fn session_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) {
    let applicable = |workload: &str, spec: &Spec| {
        options.workloads.contains(&workload)
            && report::not_applicable(workload, spec.name).is_none()
    };
    for spec in specs {
        if !applicable("http_session_call_c64", spec) {
            continue;
        }
        let server = match launcher.http_sessions(spec).await {
            Ok(server) => server,
            Err(e) => {
                let s = failed(e);
                log_sample(round, "http_session_call_c64", spec.name, &s);
                samples.add("http_session_call_c64", spec.name, s);
                continue;
            }
        };
        let s = measured!(
            options,
            retries,
            server.pid,
            format!("http_session_call_c64 {}", spec.name),
            http_load::run_sessions(
                &server.target,
                SESSION_CONCURRENCY,
                options.warmup,
                options.measure,
            )
            .await
        );
        log_sample(round, "http_session_call_c64", spec.name, &s);
        samples.add("http_session_call_c64", spec.name, s);
        server.stop().await;
    }
    for spec in specs {
        if !applicable("rss_sessions_1000", spec) {
            continue;
        }
        let s = fresh_rss(launcher.http_sessions(spec).await, |target| async move {
            http_load::open_sessions(&target, IDLE_SESSIONS).await?;
            Ok(Box::new(()) as Box<dyn std::any::Any>)
        })
        .await;
        log_sample(round, "rss_sessions_1000", spec.name, &s);
        samples.add("rss_sessions_1000", spec.name, s);
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}
