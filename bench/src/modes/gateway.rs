//! `--gateway`: one backend direct, behind a bare hop, `snodo proxy` and
//! mcp-proxy; and the stdio hop.

use crate::harness;
use crate::harness::procs::SERVERS;
use crate::harness::provenance::Provenance;
use crate::options::Options;

/// `--gateway`: what one gateway hop costs, against a bare hop and
/// mcp-proxy (see `harness::gateway`).
pub(crate) fn gateway_main(
    options: &Options,
    dir: std::path::PathBuf,
    provenance: Provenance,
) -> Result<(), String> {
    let snodo = SERVERS[0];
    if options.build {
        harness::gateway::build(&dir, &snodo)?;
    }
    let (launcher, pinned) = super::pinned_launcher(options, dir)?;
    let setup = harness::gateway::Setup {
        launcher,
        rounds: options.rounds,
        warmup: options.warmup,
        measure: options.measure,
        json: options.json.clone(),
        command: options.args.iter().map(|a| format!(" {a}")).collect(),
        pinned,
        provenance,
        scratch: harness::provenance::workspace_root().join("target/snodo-bench-gateway"),
        only: options.variants.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let (md, _doc) = runtime.block_on(harness::gateway::run(setup, snodo))?;
    print!("{md}");
    if options.update_docs {
        let results = harness::provenance::workspace_root().join("bench/results");
        std::fs::write(results.join("gateway.md"), &md)
            .map_err(|e| format!("bench/results/gateway.md: {e}"))?;
    }
    Ok(())
}
