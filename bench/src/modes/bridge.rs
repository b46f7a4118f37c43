//! `--bridge`: the snodo server direct and behind `snodo serve`.

use crate::harness;
use crate::harness::procs::{self, SERVERS};
use crate::harness::provenance::Provenance;
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
    let (launcher, pinned) = super::pinned_launcher(options, dir)?;
    let setup = harness::bridge::Setup {
        launcher,
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
