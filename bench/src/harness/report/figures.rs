//! Reading figures out of the runs: fields, their formatting, and ratios.

use super::summary::Run;

pub(super) fn find<'a>(runs: &'a [Run], workload: &str, server: &str) -> Option<&'a Run> {
    runs.iter()
        .find(|r| r.workload == workload && r.server == server)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Rps,
    P50,
    P99,
    P999,
    Rss,
    StartMs,
    CpuPerReq,
    Bottleneck,
}

pub(super) fn value(run: &Run, field: Field) -> Option<f64> {
    match field {
        Field::Rps => run.rps,
        Field::P50 => run.p50_us,
        Field::P99 => run.p99_us,
        Field::P999 => run.p999_us,
        Field::Rss => run.peak_rss_kb.map(|k| k as f64),
        Field::StartMs => run.p50_us.map(|us| us / 1000.0),
        Field::CpuPerReq => run.cpu_us_per_req,
        Field::Bottleneck => None,
    }
}

pub(super) fn fmt_value(v: f64, field: Field) -> String {
    match field {
        Field::Rps | Field::Rss => group_thousands(v.round() as u64),
        Field::P50 | Field::P99 | Field::P999 => {
            if v >= 100.0 {
                group_thousands(v.round() as u64)
            } else {
                format!("{v:.1}")
            }
        }
        Field::StartMs | Field::CpuPerReq => format!("{v:.1}"),
        Field::Bottleneck => String::new(),
    }
}

pub(super) fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

pub(super) fn ratio_of(
    runs: &[Run],
    workload: &str,
    a: &str,
    b: &str,
    field: Field,
) -> Option<f64> {
    let a = find(runs, workload, a).filter(|r| r.note.is_none())?;
    let b = find(runs, workload, b).filter(|r| r.note.is_none())?;
    let (a, b) = (value(a, field)?, value(b, field)?);
    (b > 0.0).then(|| a / b)
}

/// `server`'s throughput in workload `a` over its throughput in `b`.
pub(super) fn ratio_of_workloads(runs: &[Run], a: &str, b: &str, server: &str) -> Option<f64> {
    let rps = |workload| {
        find(runs, workload, server)
            .filter(|r| r.note.is_none())
            .and_then(|r| r.rps)
    };
    rps(a)
        .zip(rps(b))
        .filter(|(_, b)| *b > 0.0)
        .map(|(a, b)| a / b)
}

pub(super) fn ratio(runs: &[Run], workload: &str, peer: &str, field: Field) -> Option<f64> {
    ratio_of(runs, workload, "snodo", peer, field)
}

pub(super) fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}×"))
}
