//! `--fanout`: events fanned out to listen streams on `snodo demo` nodes joined
//! by each bus.

use std::time::Duration;

use crate::harness;
use crate::harness::provenance::Provenance;
use crate::options::Options;
use crate::rounds::bench_postgres_url;

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

/// `--fanout`: three demo nodes per bus, the rate steps in each round, the
/// medians by rate.
pub(crate) fn fanout_main(
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
