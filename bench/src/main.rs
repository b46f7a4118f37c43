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
mod machine;
mod measure;
mod modes;
mod options;
mod rounds;
mod servers;

use std::time::Instant;

use harness::procs::{self, Launcher};
use harness::provenance::Provenance;
use harness::report;
use machine::{HARNESS_CPU, SERVER_CPU, loadavg};
use modes::{bridge_main, fanout_main, gateway_main, telemetry_main};
use options::{Options, parse_args};
use rounds::bench;
use servers::selected;

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
    if options.gateway {
        return gateway_main(&options, dir, provenance);
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
