//! The stdio round trips, one and 64 in flight.

use std::time::Duration;

use crate::harness::procs::{Launcher, Spec};
use crate::harness::report::Samples;
use crate::harness::stdio_load;
use crate::measure::{log_sample, measured};
use crate::options::Options;
use crate::servers::order;

/// Workload 3.
pub(super) async fn stdio_round(
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
