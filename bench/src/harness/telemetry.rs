//! `--telemetry`: what the instrumentation costs. Three builds of the snodo
//! server in one run, in a random order each round:
//!
//! - `bare`: every `tracing` span and event compiled out (`tracing`'s
//!   `max_level_off`, the `bench-server-snodo-bare` binary): the baseline;
//! - `on`: the default build with no subscriber installed;
//! - `exported`: the default build exporting every span and the metrics
//!   over OTLP/HTTP to a collector in this process (which only counts);
//! - `sampled`: the same, with the standard head sampler at 10 %
//!   (`OTEL_TRACES_SAMPLER=traceidratio`, `OTEL_TRACES_SAMPLER_ARG=0.1`),
//!   metrics for every request.
//!
//! Every response is checked; the spans the collector received are decoded
//! after each run and counted against the requests served.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::provenance::Provenance;

/// The settings of a `--telemetry` run, as its JSON document gives them.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Rounds.
    pub(crate) rounds: usize,
    /// Warm-up per run.
    pub(crate) warmup: Duration,
    /// Measured time per run.
    pub(crate) measure: Duration,
    /// Whether the server and the load generator were pinned.
    pub(crate) pinned: bool,
    /// The git revision of the `before` build, if any.
    pub(crate) baseline: Option<String>,
}

/// The `--telemetry` JSON document: the settings, the figures of each load
/// (`loads`) and the provenance block.
pub(crate) fn document(
    settings: &Settings,
    loads: serde_json::Map<String, serde_json::Value>,
    provenance: &Provenance,
) -> serde_json::Value {
    provenance.stamp(serde_json::json!({
        "telemetry": {"rounds": settings.rounds, "warmup_s": settings.warmup.as_secs_f64(),
                      "measure_s": settings.measure.as_secs_f64(), "pinned": settings.pinned,
                      "baseline_rev": settings.baseline, "loads": loads}
    }))
}

/// The loads: (name, connections).
pub(crate) const LOADS: [(&str, usize); 2] = [("http_call_c16", 16), ("http_call_c64", 64)];

/// What the collector received.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    /// Export requests of spans, as received (decoded after the runs;
    /// metrics are received and dropped).
    pub(crate) traces: Mutex<Vec<Bytes>>,
}

impl Sink {
    /// Decodes what arrived so far and forgets it: the number of spans.
    pub(crate) fn take_spans(&self) -> u64 {
        use prost::Message as _;
        let bodies = std::mem::take(&mut *self.traces.lock().unwrap_or_else(|p| p.into_inner()));
        let mut spans = 0;
        for body in bodies {
            if let Ok(export) =
                opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest::decode(
                    body,
                )
            {
                for rs in export.resource_spans {
                    for ss in rs.scope_spans {
                        spans += ss.spans.len() as u64;
                    }
                }
            }
        }
        spans
    }
}

/// Starts the collector on 127.0.0.1 (on the current runtime).
pub(crate) async fn collector() -> Result<(SocketAddr, Arc<Sink>), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("collector: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let sink = Arc::new(Sink::default());
    let shared = sink.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let sink = shared.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let sink = sink.clone();
                    async move {
                        let traces = req.uri().path() == "/v1/traces";
                        let body = req
                            .into_body()
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        if traces {
                            sink.traces
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(body);
                        }
                        Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((addr, sink))
}

/// The environment of the `exported` variant: export to `collector`, with
/// a queue large enough that no span is dropped at full load, metrics every
/// second.
pub(crate) fn exported_env(collector: SocketAddr, sampled: bool) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("SNODO_BENCH_OTLP", format!("http://{collector}")),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "262144".into()),
        ("OTEL_BSP_SCHEDULE_DELAY", "200".into()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "1000".into()),
    ];
    if sampled {
        env.push(("OTEL_TRACES_SAMPLER", "traceidratio".into()));
        env.push(("OTEL_TRACES_SAMPLER_ARG", "0.1".into()));
    }
    env
}

/// A random order of `0..n` (xorshift seeded from the clock and the round).
pub(crate) fn shuffled(n: usize, round: usize) -> Vec<usize> {
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9, |d| d.as_nanos() as u64)
        ^ ((round as u64 + 1) * 0x2545_f491_4f6c_dd1d);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order
}

/// One measured run.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct Run {
    /// Requests per second.
    pub(crate) rps: f64,
    /// Server CPU per request, microseconds (warm-up included in both).
    pub(crate) cpu_us_per_req: Option<f64>,
    /// Spans received per request served (`exported` only).
    pub(crate) spans_per_req: Option<f64>,
    /// Errors.
    pub(crate) errors: u64,
}

/// The median of some values.
/// The median of the per-round ratios of `rates` to `base` (the same
/// rounds, in order); 0 without rounds.
pub(crate) fn ratio_median(
    rates: impl IntoIterator<Item = f64>,
    base: impl IntoIterator<Item = f64>,
) -> f64 {
    median(
        rates
            .into_iter()
            .zip(base)
            .map(|(r, b)| r / b.max(1.0))
            .collect(),
    )
    .unwrap_or(0.0)
}

pub(crate) fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// How long after a run the exporter gets to deliver what it queued.
pub(crate) const DRAIN: Duration = Duration::from_millis(1500);

/// Builds `bench-server-snodo-full` as it was at the git revision `rev`, in
/// a worktree next to the harness's target directory; the directory of the
/// binary. Before that package existed, `bench-server-snodo` held the same
/// parts: it is built and named `bench-server-snodo-full`.
pub(crate) fn build_baseline(
    rev: &str,
    exe_dir: &std::path::Path,
) -> Result<std::path::PathBuf, String> {
    use std::process::Command;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no repository root")?
        .to_path_buf();
    let work = exe_dir
        .parent()
        .ok_or("no target directory")?
        .join("telemetry-baseline");
    let src = work.join("src");
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let status = cmd.status().map_err(|e| format!("{what}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{what} failed"))
        }
    };
    if src.join(".git").exists() {
        run(
            Command::new("git")
                .arg("-C")
                .arg(&src)
                .args(["checkout", "--quiet", "--detach", rev]),
            "git checkout",
        )?;
    } else {
        std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
        run(
            Command::new("git")
                .arg("-C")
                .arg(&root)
                .args(["worktree", "add", "--quiet", "--detach"])
                .arg(&src)
                .arg(rev),
            "git worktree add",
        )?;
    }
    let full = super::procs::SNODO_FULL.bin;
    let package = if src.join("bench/servers/snodo-full").is_dir() {
        full
    } else {
        "bench-server-snodo"
    };
    eprintln!("building {package} at {rev}");
    run(
        Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .current_dir(&src)
            .args([
                "build",
                "--quiet",
                "--release",
                "-p",
                package,
                "--target-dir",
            ])
            .arg(work.join("target")),
        "building the baseline",
    )?;
    let release = work.join("target").join("release");
    if package != full {
        std::fs::copy(release.join(package), release.join(full))
            .map_err(|e| format!("naming the baseline {full}: {e}"))?;
    }
    Ok(release)
}
