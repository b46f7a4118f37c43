//! What a mode writes: its JSON document.

use std::path::Path;

use serde_json::Value;

/// Writes `doc` to `path` as JSON.
pub(crate) fn write(path: &Path, doc: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

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
}
