//! The charts of each results document, drawn from its JSON (so that a
//! document written earlier draws the same charts as the run that wrote
//! it): for the main run, throughput, server CPU per request and latency by
//! workload and server; for `--telemetry`, `--bridge` and `--fanout`, their
//! main figures.

use serde_json::Value;

use super::chart::{Bar, Chart, Group, Panel};
use super::procs::{VALIDATED, VALIDATED_BASIC};

/// One chart of a document: the end of its file name (after the JSON's
/// stem), what it shows (the image's alternative text), and the chart.
#[derive(Debug, Clone)]
pub(crate) struct Figure {
    /// Appended to the JSON file's stem: `-throughput` gives
    /// `latest-throughput.svg` for `latest.json`; empty for a mode's one
    /// chart.
    pub(crate) suffix: &'static str,
    /// What the chart shows, in a few words.
    pub(crate) alt: &'static str,
    /// The chart.
    pub(crate) chart: Chart,
}

/// The main run's charts: file name suffix and what each shows.
const MAIN: [(&str, &str); 3] = [
    (
        "-throughput",
        "Throughput by workload and server (req/s, higher is better)",
    ),
    (
        "-cpu",
        "Server CPU per request by workload and server (µs, lower is better)",
    ),
    (
        "-latency",
        "Latency percentiles by workload and server (µs, lower is better)",
    ),
];

/// A short label for each workload the charts show, in chart order.
const LABELS: &[(&str, &str)] = &[
    ("http_call_c1", "HTTP tools/call, 1 connection"),
    ("http_call_c16", "HTTP tools/call, 16 connections"),
    ("http_call_c64", "HTTP tools/call, 64 connections"),
    ("http_add_c64", "HTTP tools/call add, 64 connections"),
    (VALIDATED, "validated by full JSON Schema 2020-12, c=64"),
    (VALIDATED_BASIC, "validated by snodo's Basic subset, c=64"),
    ("http_open_50", "open loop at 50 % of own max"),
    ("http_open_80", "open loop at 80 % of own max"),
    ("http_open_same", "open loop, one rate for all"),
    ("http_call_c64_2cpu", "HTTP tools/call, c=64, 2 CPUs shared"),
    ("http_call_auth_c16", "HTTP tools/call with a JWT, c=16"),
    (
        "http_call_jwt_sig_c16",
        "JWT signature checked per call, c=16",
    ),
    ("http_list_c16", "HTTP tools/list, 16 connections"),
    ("http_task_memory_c16", "tasks in memory, c=16 (tasks/s)"),
    ("http_task_sqlite_c16", "tasks in SQLite, c=16 (tasks/s)"),
    (
        "http_task_postgres_c16",
        "tasks in PostgreSQL, c=16 (tasks/s)",
    ),
    ("stdio_call_f1", "stdio tools/call, 1 in flight"),
    ("stdio_call_f64", "stdio tools/call, 64 in flight"),
    (
        "http_session_call_c64",
        "2025-11-25 sessions, 64 connections",
    ),
];

/// Workloads whose latency the latency chart shows (the others' restate
/// their throughput, or measure something else).
const LATENCY: [&str; 9] = [
    "http_call_c1",
    "http_call_c64",
    "http_open_50",
    "http_open_80",
    "http_open_same",
    "http_list_c16",
    "stdio_call_f1",
    "stdio_call_f64",
    "http_session_call_c64",
];

/// snodo-only workloads whose CPU per request (per task, per signature
/// check) would set the CPU chart's scale for nothing compared.
const SNODO_ONLY: [&str; 5] = [
    "http_call_auth_c16",
    "http_call_jwt_sig_c16",
    "http_task_memory_c16",
    "http_task_sqlite_c16",
    "http_task_postgres_c16",
];

/// Open-loop workloads: their rate is the one asked for, not a maximum.
const OPEN_LOOP: [&str; 3] = ["http_open_50", "http_open_80", "http_open_same"];

/// The charts of any results document (main run, `--telemetry`, `--bridge`
/// or `--fanout`), told apart by its members.
pub(crate) fn of_document(doc: &Value) -> Result<Vec<Figure>, String> {
    if doc.get("runs").is_some() {
        Ok(main(doc))
    } else if let Some(t) = doc.get("telemetry") {
        Ok(vec![telemetry(t, doc)])
    } else if let Some(b) = doc.get("bridge") {
        Ok(vec![bridge(b, doc)])
    } else if let Some(f) = doc.get("fanout") {
        Ok(vec![fanout(f, doc)])
    } else {
        Err("not a results document of snodo-bench (no runs, telemetry, bridge or fanout)".into())
    }
}

/// The line under each title: the commit, the toolchain, the machine and
/// the rounds, from the provenance block (or, in main documents written
/// before it, from `meta`).
fn subtitle(doc: &Value, rounds: Option<u64>) -> Option<String> {
    let mut parts = Vec::new();
    let Some(p) = doc
        .get("provenance")
        .or_else(|| doc.get("meta").filter(|m| m.get("commit").is_some()))
    else {
        parts.push("no commit, toolchain or machine recorded".to_string());
        if let Some(r) = rounds {
            parts.push(format!("medians of {r} rounds"));
        }
        return Some(parts.join(" · "));
    };
    if let Some(commit) = p["commit"].as_str() {
        let (hash, changed) = match commit.strip_suffix("+changes") {
            Some(hash) => (hash, true),
            None => (commit, p["dirty"] == Value::Bool(true)),
        };
        parts.push(format!(
            "commit {}{}",
            &hash[..hash.len().min(10)],
            if changed { " with changes" } else { "" }
        ));
    }
    if let Some(rustc) = p["rustc"].as_str() {
        parts.push(rustc.split(" (").next().unwrap_or(rustc).to_string());
    }
    let machine = p.get("machine").unwrap_or(p);
    if let (Some(cpus), Some(model)) = (machine["cpus"].as_u64(), machine["cpu_model"].as_str()) {
        parts.push(format!("{cpus} × {model}"));
    }
    if let Some(r) = rounds {
        parts.push(format!("medians of {r} rounds"));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The label of the validated workload in a document written before it
/// compared full validators on each side (its runs name no validator).
const VALIDATED_EARLIER: &str = "HTTP tools/call, arguments validated, c=64";

fn label(workload: &str) -> String {
    LABELS
        .iter()
        .find(|(w, _)| *w == workload)
        .map_or_else(|| workload.to_string(), |(_, l)| (*l).to_string())
}

/// The main run's three charts.
fn main(doc: &Value) -> Vec<Figure> {
    let runs: Vec<&Value> = doc["runs"].as_array().into_iter().flatten().collect();
    let mut servers: Vec<String> = Vec::new();
    for run in &runs {
        if let Some(s) = run["server"].as_str()
            && !servers.iter().any(|x| x == s)
        {
            servers.push(s.to_string());
        }
    }
    let sub = subtitle(doc, doc["meta"]["rounds"].as_u64());
    let find = |workload: &str, server: &str| {
        runs.iter()
            .find(|r| r["workload"] == workload && r["server"] == server)
            .filter(|r| r.get("note").is_none_or(Value::is_null))
    };
    // A document written before the validated workload compared full
    // validators names no validator: its label then claims none.
    let earlier = !runs
        .iter()
        .any(|r| r["workload"] == VALIDATED && r.get("validator").is_some());
    let groups = |workloads: &[&str], values: &dyn Fn(&Value) -> Vec<Option<f64>>| {
        workloads
            .iter()
            .map(|w| Group {
                label: if earlier && *w == VALIDATED {
                    VALIDATED_EARLIER.to_string()
                } else {
                    label(w)
                },
                detail: Some((*w).to_string()),
                bars: servers
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| {
                        let run = find(w, s)?;
                        Some(Bar {
                            series: i,
                            values: values(run),
                            note: run_note(run),
                        })
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let closed: Vec<&str> = LABELS
        .iter()
        .map(|(w, _)| *w)
        .filter(|w| !OPEN_LOOP.contains(w))
        .collect();
    let compared: Vec<&str> = closed
        .iter()
        .copied()
        .filter(|w| !SNODO_ONLY.contains(w))
        .collect();
    let figure = |i: usize, panel: Panel| Figure {
        suffix: MAIN[i].0,
        alt: MAIN[i].1,
        chart: Chart {
            title: MAIN[i].1.to_string(),
            subtitle: sub.clone(),
            series: servers.clone(),
            panels: vec![panel],
        },
    };
    let f = |key: &'static str| move |r: &Value| vec![r[key].as_f64()];
    vec![
        figure(
            0,
            Panel {
                title: "Closed loop: each connection sends its next request when the answer is in"
                    .into(),
                axis: "requests per second (req/s)".into(),
                levels: Vec::new(),
                groups: groups(&closed, &f("rps")),
            },
        ),
        figure(
            1,
            Panel {
                title: "Server CPU time over the measured window per request served (snodo-only workloads left out)".into(),
                axis: "server CPU per request (µs)".into(),
                levels: Vec::new(),
                groups: groups(&compared, &f("cpu_us_per_req")),
            },
        ),
        figure(
            2,
            Panel {
                title: "Open-loop rows from the scheduled send time; closed-loop latency restates throughput"
                    .into(),
                axis: "latency (µs)".into(),
                levels: vec!["p50".into(), "p99".into(), "p99.9".into()],
                groups: groups(&LATENCY, &|r| {
                    vec![r["p50_us"].as_f64(), r["p99_us"].as_f64(), r["p999_us"].as_f64()]
                }),
            },
        ),
    ]
}

/// What a bar of the main run says after its value: the validator its
/// server checked the arguments with, and any errors.
fn run_note(run: &Value) -> Option<String> {
    let mut notes = Vec::new();
    if let Some(v) = run["validator"].as_str() {
        notes.push(v.split(',').next().unwrap_or(v).to_string());
    }
    if let Some(e) = run["errors"].as_u64().filter(|e| *e > 0) {
        notes.push(format!("{e} errors"));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The names of `map`'s members: `order` first (those present), then the
/// rest as they come.
fn ordered<'a>(map: &'a Value, order: &[&str]) -> Vec<&'a str> {
    let Some(map) = map.as_object() else {
        return Vec::new();
    };
    let mut names: Vec<&str> = order
        .iter()
        .filter_map(|o| map.get_key_value(*o).map(|(k, _)| k.as_str()))
        .collect();
    names.extend(
        map.keys()
            .map(String::as_str)
            .filter(|k| !order.contains(k)),
    );
    names
}

/// The names of every map in `maps`, each once, in [`ordered`]'s order
/// (`order` first, then the others as they come).
fn union_of<'a>(maps: impl Iterator<Item = &'a Value>, order: &[&str]) -> Vec<String> {
    let mut all: Vec<&str> = Vec::new();
    for map in maps {
        for name in ordered(map, order) {
            if !all.contains(&name) {
                all.push(name);
            }
        }
    }
    all.into_iter().map(str::to_string).collect()
}

/// The load names of `--telemetry` and `--bridge`, labelled.
fn load_group(load: &str, bars: Vec<Bar>) -> Group {
    Group {
        label: label(load),
        detail: Some(load.to_string()),
        bars,
    }
}

/// `--telemetry`: throughput and server CPU per request of each build.
fn telemetry(t: &Value, doc: &Value) -> Figure {
    let loads = ordered(&t["loads"], &[]);
    let variants = union_of(
        loads.iter().map(|load| &t["loads"][*load]["variants"]),
        &["before", "bare", "on", "exported", "sampled"],
    );
    let panel = |title: &str, axis: &str, key: &str, ratio: bool| Panel {
        title: title.into(),
        axis: axis.into(),
        levels: Vec::new(),
        groups: loads
            .iter()
            .map(|load| {
                let entry = &t["loads"][*load];
                let base = entry["baseline"].as_str().unwrap_or("the first");
                let bars = variants
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| {
                        let e = entry["variants"].get(v)?;
                        Some(Bar {
                            series: i,
                            values: vec![e[key].as_f64()],
                            note: if ratio {
                                e["over_baseline"]
                                    .as_f64()
                                    .map(|r| format!("{r:.3}× {base}"))
                            } else {
                                e["spans_per_request"]
                                    .as_f64()
                                    .map(|s| format!("{s:.2} spans/request"))
                            },
                        })
                    })
                    .collect();
                load_group(load, bars)
            })
            .collect(),
    };
    let panels = vec![
        panel(
            "Throughput (the note: median of the per-round ratios)",
            "requests per second (req/s)",
            "rps_median",
            true,
        ),
        panel(
            "Server CPU per request (warm-up included)",
            "server CPU per request (µs)",
            "cpu_us_per_req_median",
            false,
        ),
    ];
    Figure {
        suffix: "",
        alt: "Telemetry overhead: throughput and server CPU per request of each build",
        chart: Chart {
            title: "Telemetry overhead: the snodo server with and without its instrumentation"
                .into(),
            subtitle: subtitle(doc, t["rounds"].as_u64()),
            series: variants,
            panels,
        },
    }
}

/// `--bridge`: throughput and latency, direct and behind `snodo serve`.
fn bridge(b: &Value, doc: &Value) -> Figure {
    let loads = ordered(&b["loads"], &[]);
    let variants = union_of(
        loads.iter().map(|load| &b["loads"][*load]),
        &["direct", "bridge-stdio", "bridge-http"],
    );
    let panel = |title: &str,
                 axis: &str,
                 levels: &[&str],
                 values: &dyn Fn(&Value) -> Vec<Option<f64>>,
                 ratio: bool| Panel {
        title: title.into(),
        axis: axis.into(),
        levels: levels.iter().map(|l| (*l).to_string()).collect(),
        groups: loads
            .iter()
            .map(|load| {
                let bars = variants
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| {
                        let e = b["loads"][*load].get(v)?;
                        Some(Bar {
                            series: i,
                            values: values(e),
                            note: ratio
                                .then(|| {
                                    e["over_direct"].as_f64().map(|r| format!("{r:.2}× direct"))
                                })
                                .flatten(),
                        })
                    })
                    .collect();
                load_group(load, bars)
            })
            .collect(),
    };
    let panels = vec![
        panel(
            "Throughput (the note: median of the per-round ratios)",
            "requests per second (req/s)",
            &[],
            &|e| vec![e["rps_median"].as_f64()],
            true,
        ),
        panel(
            "Latency",
            "latency (µs)",
            &["p50", "p99"],
            &|e| vec![e["p50_us"].as_f64(), e["p99_us"].as_f64()],
            false,
        ),
    ];
    Figure {
        suffix: "",
        alt: "The bridge's cost: throughput and latency direct and behind snodo serve",
        chart: Chart {
            title: "The bridge's cost: the snodo server direct and behind snodo serve".into(),
            subtitle: subtitle(doc, b["rounds"].as_u64()),
            series: variants,
            panels,
        },
    }
}

/// `--fanout`: the rate each bus kept and the delivery latency, by the rate
/// asked for.
fn fanout(f: &Value, doc: &Value) -> Figure {
    let buses = ordered(&f["buses"], &["redis", "postgres"]);
    let mut rates: Vec<u64> = Vec::new();
    for bus in &buses {
        for step in f["buses"][*bus].as_array().into_iter().flatten() {
            if let Some(r) = step["updates_per_s"].as_u64()
                && !rates.contains(&r)
            {
                rates.push(r);
            }
        }
    }
    rates.sort_unstable();
    let panel = |title: &str,
                 axis: &str,
                 levels: &[&str],
                 values: &dyn Fn(&Value) -> Vec<Option<f64>>,
                 sustained: bool| Panel {
        title: title.into(),
        axis: axis.into(),
        levels: levels.iter().map(|l| (*l).to_string()).collect(),
        groups: rates
            .iter()
            .map(|rate| Group {
                label: format!("{rate} updates/s asked"),
                detail: None,
                bars: buses
                    .iter()
                    .enumerate()
                    .filter_map(|(i, bus)| {
                        let step = f["buses"][*bus]
                            .as_array()?
                            .iter()
                            .find(|s| s["updates_per_s"].as_u64() == Some(*rate))?;
                        Some(Bar {
                            series: i,
                            values: values(step),
                            note: (sustained && step["sustained"] == Value::Bool(false))
                                .then(|| "not sustained".to_string()),
                        })
                    })
                    .collect(),
            })
            .collect(),
    };
    Figure {
        suffix: "",
        alt: "Fan-out: updates per second kept and delivery latency by bus",
        chart: Chart {
            title: format!(
                "Fan-out: {} listen streams on {} nodes, by bus",
                f["listeners"].as_u64().unwrap_or(0),
                f["nodes"].as_u64().unwrap_or(0)
            ),
            subtitle: subtitle(doc, f["rounds"].as_u64()),
            series: buses.iter().map(|b| (*b).to_string()).collect(),
            panels: vec![
                panel(
                    "Updates per second achieved",
                    "updates per second",
                    &[],
                    &|s| vec![s["achieved_updates_per_s"].as_f64()],
                    true,
                ),
                panel(
                    "From the announcing call to each delivery",
                    "delivery latency (ms)",
                    &["p50", "p99", "max"],
                    &|s| {
                        vec![
                            s["p50_ms"].as_f64(),
                            s["p99_ms"].as_f64(),
                            s["max_ms"].as_f64(),
                        ]
                    },
                    false,
                ),
            ],
        },
    }
}
