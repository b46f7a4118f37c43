//! `--telemetry`: what the instrumentation costs the snodo server.

use crate::harness;
use crate::harness::http_load;
use crate::harness::procs::{self, Launcher};
use crate::harness::provenance::Provenance;
use crate::harness::wire::{Expect, Work};
use crate::machine::wait_for_idle;
use crate::options::Options;

/// `--telemetry`: the snodo server built bare (and, with `--baseline REV`,
/// as it was at REV), with no subscriber, and exporting, on the same loads
/// in a random order each round.
pub(crate) fn telemetry_main(
    options: &mut Options,
    dir: std::path::PathBuf,
    provenance: &Provenance,
) -> Result<(), String> {
    use harness::telemetry::{self, LOADS, Run};
    let snodo = procs::SNODO_FULL;
    let bare = procs::SNODO_BARE;
    if options.build {
        procs::build_these(&dir, &[snodo, bare])?;
    }
    for spec in [snodo, bare] {
        if !dir.join(spec.bin).is_file() {
            return Err(format!(
                "{} not found (cargo build --release -p {})",
                spec.bin, spec.bin
            ));
        }
    }
    let before_dir = match &options.baseline {
        Some(rev) => Some(telemetry::build_baseline(rev, &dir)?),
        None => None,
    };
    let mut variants: Vec<&'static str> = Vec::new();
    if before_dir.is_some() {
        variants.push("before");
    }
    variants.extend(["bare", "on", "exported", "sampled"]);
    if let Some(only) = &options.variants {
        if let Some(unknown) = only.iter().find(|o| !variants.contains(&o.as_str())) {
            return Err(format!("--variants: no variant {unknown:?} in this run"));
        }
        variants.retain(|v| only.iter().any(|o| o == v));
    }
    // The ratios are against a build without the instrumentation: the
    // commit before it when given, else the build with tracing compiled out.
    let base = 0;
    let (launcher, pinned) = super::pinned_launcher(options, dir)?;
    let before_launcher = before_dir.map(|dir| Launcher {
        dir,
        ..launcher.clone()
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let window = options.warmup + options.measure;
    // runs[load][variant]: one Run per round.
    let mut runs: Vec<Vec<Vec<Run>>> = vec![vec![Vec::new(); variants.len()]; LOADS.len()];
    runtime.block_on(async {
        let (collector, sink) = telemetry::collector().await?;
        for round in 1..=options.rounds {
            eprintln!("round {round}/{}", options.rounds);
            if options.wait_idle {
                wait_for_idle().await;
            }
            let mut servers = Vec::new();
            for variant in &variants {
                let server = match *variant {
                    "before" => {
                        let l = before_launcher.as_ref().ok_or("no baseline")?;
                        l.http(&snodo).await?
                    }
                    "bare" => launcher.http(&bare).await?,
                    "on" => launcher.http(&snodo).await?,
                    other => {
                        let env = telemetry::exported_env(collector, other == "sampled");
                        launcher.http_env(&snodo, &env).await?
                    }
                };
                http_load::one(&server.target, Work::Echo, Expect::Echo, 1)
                    .await
                    .map_err(|e| format!("{variant}: first request failed: {e}"))?;
                servers.push(server);
            }
            tokio::time::sleep(telemetry::DRAIN).await;
            sink.take_spans();
            for (l, (load, connections)) in LOADS.iter().enumerate() {
                for v in telemetry::shuffled(variants.len(), round) {
                    let server = &servers[v];
                    let cpu0 = procs::cpu_ns(server.pid);
                    let out = http_load::run(
                        &server.target,
                        Work::Echo,
                        Expect::Echo,
                        *connections,
                        options.warmup,
                        options.measure,
                    )
                    .await;
                    let cpu1 = procs::cpu_ns(server.pid);
                    let served = out.rps() * window.as_secs_f64();
                    let spans_per_req = if matches!(variants[v], "exported" | "sampled") {
                        tokio::time::sleep(telemetry::DRAIN).await;
                        Some(sink.take_spans() as f64 / served.max(1.0))
                    } else {
                        None
                    };
                    let run = Run {
                        rps: out.rps(),
                        cpu_us_per_req: cpu0
                            .zip(cpu1)
                            .map(|(a, b)| (b.saturating_sub(a)) as f64 / 1000.0 / served.max(1.0)),
                        spans_per_req,
                        errors: out.errors,
                    };
                    eprintln!(
                        "  {load} {}: {:.0} req/s, {} errors{}",
                        variants[v],
                        run.rps,
                        run.errors,
                        run.spans_per_req
                            .map(|s| format!(", {s:.2} spans/request"))
                            .unwrap_or_default()
                    );
                    runs[l][v].push(run);
                }
            }
            for server in servers {
                server.stop().await;
            }
        }
        Ok::<_, String>(())
    })?;
    let mut md = format!(
        "Command: `cargo run --release -p snodo-bench --{}`\n\n{}\n\
         The snodo server {} ways, {} rounds of {:.1} s warm-up + {:.1} s measured, a random order each round, medians (min-max) and the median of the per-round ratios; {}. \
         {}`bare`: every tracing span and event compiled out (`tracing`'s `max_level_off`); `on`: the default build, no subscriber; \
         `exported`: every span and the metrics exported over OTLP/HTTP to a collector in the harness; \
         `sampled`: the same with the standard `traceidratio` sampler at 10 % (metrics for every request). \
         Server CPU per request counts the warm-up too.\n\n\
         | load | variant | req/s | / {} | server CPU µs/request | spans/request | errors |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
        options
            .args
            .iter()
            .map(|a| format!(" {a}"))
            .collect::<String>(),
        provenance.markdown(),
        variants.len(),
        options.rounds,
        options.warmup.as_secs_f64(),
        options.measure.as_secs_f64(),
        if pinned {
            "servers on CPU 0, load generator on CPU 1"
        } else {
            "not pinned"
        },
        match &options.baseline {
            Some(rev) =>
                format!("`before`: the same server at `{rev}`, before the instrumentation; "),
            None => String::new(),
        },
        variants[base],
    );
    let mut json = serde_json::Map::new();
    let mut verdicts = Vec::new();
    for (l, (load, _)) in LOADS.iter().enumerate() {
        let med = |v: usize, f: &dyn Fn(&Run) -> Option<f64>| {
            telemetry::median(runs[l][v].iter().filter_map(f).collect())
        };
        let ratio = |v: usize| {
            // The median of the per-round ratios: a round's runs are
            // neighbours in time.
            telemetry::median(
                runs[l][v]
                    .iter()
                    .zip(&runs[l][base])
                    .map(|(r, b)| r.rps / b.rps.max(1.0))
                    .collect(),
            )
            .unwrap_or(0.0)
        };
        let errors: u64 = runs[l].iter().flatten().map(|r| r.errors).sum();
        let mut entries = serde_json::Map::new();
        for (v, name) in variants.iter().enumerate() {
            let rps: Vec<f64> = runs[l][v].iter().map(|r| r.rps).collect();
            let lo = rps.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rps.iter().copied().fold(0.0, f64::max);
            let median_rps = med(v, &|r| Some(r.rps)).unwrap_or(0.0);
            let cpu = med(v, &|r| r.cpu_us_per_req);
            let spans = med(v, &|r| r.spans_per_req);
            let v_errors: u64 = runs[l][v].iter().map(|r| r.errors).sum();
            md.push_str(&format!(
                "| {load} | {name} | {median_rps:.0} ({lo:.0}-{hi:.0}) | {:.3} | {} | {} | {v_errors} |\n",
                ratio(v),
                cpu.map_or("-".into(), |c| format!("{c:.1}")),
                spans.map_or("-".into(), |s| format!("{s:.2}")),
            ));
            entries.insert(
                (*name).into(),
                serde_json::json!({
                    "rps_median": median_rps,
                    "over_baseline": ratio(v),
                    "cpu_us_per_req_median": cpu,
                    "spans_per_request": spans,
                    "errors": v_errors,
                    "samples": runs[l][v],
                }),
            );
        }
        // A goal holds only when its build really did what it names: the
        // collector received about one span per request (exported), or
        // about a tenth of them (sampled).
        for (name, goal, min, spans_expected) in [
            ("on", "with no subscriber", 0.98, None),
            (
                "exported",
                "exporting every span and the metrics",
                0.85,
                Some(0.95..=1.05),
            ),
            (
                "sampled",
                "exporting 10 % of the spans and every metric",
                0.85,
                Some(0.05..=0.15),
            ),
        ] {
            let Some(v) = variants.iter().position(|v| *v == name) else {
                continue;
            };
            let r = ratio(v);
            let spans = med(v, &|r| r.spans_per_req);
            let exported = match (&spans_expected, spans) {
                (None, _) => true,
                (Some(range), Some(s)) => range.contains(&s),
                (Some(_), None) => false,
            };
            let mut text = format!("{load}: {goal} at least {min}x `{}`", variants[base]);
            if let (Some(range), Some(s)) = (&spans_expected, spans) {
                text.push_str(&format!(
                    " with {:.2}-{:.2} spans/request exported ({s:.2})",
                    range.start(),
                    range.end()
                ));
            }
            verdicts.push((text, errors == 0 && exported && r >= min, r));
        }
        json.insert(
            (*load).into(),
            serde_json::json!({"baseline": variants[base], "variants": entries, "errors": errors}),
        );
    }
    let doc = telemetry::document(
        &telemetry::Settings {
            rounds: options.rounds,
            warmup: options.warmup,
            measure: options.measure,
            pinned,
            baseline: options.baseline.clone(),
        },
        json,
        provenance,
    );
    let charts = match &options.json {
        Some(path) => harness::output::write(path, &doc)?,
        None => Vec::new(),
    };
    let mut goals = String::from("\nGoals:\n\n");
    for (goal, met, ratio) in &verdicts {
        goals.push_str(&format!(
            "- {goal}: {} ({ratio:.3}x)\n",
            if *met { "met" } else { "not met" }
        ));
    }
    // The chart's name is the one next to the JSON file.
    print!("{}", harness::docs::with_charts(&md, &goals, &charts, ""));
    Ok(())
}
