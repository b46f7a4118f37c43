//! Workloads on other builds of the servers: arguments validated, a
//! JWT-protected snodo, and snodo's task stores.

use crate::harness;
use crate::harness::http_load;
use crate::harness::procs::{self, Launcher, Spec};
use crate::harness::report::{self, Samples};
use crate::harness::wire::Work;
use crate::measure::{failed, log_sample, measured};
use crate::options::Options;
use crate::servers::{expect_for, order};

/// `tools/call` at 64 connections with arguments validated, in each
/// validated workload selected: each server's validating build for it,
/// checked first to really refuse an argument that breaks the schema (and
/// that the handler would accept).
pub(super) async fn validated_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    for workload in [procs::VALIDATED, procs::VALIDATED_BASIC] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for i in order(specs.len(), round) {
            let spec = &specs[i];
            let Some(build) = spec.validating(workload) else {
                continue;
            };
            let server = launcher.http_validated(build).await?;
            let s = match http_load::refuses_invalid(&server.target).await {
                Ok(true) => measured!(
                    options,
                    retries,
                    server.pid,
                    format!("{workload} {}", spec.name),
                    http_load::run(
                        &server.target,
                        Work::Echo,
                        expect_for(spec),
                        64,
                        options.warmup,
                        options.measure,
                    )
                    .await
                ),
                Ok(false) => failed(format!(
                    "{}: the validating build accepted a limit over the schema's maximum",
                    spec.name
                )),
                Err(e) => failed(format!("{}: validation probe: {e}", spec.name)),
            };
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
            server.stop().await;
        }
    }
    Ok(())
}

/// The protected workload: snodo's resource server checking a JWT on every
/// call, the issuer's keys cached after the first.
pub(super) async fn auth_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    let issuer = harness::issuer::Issuer::start().await?;
    for (workload, every_call) in [
        ("http_call_auth_c16", false),
        ("http_call_jwt_sig_c16", true),
    ] {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for spec in specs {
            if report::not_applicable(workload, spec.name).is_some() {
                continue;
            }
            let server = launcher
                .http_protected(spec, &issuer.url, every_call)
                .await?;
            let mut target = server.target.clone();
            let url = format!("http://{}{}", target.addr, target.path);
            let token = issuer.token(&url)?;
            target.authorization = Some(
                http::HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|e| e.to_string())?,
            );
            http_load::one(&target, Work::Echo, expect_for(spec), 1)
                .await
                .map_err(|e| format!("{}: first protected request failed: {e}", spec.name))?;
            let s = measured!(
                options,
                retries,
                server.pid,
                format!("{workload} {}", spec.name),
                http_load::run(
                    &target,
                    Work::Echo,
                    expect_for(spec),
                    16,
                    options.warmup,
                    options.measure,
                )
                .await
            );
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
            server.stop().await;
        }
    }
    Ok(())
}

/// The task workloads and the store each uses.
pub(super) const TASK_WORKLOADS: [(&str, &str); 3] = [
    ("http_task_memory_c16", "memory"),
    ("http_task_sqlite_c16", "sqlite"),
    ("http_task_postgres_c16", "postgres"),
];

/// Where the PostgreSQL task workload keeps its tasks (`SNODO_POSTGRES_URL`,
/// else the server on 127.0.0.1:5432, database `test`).
pub(crate) fn bench_postgres_url() -> String {
    std::env::var("SNODO_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// Task create-to-result throughput for each store (snodo only).
pub(super) async fn task_round(
    options: &Options,
    launcher: &Launcher,
    specs: &[Spec],
    round: usize,
    samples: &mut Samples,
    retries: &mut usize,
) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("snodo-bench-tasks-{}", std::process::id()));
    for (workload, store) in TASK_WORKLOADS {
        if !options.workloads.contains(&workload) {
            continue;
        }
        for spec in specs {
            if report::not_applicable(workload, spec.name).is_some() {
                continue;
            }
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let store = match store {
                "sqlite" => format!("sqlite:{}", dir.join("tasks.db").display()),
                "postgres" => bench_postgres_url(),
                other => other.to_string(),
            };
            let server = launcher.http_tasks(spec, &store).await?;
            let s = measured!(
                options,
                retries,
                server.pid,
                format!("{workload} {}", spec.name),
                harness::task_load::run(&server.target, 16, options.warmup, options.measure).await
            );
            log_sample(round, workload, spec.name, &s);
            samples.add(workload, spec.name, s);
            server.stop().await;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
