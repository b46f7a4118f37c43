//! Start-up time: spawn to the first correct answer, over HTTP and stdio.

use std::time::{Duration, Instant};

use crate::harness::http_load;
use crate::harness::procs::{Launcher, Spec};
use crate::harness::report::{self, Sample, Samples};
use crate::harness::stdio_load;
use crate::harness::wire::Work;
use crate::measure::{failed, log_sample};
use crate::options::Options;
use crate::servers::expect_for;

/// Workload 4: spawn to first correct response, `startup_reps` times.
pub(super) async fn startup_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
) {
    for _ in 0..options.startup_reps {
        for spec in specs.iter().filter(|s| {
            options.workloads.contains(&"startup_http")
                && report::not_applicable("startup_http", s.name).is_none()
        }) {
            let t0 = Instant::now();
            let result = async {
                let server = launcher.http(spec).await?;
                let r = http_load::one(&server.target, Work::Echo, expect_for(spec), 1).await;
                let elapsed = t0.elapsed();
                server.stop().await;
                r.map(|()| elapsed)
            }
            .await;
            let s = match result {
                Ok(elapsed) => Sample {
                    p50_us: Some(elapsed.as_secs_f64() * 1e6),
                    ..Sample::default()
                },
                Err(e) => failed(e),
            };
            log_sample(round, "startup_http", spec.name, &s);
            samples.add("startup_http", spec.name, s);
        }
        for spec in specs.iter().filter(|s| {
            s.stdio
                && options.workloads.contains(&"startup_stdio")
                && report::not_applicable("startup_stdio", s.name).is_none()
        }) {
            let t0 = Instant::now();
            let result = async {
                let mut server = launcher.stdio(spec)?;
                let r = tokio::time::timeout(Duration::from_secs(20), stdio_load::one(&mut server))
                    .await
                    .unwrap_or_else(|_| Err("no answer within 20 s".into()));
                let elapsed = t0.elapsed();
                server.stop().await;
                r.map(|()| elapsed)
            }
            .await;
            let s = match result {
                Ok(elapsed) => Sample {
                    p50_us: Some(elapsed.as_secs_f64() * 1e6),
                    ..Sample::default()
                },
                Err(e) => failed(e),
            };
            log_sample(round, "startup_stdio", spec.name, &s);
            samples.add("startup_stdio", spec.name, s);
        }
    }
}
