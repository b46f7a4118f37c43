//! The shared-CPU workload: the server and two load generator threads on
//! both CPUs.

use crate::harness::http_load;
use crate::harness::procs::{self, Launcher, Spec};
use crate::harness::report::{self, Samples};
use crate::harness::wire::{Expect, Work};
use crate::measure::{log_sample, measured};
use crate::options::Options;
use crate::servers::{expect_for, order};

/// The CPUs both sides share in the several-core workload.
const ALL_CPUS: &str = "0,1";

/// `tools/call` at 64 connections with the server on both CPUs and the
/// load generator (two threads of 32 connections) sharing them.
pub(super) async fn two_cpu_round(
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
