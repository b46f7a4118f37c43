//! The closed- and open-loop `tools/call` workloads, `tools/list`, and the
//! idle and peak memory.

use crate::harness;
use crate::harness::http_load;
use crate::harness::procs::{self, Launcher, Spec};
use crate::harness::report::{self, Sample, Samples};
use crate::harness::wire::{Expect, Work};
use crate::measure::{failed, log_sample, measured};
use crate::options::Options;
use crate::servers::{expect_for, expect_of, order};

/// The closed-loop `tools/call` workloads, the open-loop ones (at a share
/// of each server's own `http_call_c64` rate of this round), `tools/list`,
/// and the idle and peak memory.
pub(super) async fn http_round(
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
