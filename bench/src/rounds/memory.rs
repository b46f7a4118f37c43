//! Listen streams and initialize-era sessions: the memory they hold on a
//! fresh server, and `tools/call` inside sessions.

use std::time::Duration;

use crate::harness::http_load;
use crate::harness::procs::{self, Launcher, Spec};
use crate::harness::report::{self, Sample, Samples};
use crate::harness::wire::{Expect, Work};
use crate::measure::{failed, log_sample, measured};
use crate::options::Options;

/// How many `subscriptions/listen` streams the memory workload opens.
const LISTEN_STREAMS: usize = 1000;

/// How many idle initialize-era sessions the memory workload opens.
const IDLE_SESSIONS: usize = 1000;

/// Connections of the initialize-era throughput workload.
const SESSION_CONCURRENCY: usize = 64;

/// Workload 5b: RSS with 1 000 open listen streams, on a fresh server.
pub(super) async fn listen_round(
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
) {
    for spec in specs
        .iter()
        .filter(|s| s.listen && report::not_applicable("rss_listen_1000", s.name).is_none())
    {
        let s = fresh_rss(launcher.http(spec).await, |target| async move {
            http_load::one(&target, Work::Echo, Expect::Echo, 1).await?;
            let streams = http_load::open_listen_streams(&target, LISTEN_STREAMS).await?;
            Ok(Box::new(streams) as Box<dyn std::any::Any>)
        })
        .await;
        log_sample(round, "rss_listen_1000", spec.name, &s);
        samples.add("rss_listen_1000", spec.name, s);
    }
}

/// The RSS of a fresh server process once `open` has set up what it holds
/// (kept alive until the RSS is read), as a sample.
async fn fresh_rss<F, Fut>(server: Result<procs::HttpServer, String>, open: F) -> Sample
where
    F: FnOnce(http_load::Target) -> Fut,
    Fut: std::future::Future<Output = Result<Box<dyn std::any::Any>, String>>,
{
    let result = async {
        let server = server?;
        let r = async {
            let held = open(server.target.clone()).await?;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let rss = procs::memory_kb(server.pid).map(|(rss, _)| rss);
            drop(held);
            Ok::<_, String>(rss)
        }
        .await;
        server.stop().await;
        r
    }
    .await;
    match result {
        Ok(rss) => Sample {
            peak_rss_kb: rss,
            ..Sample::default()
        },
        Err(e) => failed(e),
    }
}

/// The initialize-era workloads: `tools/call` inside sessions on a server
/// in its stateful mode, and the memory of idle sessions (fresh process).
pub(super) async fn session_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) {
    let applicable = |workload: &str, spec: &Spec| {
        options.workloads.contains(&workload)
            && report::not_applicable(workload, spec.name).is_none()
    };
    for spec in specs {
        if !applicable("http_session_call_c64", spec) {
            continue;
        }
        let server = match launcher.http_sessions(spec).await {
            Ok(server) => server,
            Err(e) => {
                let s = failed(e);
                log_sample(round, "http_session_call_c64", spec.name, &s);
                samples.add("http_session_call_c64", spec.name, s);
                continue;
            }
        };
        let s = measured!(
            options,
            retries,
            server.pid,
            format!("http_session_call_c64 {}", spec.name),
            http_load::run_sessions(
                &server.target,
                SESSION_CONCURRENCY,
                options.warmup,
                options.measure,
            )
            .await
        );
        log_sample(round, "http_session_call_c64", spec.name, &s);
        samples.add("http_session_call_c64", spec.name, s);
        server.stop().await;
    }
    for spec in specs {
        if !applicable("rss_sessions_1000", spec) {
            continue;
        }
        let s = fresh_rss(launcher.http_sessions(spec).await, |target| async move {
            http_load::open_sessions(&target, IDLE_SESSIONS).await?;
            Ok(Box::new(()) as Box<dyn std::any::Any>)
        })
        .await;
        log_sample(round, "rss_sessions_1000", spec.name, &s);
        samples.add("rss_sessions_1000", spec.name, s);
    }
}
