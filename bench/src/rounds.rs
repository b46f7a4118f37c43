//! The main benchmark's rounds: each round runs every selected workload on
//! every selected server.

mod builds;
mod http;
mod memory;
mod startup;
mod stdio;
mod two_cpu;

pub(crate) use builds::bench_postgres_url;

use builds::{TASK_WORKLOADS, auth_round, task_round, validated_round};
use http::http_round;
use memory::{listen_round, session_round};
use startup::startup_round;
use stdio::stdio_round;
use two_cpu::two_cpu_round;

use crate::harness::procs::{self, Launcher, Spec};
use crate::harness::report::Samples;
use crate::machine::{Interference, wait_for_idle};
use crate::options::Options;
use crate::servers::selected;

pub(crate) async fn bench(
    options: &Options,
    launcher: &Launcher,
) -> Result<(Samples, Vec<(f64, f64)>, usize), String> {
    let mut samples = Samples::default();
    let mut background = Vec::new();
    let mut retries = 0;
    let specs = selected(options);
    let stdio_specs: Vec<Spec> = specs.iter().copied().filter(|s| s.stdio).collect();
    let any = |names: &[&str]| names.iter().any(|n| options.workloads.contains(n));
    for round in 1..=options.rounds {
        eprintln!("round {round}/{}", options.rounds);
        if options.wait_idle {
            wait_for_idle().await;
        }
        let mark = Interference::start();
        if any(&[
            "rss_idle_http",
            "http_call_c1",
            "http_call_c16",
            "http_call_c64",
            "http_add_c64",
            "http_open_50",
            "http_open_80",
            "http_open_same",
            "http_list_c16",
        ]) {
            http_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&[procs::VALIDATED, procs::VALIDATED_BASIC]) {
            validated_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&["http_call_c64_2cpu"]) && options.pin {
            two_cpu_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&["http_call_auth_c16", "http_call_jwt_sig_c16"]) {
            auth_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&TASK_WORKLOADS.map(|(w, _)| w)) {
            task_round(options, launcher, &specs, round, &mut samples, &mut retries).await?;
        }
        if any(&["stdio_call_f1", "stdio_call_f64"]) {
            stdio_round(
                options,
                launcher,
                &stdio_specs,
                round,
                &mut samples,
                &mut retries,
            )
            .await?;
        }
        if any(&["startup_http", "startup_stdio"]) {
            startup_round(options, launcher, &specs, round, &mut samples).await;
        }
        if any(&["rss_listen_1000"]) {
            listen_round(launcher, &specs, round, &mut samples).await;
        }
        if any(&["http_session_call_c64", "rss_sessions_1000"]) {
            session_round(options, launcher, &specs, round, &mut samples, &mut retries).await;
        }
        if let Some(o) = mark.others() {
            let steal = mark.steal().unwrap_or(0.0);
            eprintln!(
                "  other processes used {:.0} % of the CPUs during round {round} (the hypervisor's steal: {:.0} %)",
                o * 100.0,
                steal * 100.0
            );
            background.push((o, steal));
        }
    }
    Ok((samples, background, retries))
}
