//! `--gateway`: what one gateway hop costs. The same HTTP backend (the
//! benchmark's snodo server with its `echo` tool, initialize-era sessions)
//! reached six ways, in one run and a random order each round:
//!
//! - `direct`: the load generator talks to the backend;
//! - `bare-hop`: through `bench-server-hop`, a reverse proxy that does no
//!   MCP work (the limit of one hop on this machine);
//! - `snodo-proxy`: through `snodo proxy` (the tool as `b.echo`);
//! - `snodo-proxy-limits`: the same with a timeout, a concurrency cap, a
//!   rate and a circuit breaker configured (none reached);
//! - `mcp-proxy`: through mcp-proxy 0.6 from crates.io, minimal (`b/echo`);
//! - `mcp-proxy-limits`: the same with a timeout, a concurrency cap, a rate
//!   limit and a circuit breaker (none reached).
//!
//! Clients at 1, 8 and 32 in flight, each in its own initialize-era
//! session, as in mcp-proxy's own overhead harness; every answer checked.
//! Then the stdio hop: the server over stdio directly, behind a bare byte
//! relay between the same pipes (`bench-server-hop --stdio`), and behind
//! `snodo serve --stdio`, at 1 and 8 requests in flight.
//!
//! Each front and its backend get a backend of their own, started afresh
//! each round; all the servers share the servers' CPU.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::http_load::{self, Outcome};
use super::procs::{self, HttpServer, Launcher, Spec, StdioServer, WindowCpu};
use super::provenance::Provenance;
use super::stdio_load;
use super::telemetry::{median, ratio_median, shuffled};

/// The HTTP loads: (name, clients in flight).
pub(crate) const LOADS: [(&str, usize); 3] = [("c1", 1), ("c8", 8), ("c32", 32)];
/// The HTTP variants and the name each serves the echo tool under,
/// `direct` first (the ratios' base).
pub(crate) const VARIANTS: [(&str, &str); 6] = [
    ("direct", "echo"),
    ("bare-hop", "echo"),
    ("snodo-proxy", "b.echo"),
    ("snodo-proxy-limits", "b.echo"),
    ("mcp-proxy", "b/echo"),
    ("mcp-proxy-limits", "b/echo"),
];
/// The stdio loads: (name, requests in flight).
pub(crate) const STDIO_LOADS: [(&str, usize); 2] = [("stdio_f1", 1), ("stdio_f8", 8)];
/// The stdio variants, `direct` first.
pub(crate) const STDIO_VARIANTS: [&str; 3] = ["direct", "byte-relay", "snodo-serve"];

/// The bare hop's package and binary.
pub(crate) const HOP: &str = "bench-server-hop";
/// mcp-proxy's package and binary.
pub(crate) const MCP_PROXY: &str = "bench-server-mcp-proxy";
/// The `snodo` command's binary.
const SNODO: &str = "snodo";

/// One measured run.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Run {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    /// CPU time of the front (the proxy; the server itself for `direct`)
    /// per completed call, in µs.
    front_cpu_us: Option<f64>,
    /// CPU time of the backend per completed call, in µs (`None` for
    /// `direct` and stdio).
    backend_cpu_us: Option<f64>,
    /// How often the front was preempted per completed call (a woken
    /// process, the backend on the same CPU most often, taking the CPU from
    /// it).
    front_preempted: Option<f64>,
    /// How often the backend was preempted per completed call.
    backend_preempted: Option<f64>,
    errors: u64,
    first_error: Option<String>,
}

impl Run {
    fn of(out: &Outcome, front: Option<procs::CpuUse>, backend: Option<procs::CpuUse>) -> Run {
        let per_call = |c: Option<procs::CpuUse>| {
            c.filter(|_| out.completed > 0)
                .map(|c| c.server_ns as f64 / 1000.0 / out.completed as f64)
        };
        let preempted = |c: Option<procs::CpuUse>| {
            c.filter(|_| out.completed > 0)
                .map(|c| c.server_preempted as f64 / out.completed as f64)
        };
        Run {
            rps: out.rps(),
            p50_us: out.hist.percentile(50.0) as f64 / 1000.0,
            p99_us: out.hist.percentile(99.0) as f64 / 1000.0,
            front_cpu_us: per_call(front),
            backend_cpu_us: per_call(backend),
            front_preempted: preempted(front),
            backend_preempted: preempted(backend),
            errors: out.errors,
            first_error: out.first_error.clone(),
        }
    }
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
    /// Where the proxies' configuration files go.
    pub(crate) scratch: PathBuf,
    /// The variants to run (`direct` always runs); `None`: every one.
    pub(crate) only: Option<Vec<String>>,
}

impl Setup {
    fn runs(&self, variant: &str) -> bool {
        variant == "direct"
            || self
                .only
                .as_ref()
                .is_none_or(|only| only.iter().any(|v| v == variant))
    }
}

/// A running HTTP variant: the process the load generator talks to and
/// the backend behind it (none for `direct`).
struct Running {
    front: HttpServer,
    backend: Option<HttpServer>,
}

impl Running {
    async fn stop(self) {
        self.front.stop().await;
        if let Some(b) = self.backend {
            b.stop().await;
        }
    }
}

/// The `snodo proxy` file for one backend, with or without limits.
fn snodo_config(url: &str, limits: bool) -> String {
    let mut text = format!("[backends.b]\nurl = \"{url}\"\n");
    if limits {
        text.push_str(
            "timeout = 60\nconcurrency = 1024\nrate = \"1000000/s\"\n\
             circuit_breaker = { failures = 100, open_for = 30 }\n",
        );
    }
    text
}

async fn start(setup: &Setup, spec: &Spec, variant: &str, round: usize) -> Result<Running, String> {
    let launcher = &setup.launcher;
    let backend = launcher.http_sessions(spec).await?;
    if variant == "direct" {
        return Ok(Running {
            front: backend,
            backend: None,
        });
    }
    let url = format!("http://{}{}", backend.target.addr, backend.target.path);
    let front = match variant {
        "bare-hop" => {
            let mut cmd = launcher.command_of(HOP, &[], "--http");
            cmd.arg(&url);
            launcher.http_spawned(HOP, cmd).await?
        }
        "snodo-proxy" | "snodo-proxy-limits" => {
            let config = setup.scratch.join(format!("{variant}-{round}.toml"));
            std::fs::write(&config, snodo_config(&url, variant.ends_with("limits")))
                .map_err(|e| format!("{}: {e}", config.display()))?;
            let mut cmd = launcher.command_of(SNODO, &[("RUST_LOG", "error")], "proxy");
            cmd.args(["--http", "127.0.0.1:0"]).arg(&config);
            launcher.http_spawned("snodo proxy", cmd).await?
        }
        _ => {
            let mut cmd = if variant.ends_with("limits") {
                let mut cmd = launcher.command_of(MCP_PROXY, &[], "--limits");
                cmd.arg(&url);
                cmd
            } else {
                launcher.command_of(MCP_PROXY, &[], &url)
            };
            cmd.env("RUST_LOG", "error");
            launcher.http_spawned(MCP_PROXY, cmd).await?
        }
    };
    Ok(Running {
        front,
        backend: Some(backend),
    })
}

/// The stdio variant `variant`: the server, or a front with the server as
/// its child.
fn start_stdio(setup: &Setup, spec: &Spec, variant: &str) -> Result<StdioServer, String> {
    let launcher = &setup.launcher;
    let server = launcher.dir.join(spec.bin).display().to_string();
    match variant {
        "direct" => launcher.stdio(spec),
        "byte-relay" => {
            let mut cmd = launcher.command_of(HOP, &[], "--stdio");
            cmd.args([server.as_str(), "--stdio"]);
            launcher.stdio_spawned(HOP, cmd)
        }
        _ => {
            let mut cmd = launcher.command_of(SNODO, &[("RUST_LOG", "error")], "serve");
            cmd.args(["--stdio", "--server-stderr", "quiet", "--"])
                .args([server.as_str(), "--stdio"]);
            launcher.stdio_spawned("snodo serve", cmd)
        }
    }
}

/// A short checked run before the measured ones: the variant answers.
async fn first_calls(target: &http_load::Target, tool: &'static str) -> Result<(), String> {
    let out = http_load::run_sessions_of(
        target,
        tool,
        1,
        Duration::from_millis(50),
        Duration::from_millis(100),
    )
    .await;
    match (out.errors, out.completed) {
        (0, n) if n > 0 => Ok(()),
        (e, _) => Err(format!(
            "{e} errors, {} calls: {}",
            out.completed,
            out.first_error.unwrap_or_default()
        )),
    }
}

/// Runs every round, writes the JSON if asked, and returns the markdown
/// report; any error fails the run once the JSON is written.
pub(crate) async fn run(setup: Setup, spec: Spec) -> Result<(String, serde_json::Value), String> {
    std::fs::create_dir_all(&setup.scratch)
        .map_err(|e| format!("{}: {e}", setup.scratch.display()))?;
    // http[load][variant], stdio[load][variant]
    let mut http: Vec<Vec<Vec<Run>>> = vec![vec![Vec::new(); VARIANTS.len()]; LOADS.len()];
    let mut stdio: Vec<Vec<Vec<Run>>> =
        vec![vec![Vec::new(); STDIO_VARIANTS.len()]; STDIO_LOADS.len()];
    for round in 1..=setup.rounds {
        eprintln!("round {round}/{}", setup.rounds);
        for (l, (load, clients)) in LOADS.iter().enumerate() {
            for v in shuffled(VARIANTS.len(), round * 7 + l) {
                let (variant, tool) = VARIANTS[v];
                if !setup.runs(variant) {
                    continue;
                }
                let running = start(&setup, &spec, variant, round).await?;
                first_calls(&running.front.target, tool)
                    .await
                    .map_err(|e| format!("{variant}: the first calls failed: {e}"))?;
                let front_cpu = WindowCpu::spawn(running.front.pid, setup.warmup, setup.measure);
                let backend_cpu = running
                    .backend
                    .as_ref()
                    .map(|b| WindowCpu::spawn(b.pid, setup.warmup, setup.measure));
                let out = http_load::run_sessions_of(
                    &running.front.target,
                    tool,
                    *clients,
                    setup.warmup,
                    setup.measure,
                )
                .await;
                let run = Run::of(
                    &out,
                    front_cpu.join(),
                    backend_cpu.and_then(WindowCpu::join),
                );
                log(load, variant, &run);
                http[l][v].push(run);
                running.stop().await;
            }
        }
        for (l, (load, in_flight)) in STDIO_LOADS.iter().enumerate() {
            for v in shuffled(STDIO_VARIANTS.len(), round * 11 + l) {
                let variant = STDIO_VARIANTS[v];
                if !setup.runs(variant) {
                    continue;
                }
                let mut server = start_stdio(&setup, &spec, variant)?;
                stdio_load::one(&mut server)
                    .await
                    .map_err(|e| format!("{variant}: the first call failed: {e}"))?;
                let cpu = WindowCpu::spawn(server.pid, setup.warmup, setup.measure);
                let out =
                    stdio_load::run(&mut server, *in_flight, setup.warmup, setup.measure).await;
                let run = Run::of(&out, cpu.join(), None);
                log(load, variant, &run);
                stdio[l][v].push(run);
                server.stop().await;
            }
        }
    }
    let report = Report::new(&setup, &http, &stdio);
    let doc = setup.provenance.stamp(serde_json::json!({"gateway": {
        "rounds": setup.rounds,
        "warmup_s": setup.warmup.as_secs_f64(),
        "measure_s": setup.measure.as_secs_f64(),
        "pinned": setup.pinned,
        "loads": report.json,
        "stdio": report.stdio_json,
        "goals": report.goals_json,
    }}));
    if let Some(path) = &setup.json {
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if report.errors > 0 {
        return Err(format!("{} errors\n{}", report.errors, report.md));
    }
    Ok((report.md, doc))
}

fn log(load: &str, variant: &str, run: &Run) {
    eprintln!(
        "  {load} {variant}: {:.0} req/s, p50 {:.0} µs, p99 {:.0} µs, front CPU {} µs/call, {} errors{}",
        run.rps,
        run.p50_us,
        run.p99_us,
        run.front_cpu_us.map_or("-".into(), |c| format!("{c:.1}")),
        run.errors,
        run.first_error
            .as_ref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    );
}

/// The medians, the table and the goals.
struct Report {
    md: String,
    json: serde_json::Map<String, serde_json::Value>,
    stdio_json: serde_json::Map<String, serde_json::Value>,
    goals_json: Vec<serde_json::Value>,
    errors: u64,
}

/// The medians of one variant at one load.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    rps: f64,
    over_direct: f64,
    p50: f64,
    p99: f64,
    added_p50: f64,
    added_p99: f64,
    front_cpu: Option<f64>,
    backend_cpu: Option<f64>,
    front_preempted: Option<f64>,
    backend_preempted: Option<f64>,
}

fn figures(runs: &[Vec<Run>], v: usize) -> Figures {
    let med = |f: &dyn Fn(&Run) -> f64| median(runs[v].iter().map(f).collect()).unwrap_or(0.0);
    let base = |f: &dyn Fn(&Run) -> f64| median(runs[0].iter().map(f).collect()).unwrap_or(0.0);
    let opt = |f: &dyn Fn(&Run) -> Option<f64>| median(runs[v].iter().filter_map(f).collect());
    Figures {
        rps: med(&|r| r.rps),
        over_direct: ratio_median(runs[v].iter().map(|r| r.rps), runs[0].iter().map(|r| r.rps)),
        p50: med(&|r| r.p50_us),
        p99: med(&|r| r.p99_us),
        added_p50: med(&|r| r.p50_us) - base(&|r| r.p50_us),
        added_p99: med(&|r| r.p99_us) - base(&|r| r.p99_us),
        front_cpu: opt(&|r| r.front_cpu_us),
        backend_cpu: opt(&|r| r.backend_cpu_us),
        front_preempted: opt(&|r| r.front_preempted),
        backend_preempted: opt(&|r| r.backend_preempted),
    }
}

fn entry(f: &Figures, runs: &[Run], direct: bool) -> serde_json::Value {
    serde_json::json!({
        "rps_median": f.rps,
        "over_direct": f.over_direct,
        "p50_us": f.p50,
        "p99_us": f.p99,
        "added_p50_us": (!direct).then_some(f.added_p50),
        "added_p99_us": (!direct).then_some(f.added_p99),
        "front_cpu_us_per_call": f.front_cpu,
        "backend_cpu_us_per_call": f.backend_cpu,
        "front_preempted_per_call": f.front_preempted,
        "backend_preempted_per_call": f.backend_preempted,
        "errors": runs.iter().map(|r| r.errors).sum::<u64>(),
        "samples": runs,
    })
}

fn cell(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

/// A count per call, to two places.
fn cell2(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

impl Report {
    fn new(setup: &Setup, http: &[Vec<Vec<Run>>], stdio: &[Vec<Vec<Run>>]) -> Report {
        let mut md = format!(
            "Command: `cargo run --release -p snodo-bench --{}`\n\n{}\n\
             The benchmark's snodo server (`--http-sessions`, the `echo` tool) reached directly, \
             behind a bare reverse proxy that does no MCP work (`bare-hop`), behind `snodo proxy` \
             and behind mcp-proxy 0.6 (crates.io), each of the two minimal and with a timeout, \
             a concurrency cap, a rate and a circuit breaker configured (`-limits`; none \
             reached). Each client opens an initialize-era session, then calls `echo` in a \
             closed loop; every answer is checked. {} rounds of {:.1} s warm-up + {:.1} s \
             measured, a fresh backend for each run, a random order each round, medians and the \
             median of the per-round ratios against `direct`; {}. Front CPU: the proxy's CPU \
             time per forwarded call (the server's own for `direct`). Preempted: how often per \
             call the scheduler took the CPU from the process while it could still run \
             (`nonvoluntary_ctxt_switches`), front / backend; with both on one CPU, mostly the \
             other one woken by a message.\n\n\
             | load | variant | req/s | / direct | p50 µs | p99 µs | added p50 µs | added p99 µs | front CPU µs/call | backend CPU µs/call | preempted per call | errors |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            setup.command,
            setup.provenance.markdown(),
            setup.rounds,
            setup.warmup.as_secs_f64(),
            setup.measure.as_secs_f64(),
            if setup.pinned {
                "every server (proxies and backends) on CPU 0, the load generator on CPU 1"
            } else {
                "not pinned"
            }
        );
        let mut errors = 0;
        let mut json = serde_json::Map::new();
        let mut at: Vec<Vec<Figures>> = Vec::new();
        for (l, (load, _)) in LOADS.iter().enumerate() {
            let mut entries = serde_json::Map::new();
            let mut row = Vec::new();
            for (v, (name, _)) in VARIANTS.iter().enumerate() {
                if http[l][v].is_empty() {
                    row.push(Figures::default());
                    continue;
                }
                let f = figures(&http[l], v);
                let errs: u64 = http[l][v].iter().map(|r| r.errors).sum();
                errors += errs;
                let added = |a: f64| {
                    if v == 0 {
                        "-".to_string()
                    } else {
                        format!("{a:.0}")
                    }
                };
                md.push_str(&format!(
                    "| {load} | {name} | {:.0} | {:.2} | {:.0} | {:.0} | {} | {} | {} | {} | {} | {errs} |\n",
                    f.rps,
                    f.over_direct,
                    f.p50,
                    f.p99,
                    added(f.added_p50),
                    added(f.added_p99),
                    cell(f.front_cpu),
                    cell(f.backend_cpu),
                    match f.backend_preempted {
                        Some(b) => format!("{} / {}", cell2(f.front_preempted), cell2(Some(b))),
                        None => cell2(f.front_preempted),
                    },
                ));
                entries.insert((*name).into(), entry(&f, &http[l][v], v == 0));
                row.push(f);
            }
            json.insert((*load).into(), serde_json::Value::Object(entries));
            at.push(row);
        }
        md.push_str(
            "\nThe stdio hop: the server over stdio directly, behind `bench-server-hop --stdio` \
             (a byte relay between the same pipes, two threads, no parsing) and behind \
             `snodo serve --stdio` (2026-07-28 `tools/call echo`).\n\n\
             | load | variant | round trips/s | / direct | p50 µs | p99 µs | added p50 µs | front CPU µs/call | preempted per call | errors |\n\
             |---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut stdio_json = serde_json::Map::new();
        let mut stdio_at: Vec<Vec<Figures>> = Vec::new();
        for (l, (load, _)) in STDIO_LOADS.iter().enumerate() {
            let mut entries = serde_json::Map::new();
            let mut row = Vec::new();
            for (v, name) in STDIO_VARIANTS.iter().enumerate() {
                if stdio[l][v].is_empty() {
                    row.push(Figures::default());
                    continue;
                }
                let f = figures(&stdio[l], v);
                let errs: u64 = stdio[l][v].iter().map(|r| r.errors).sum();
                errors += errs;
                md.push_str(&format!(
                    "| {load} | {name} | {:.0} | {:.2} | {:.0} | {:.0} | {} | {} | {} | {errs} |\n",
                    f.rps,
                    f.over_direct,
                    f.p50,
                    f.p99,
                    if v == 0 {
                        "-".into()
                    } else {
                        format!("{:.0}", f.added_p50)
                    },
                    cell(f.front_cpu),
                    cell2(f.front_preempted),
                ));
                entries.insert((*name).into(), entry(&f, &stdio[l][v], v == 0));
                row.push(f);
            }
            stdio_json.insert((*load).into(), serde_json::Value::Object(entries));
            stdio_at.push(row);
        }
        let goals = goals(&at, &stdio_at, errors);
        md.push_str("\nGoals:\n\n");
        for g in &goals {
            md.push_str(&format!(
                "- {} {}: {}\n",
                if g.met { "met" } else { "**not met**" },
                g.name,
                g.detail
            ));
        }
        if errors > 0 {
            md.push_str(&format!(
                "\n**{errors} errors: the figures are not valid.**\n"
            ));
        }
        let goals_json = goals
            .iter()
            .map(|g| serde_json::json!({"goal": g.name, "met": g.met, "detail": g.detail}))
            .collect();
        Report {
            md,
            json,
            stdio_json,
            goals_json,
            errors,
        }
    }
}

/// One goal and whether this run met it.
struct Goal {
    name: String,
    met: bool,
    detail: String,
}

/// The variants' indexes in [`VARIANTS`].
const BARE: usize = 1;
const SNODO_PROXY: usize = 2;
const SNODO_LIMITS: usize = 3;
const MCP_PROXY_MIN: usize = 4;
const MCP_PROXY_LIMITS: usize = 5;

/// What a goal says of a variant this run left out (`--variants`).
const NOT_RUN: &str = "not measured in this run";

/// Whether every one of `figures` was measured (a variant left out has
/// no calls).
fn measured(figures: &[Figures]) -> bool {
    figures.iter().all(|f| f.rps > 0.0)
}

fn goals(http: &[Vec<Figures>], stdio: &[Vec<Figures>], errors: u64) -> Vec<Goal> {
    let mut out = goals_measured(http, stdio, errors == 0);
    // A goal whose variants did not run is not met, whatever its ratio.
    let runs: Vec<bool> = {
        let last = LOADS.len() - 1;
        let pair = |l: usize, a: usize, b: usize| measured(&[http[l][a], http[l][b]]);
        let all = |a: usize, b: usize| (0..LOADS.len()).all(|l| pair(l, a, b));
        vec![
            pair(0, BARE, SNODO_PROXY),
            pair(last, BARE, SNODO_PROXY),
            all(SNODO_PROXY, MCP_PROXY_MIN),
            all(SNODO_LIMITS, MCP_PROXY_LIMITS),
            measured(&[stdio[0][1], stdio[0][2]]),
        ]
    };
    for (goal, ran) in out.iter_mut().zip(runs) {
        if !ran {
            goal.met = false;
            goal.detail = NOT_RUN.into();
        }
    }
    out
}

fn goals_measured(http: &[Vec<Figures>], stdio: &[Vec<Figures>], clean: bool) -> Vec<Goal> {
    let mut out = Vec::new();
    let (bare1, snodo1) = (http[0][BARE], http[0][SNODO_PROXY]);
    let ratio = snodo1.added_p50 / bare1.added_p50.max(1.0);
    out.push(Goal {
        name: "snodo proxy's added p50 at 1 in flight at most 1.3x the bare hop's".into(),
        met: clean && ratio <= 1.3,
        detail: format!(
            "{:.0} µs against {:.0} µs: {ratio:.2}x",
            snodo1.added_p50, bare1.added_p50
        ),
    });
    let last = LOADS.len() - 1;
    let (bare32, snodo32) = (http[last][BARE], http[last][SNODO_PROXY]);
    let ratio = snodo32.rps / bare32.rps.max(1.0);
    out.push(Goal {
        name: "snodo proxy's throughput at 32 in flight at least 0.8x the bare hop's".into(),
        met: clean && ratio >= 0.8,
        detail: format!(
            "{:.0} against {:.0} req/s: {ratio:.2}x",
            snodo32.rps, bare32.rps
        ),
    });
    for (ours, theirs, what) in [
        (SNODO_PROXY, MCP_PROXY_MIN, "minimal"),
        (SNODO_LIMITS, MCP_PROXY_LIMITS, "with limits and a breaker"),
    ] {
        let rows: Vec<String> = LOADS
            .iter()
            .enumerate()
            .map(|(l, (load, _))| {
                format!(
                    "{load}: {:.0} against {:.0} req/s, p50 {:.0} against {:.0} µs",
                    http[l][ours].rps, http[l][theirs].rps, http[l][ours].p50, http[l][theirs].p50
                )
            })
            .collect();
        let ahead = (0..LOADS.len()).all(|l| {
            http[l][ours].rps > http[l][theirs].rps && http[l][ours].p50 < http[l][theirs].p50
        });
        out.push(Goal {
            name: format!(
                "snodo proxy ahead of mcp-proxy on every load ({what}): more req/s and a lower p50"
            ),
            met: clean && ahead,
            detail: rows.join("; "),
        });
    }
    let (relay, serve) = (stdio[0][1], stdio[0][2]);
    let (rate, p50) = (
        relay.rps / serve.rps.max(1.0),
        serve.p50 / relay.p50.max(1.0),
    );
    out.push(Goal {
        name: "snodo serve --stdio within 1.5x of a bare byte relay at 1 in flight (round trips and p50)".into(),
        met: clean && rate <= 1.5 && p50 <= 1.5,
        detail: format!(
            "{:.0} against {:.0} round trips/s ({rate:.2}x fewer), p50 {:.0} against {:.0} µs ({p50:.2}x)",
            serve.rps, relay.rps, serve.p50, relay.p50
        ),
    });
    out
}

/// Builds the binaries the gateway runs need next to the harness: the
/// backend, the bare hop, mcp-proxy and the `snodo` command.
pub(crate) fn build(dir: &Path, spec: &Spec) -> Result<(), String> {
    procs::build_these(dir, std::slice::from_ref(spec))?;
    procs::build_packages(dir, &[HOP, MCP_PROXY])?;
    super::bridge::build_cli(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(rps: f64) -> Figures {
        Figures {
            rps,
            over_direct: 1.0,
            p50: 100.0,
            p99: 200.0,
            added_p50: 10.0,
            added_p99: 20.0,
            front_cpu: None,
            backend_cpu: None,
            front_preempted: None,
            backend_preempted: None,
        }
    }

    #[test]
    fn a_goal_whose_variants_did_not_run_is_not_met() {
        // Every HTTP variant left out (zero calls), the stdio ones run.
        let http = vec![vec![ran(0.0); VARIANTS.len()]; LOADS.len()];
        let stdio = vec![vec![ran(100.0); STDIO_VARIANTS.len()]; STDIO_LOADS.len()];
        let goals = goals(&http, &stdio, 0);
        assert_eq!(goals.len(), 5);
        for g in &goals[..4] {
            assert!(!g.met, "{}", g.name);
            assert_eq!(g.detail, NOT_RUN);
        }
        // The stdio goal ran, and equal figures are within 1.5x.
        assert!(goals[4].met, "{}", goals[4].detail);
    }
}
