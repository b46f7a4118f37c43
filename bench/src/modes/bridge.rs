//! `--bridge`: the snodo server direct and behind `snodo serve`.

use crate::harness;
use crate::harness::procs::{self, Launcher, SERVERS};
use crate::harness::provenance::Provenance;
use crate::machine::{HARNESS_CPU, SERVER_CPU};
use crate::options::Options;

/// `--bridge`: the snodo server direct and behind `snodo serve`.
pub(crate) fn bridge_main(
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
