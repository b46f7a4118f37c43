//! What a mode writes: its JSON document, and the charts drawn from it next
//! to it (`latest.json` gives `latest-throughput.svg`, `latest-cpu.svg` and
//! `latest-latency.svg`; `bridge.json` gives `bridge.svg`).

use std::path::Path;

use serde_json::Value;

use super::chart;
use super::figures;

/// A chart written: its file name and what it shows.
pub(crate) type ChartFile = (String, &'static str);

/// Writes `doc` to `path` as JSON and its charts next to it; returns the
/// charts' file names.
pub(crate) fn write(path: &Path, doc: &Value) -> Result<Vec<ChartFile>, String> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    write_charts_next_to(path, doc)
}

/// Draws the charts of `doc` next to `path` (named after its stem).
pub(crate) fn write_charts_next_to(path: &Path, doc: &Value) -> Result<Vec<ChartFile>, String> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{}: no file name", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    write_charts(dir, stem, doc)
}

/// Draws the charts of `doc` into `dir`, named after `stem`.
pub(crate) fn write_charts(dir: &Path, stem: &str, doc: &Value) -> Result<Vec<ChartFile>, String> {
    let mut written = Vec::new();
    for figure in figures::of_document(doc)? {
        let name = format!("{stem}{}.svg", figure.suffix);
        let path = dir.join(&name);
        std::fs::write(&path, chart::render(&figure.chart))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
        written.push((name, figure.alt));
    }
    Ok(written)
}

/// `--charts-from PATH`: draws the charts of a results document written
/// earlier, next to it, without running anything.
pub(crate) fn charts_from(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    write_charts_next_to(path, &doc).map(drop)
}

/// Markdown image lines for `charts`, each file name after `prefix` (the
/// charts' folder as seen from the markdown file).
pub(crate) fn images(charts: &[ChartFile], prefix: &str) -> String {
    charts
        .iter()
        .map(|(file, alt)| format!("![{alt}]({prefix}{file})\n"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::super::chart::tests::{bars, check_well_formed};
    use super::super::procs::{Launcher, VALIDATED, VALIDATED_BASIC};
    use super::super::provenance::tests::example;
    use super::super::report::{self, Sample, Samples};
    use super::super::{bridge, fanout, telemetry};
    use super::*;

    fn sample(rps: f64, cpu: f64) -> Sample {
        Sample {
            rps: Some(rps),
            p50_us: Some(64e6 / rps / 2.0),
            p99_us: Some(64e6 / rps),
            p999_us: Some(128e6 / rps),
            cpu_us_per_req: Some(cpu),
            ..Sample::default()
        }
    }

    /// The main run's document of a small run.
    fn main_document() -> Value {
        let mut samples = Samples::default();
        for (workload, server, rps, cpu) in [
            ("http_call_c64", "snodo", 92_000.0, 10.7),
            ("http_call_c64", "tower-mcp", 15_000.0, 65.8),
            (VALIDATED, "snodo", 85_000.0, 11.6),
            (VALIDATED, "tower-mcp", 14_500.0, 66.0),
            (VALIDATED_BASIC, "snodo", 91_000.0, 10.8),
            ("stdio_call_f1", "snodo", 12_000.0, 36.2),
        ] {
            samples.add(workload, server, sample(rps, cpu));
        }
        let runs = report::summarize(
            &samples,
            &["snodo", "tower-mcp"],
            &["http_call_c64", VALIDATED, VALIDATED_BASIC, "stdio_call_f1"],
        );
        let goals = report::goals(&runs);
        report::document(json!({"rounds": 1}), runs, goals, &example())
    }

    fn telemetry_document() -> Value {
        let variant = |rps: f64, ratio: f64, spans: Option<f64>| {
            json!({"rps_median": rps, "over_baseline": ratio, "cpu_us_per_req_median": 1e6 / rps,
                   "spans_per_request": spans, "errors": 0, "samples": []})
        };
        let mut loads = serde_json::Map::new();
        loads.insert(
            "http_call_c16".into(),
            json!({"baseline": "bare", "errors": 0, "variants": {
                "bare": variant(80_000.0, 1.0, None),
                "on": variant(81_000.0, 1.01, None),
                "exported": variant(72_000.0, 0.9, Some(1.0)),
            }}),
        );
        let settings = telemetry::Settings {
            rounds: 2,
            warmup: Duration::from_millis(200),
            measure: Duration::from_millis(800),
            pinned: true,
            baseline: None,
        };
        telemetry::document(&settings, loads, &example())
    }

    fn bridge_document() -> Value {
        let setup = bridge::Setup {
            launcher: Launcher {
                dir: ".".into(),
                server_cpu: None,
                show_stderr: false,
            },
            rounds: 2,
            warmup: Duration::from_millis(200),
            measure: Duration::from_millis(800),
            json: None,
            command: String::new(),
            pinned: false,
            provenance: example(),
        };
        let variant = |rps: f64, p50: f64, p99: f64| {
            json!({"rps_median": rps, "over_direct": rps / 8000.0, "p50_us": p50, "p99_us": p99,
                   "added_p50_us": null, "added_p99_us": null, "errors": 0, "samples": []})
        };
        let mut loads = serde_json::Map::new();
        loads.insert(
            "http_call_c1".into(),
            json!({"direct": variant(8000.0, 118.0, 194.0),
                   "bridge-stdio": variant(3957.0, 243.0, 361.0),
                   "bridge-http": variant(3228.0, 296.0, 452.0)}),
        );
        bridge::document(&setup, loads)
    }

    fn fanout_document() -> Value {
        let step = |rate: u64, achieved: f64, sustained: bool| {
            json!({"updates_per_s": rate, "achieved_updates_per_s": achieved, "published": 0,
                   "delivered": 0, "expected": 0, "deliveries_per_s": achieved * 1000.0,
                   "p50_ms": 8.0, "p99_ms": 14.0, "max_ms": 16.0, "resyncs": 0,
                   "sustained": sustained})
        };
        let mut buses = serde_json::Map::new();
        buses.insert(
            "redis".into(),
            json!([step(25, 25.0, true), step(400, 222.0, false)]),
        );
        buses.insert(
            "postgres".into(),
            json!([step(25, 25.0, true), step(400, 218.0, false)]),
        );
        fanout::document(1000, 1, Duration::from_secs(2), buses, &example())
    }

    #[test]
    fn every_mode_writes_the_provenance_block() {
        let expected = example().to_json();
        for (mode, doc) in [
            ("runs", main_document()),
            ("telemetry", telemetry_document()),
            ("bridge", bridge_document()),
            ("fanout", fanout_document()),
        ] {
            assert!(doc.get(mode).is_some(), "{mode}: the mode's own member");
            assert_eq!(doc["provenance"], expected, "{mode}: the provenance block");
            assert_eq!(
                doc["provenance"]["machine"]["cpu_model"], "Intel(R) Xeon(R) Processor",
                "{mode}"
            );
        }
        // The main document keeps the members earlier versions had.
        let main = main_document();
        assert_eq!(main["meta"]["rounds"], 1);
        let validated: Vec<&Value> = main["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["workload"] == VALIDATED && r["note"].is_null())
            .collect();
        assert_eq!(validated.len(), 2);
        assert!(validated.iter().all(|r| {
            r["validator"]
                .as_str()
                .unwrap()
                .contains("JSON Schema 2020-12")
        }));
    }

    #[test]
    fn every_mode_draws_its_charts() {
        for (doc, names) in [
            (
                main_document(),
                &[
                    "snodo",
                    "tower-mcp",
                    "http_call_c64",
                    VALIDATED,
                    VALIDATED_BASIC,
                    "stdio_call_f1",
                    "· Full",
                    "· Basic",
                    "· schema-validation",
                    "commit 0123456789 with changes",
                ][..],
            ),
            (
                telemetry_document(),
                &["bare", "on", "exported", "http_call_c16", "0.900× bare"][..],
            ),
            (
                bridge_document(),
                &[
                    "direct",
                    "bridge-stdio",
                    "bridge-http",
                    "http_call_c1",
                    "0.49× direct",
                ][..],
            ),
            (
                fanout_document(),
                &[
                    "redis",
                    "postgres",
                    "25 updates/s",
                    "400 updates/s",
                    "not sustained",
                ][..],
            ),
        ] {
            let figures = figures::of_document(&doc).unwrap();
            let svgs: Vec<String> = figures.iter().map(|f| chart::render(&f.chart)).collect();
            for svg in &svgs {
                check_well_formed(svg).unwrap();
                assert!(!bars(svg).is_empty());
            }
            let all = svgs.concat();
            for name in names {
                assert!(all.contains(name), "{name} missing");
            }
        }
        let main = figures::of_document(&main_document()).unwrap();
        let files: Vec<&str> = main.iter().map(|f| f.suffix).collect();
        assert_eq!(files, ["-throughput", "-cpu", "-latency"]);
        // The throughput chart: snodo's http_call_c64 bar is 92/15 of
        // tower-mcp's.
        let svg = chart::render(&main[0].chart);
        let widths: Vec<(f64, f64)> = bars(&svg);
        assert_eq!(widths[0].0, 92_000.0);
        assert_eq!(widths[1].0, 15_000.0);
        assert!((widths[0].1 / widths[1].1 - 92.0 / 15.0).abs() < 1e-3);
        assert!(figures::of_document(&json!({"other": 1})).is_err());
    }

    #[test]
    fn an_earlier_document_claims_no_validator() {
        let mut doc = main_document();
        for run in doc["runs"].as_array_mut().unwrap() {
            run.as_object_mut().unwrap().remove("validator");
        }
        doc.as_object_mut().unwrap().remove("provenance");
        let svg = chart::render(&figures::of_document(&doc).unwrap()[0].chart);
        assert!(svg.contains("HTTP tools/call, arguments validated, c=64"));
        assert!(!svg.contains("full JSON Schema"));
        assert!(!svg.contains("· Full"));
        assert!(svg.contains("no commit, toolchain or machine recorded"));
    }

    #[test]
    fn images_link_each_chart() {
        let charts = vec![("bridge.svg".to_string(), "The bridge's cost")];
        assert_eq!(
            images(&charts, "results/"),
            "![The bridge's cost](results/bridge.svg)\n"
        );
    }
}
