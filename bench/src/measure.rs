//! Measuring one run: measured again when other processes disturbed it, and
//! its sample.

use crate::harness::http_load;
use crate::harness::procs::{self};
use crate::harness::report::Sample;
use crate::machine::machine_ticks;

/// CPU time of the server, of the harness and of the machine at the start
/// of a run, to tell how much other processes used during it.
pub(crate) struct CpuMark {
    server: Option<u64>,
    harness: Option<u64>,
    machine: Option<(u64, u64)>,
}

impl CpuMark {
    pub(crate) fn now(pid: u32) -> Self {
        Self {
            server: procs::cpu_ns(pid),
            harness: procs::cpu_ns(std::process::id()),
            machine: machine_ticks(),
        }
    }

    /// The share of all CPUs that other processes used since this mark:
    /// the machine's busy time less the server's and the harness's.
    pub(crate) fn others(&self, pid: u32) -> Option<f64> {
        const NS_PER_TICK: f64 = 10_000_000.0; // USER_HZ is 100 on Linux
        let (busy0, total0) = self.machine?;
        let (busy1, total1) = machine_ticks()?;
        let total = total1.checked_sub(total0).filter(|t| *t > 0)? as f64 * NS_PER_TICK;
        let busy = busy1.saturating_sub(busy0) as f64 * NS_PER_TICK;
        let ours = procs::cpu_ns(pid)?.saturating_sub(self.server?)
            + procs::cpu_ns(std::process::id())?.saturating_sub(self.harness?);
        Some(((busy - ours as f64) / total).max(0.0))
    }
}

/// A run during which other processes used more than this share of all CPUs
/// is measured again, after waiting for an idle machine.
pub(crate) const NOISY_RUN: f64 = 0.10;

/// Most runs measured again in one benchmark.
pub(crate) const MAX_RETRIES: usize = 24;

/// Runs `$run` (an expression producing an `Outcome`) until it was not
/// disturbed by other processes, within the retry budget; evaluates to the
/// last sample.
macro_rules! measured {
    ($options:expr, $retries:expr, $pid:expr, $label:expr, $run:expr) => {{
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mark = $crate::measure::CpuMark::now($pid);
            let window =
                $crate::harness::procs::WindowCpu::spawn($pid, $options.warmup, $options.measure);
            let out = $run;
            let sample = $crate::measure::sample_of(&out, Some($pid), window.join());
            let others = mark.others($pid);
            match others {
                Some(o)
                    if o > $crate::measure::NOISY_RUN
                        && $options.wait_idle
                        && attempt < 3
                        && *$retries < $crate::measure::MAX_RETRIES =>
                {
                    *$retries += 1;
                    eprintln!(
                        "  {}: other processes used {:.0} % of the CPUs; measuring again",
                        $label,
                        o * 100.0
                    );
                    $crate::machine::wait_for_idle().await;
                }
                _ => break sample,
            }
        }
    }};
}
pub(crate) use measured;

pub(crate) fn sample_of(
    out: &http_load::Outcome,
    pid: Option<u32>,
    cpu: Option<procs::CpuUse>,
) -> Sample {
    let has = out.completed > 0;
    let pct = |ns: u64, c: &procs::CpuUse| ns as f64 * 100.0 / c.wall.as_nanos().max(1) as f64;
    Sample {
        server_cpu: cpu.as_ref().map(|c| pct(c.server_ns, c)),
        loadgen_cpu: cpu.as_ref().map(|c| pct(c.harness_ns, c)),
        cpu_us_per_req: cpu
            .filter(|_| has)
            .map(|c| c.server_ns as f64 / 1000.0 / out.completed as f64),
        target_rps: None,
        scheduler_late_p99_us: out.scheduler_late_p99_ns.map(|n| n as f64 / 1000.0),
        rps: has.then(|| out.rps()),
        p50_us: has.then(|| out.hist.percentile(50.0) as f64 / 1000.0),
        p99_us: has.then(|| out.hist.percentile(99.0) as f64 / 1000.0),
        p999_us: has.then(|| out.hist.percentile(99.9) as f64 / 1000.0),
        peak_rss_kb: pid.and_then(procs::memory_kb).map(|(_, hwm)| hwm),
        errors: out.errors,
        bytes_per_response: has.then(|| out.bytes as f64 / out.completed as f64),
        first_error: out.first_error.clone(),
    }
}

pub(crate) fn log_sample(round: usize, workload: &str, server: &str, s: &Sample) {
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
    eprintln!(
        "  round {round} {workload:<16} {server:<10} rps {:>9} p50 {:>8} µs p99 {:>8} µs rss {:>6} KiB cpu {:>4}/{:>4} %{}",
        f(s.rps),
        f(s.p50_us),
        f(s.p99_us),
        s.peak_rss_kb
            .map_or_else(|| "-".to_string(), |k| k.to_string()),
        s.server_cpu
            .map_or_else(|| "-".to_string(), |c| format!("{c:.0}")),
        s.loadgen_cpu
            .map_or_else(|| "-".to_string(), |c| format!("{c:.0}")),
        if s.errors > 0 {
            format!(
                "  {} ERRORS: {}",
                s.errors,
                s.first_error.as_deref().unwrap_or("?")
            )
        } else {
            String::new()
        }
    );
}

pub(crate) fn failed(error: String) -> Sample {
    Sample {
        errors: 1,
        first_error: Some(error),
        ..Sample::default()
    }
}
