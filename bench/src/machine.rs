//! The machine around the benchmark: the CPUs each side runs on, and what
//! other processes use of them (waiting for an idle machine, the load average).

use std::time::{Duration, Instant};

/// The CPU the servers run on; the harness takes the other one.
pub(crate) const SERVER_CPU: usize = 0;

/// The CPU of the harness (load generator).
pub(crate) const HARNESS_CPU: usize = 1;

/// Busy time of all CPUs over `window`, as a fraction of their total time,
/// from `/proc/stat` (what other processes use while the harness is idle).
async fn cpu_busy(window: Duration) -> Option<f64> {
    fn read() -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|n| n.parse().ok())
            .collect();
        let total: u64 = fields.iter().take(8).sum();
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some((total, idle))
    }
    let (t0, i0) = read()?;
    tokio::time::sleep(window).await;
    let (t1, i1) = read()?;
    let total = t1.checked_sub(t0).filter(|t| *t > 0)?;
    Some(1.0 - (i1 - i0) as f64 / total as f64)
}

/// Most CPU other processes may use (fraction of all CPUs) for a round to
/// start; the harness waits up to [`IDLE_WAIT`] for it.
const IDLE_THRESHOLD: f64 = 0.10;

/// How long to wait for an idle machine before each round.
const IDLE_WAIT: Duration = Duration::from_secs(45);

/// Waits (bounded) until the machine looks idle; returns the busy fraction
/// seen last.
pub(crate) async fn wait_for_idle() -> Option<f64> {
    let started = Instant::now();
    let mut said = false;
    loop {
        let busy = cpu_busy(Duration::from_millis(1000)).await?;
        if busy <= IDLE_THRESHOLD || started.elapsed() >= IDLE_WAIT {
            if said || busy > IDLE_THRESHOLD {
                eprintln!(
                    "  other processes use {:.0} % of the CPUs ({:.0} s waited)",
                    busy * 100.0,
                    started.elapsed().as_secs_f64()
                );
            }
            return Some(busy);
        }
        if !said {
            eprintln!(
                "  waiting for an idle machine: other processes use {:.0} % of the CPUs",
                busy * 100.0
            );
            said = true;
        }
    }
}

/// CPU ticks (`USER_HZ`) this process and its waited-for children used.
fn own_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime is field 14.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|n| n.parse().ok())
        .collect();
    (fields.len() == 4).then(|| fields.iter().sum())
}

/// Busy and total CPU ticks of the whole machine.
pub(crate) fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|n| n.parse().ok())
        .collect();
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// How much of the machine other processes used between two marks.
pub(crate) struct Interference {
    own: Option<u64>,
    machine: Option<(u64, u64)>,
    steal: Option<u64>,
}

/// Ticks the hypervisor gave to other guests while this machine's CPUs
/// wanted to run (`steal` in `/proc/stat`).
fn steal_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().next()?.split_whitespace().nth(8)?.parse().ok()
}

impl Interference {
    pub(crate) fn start() -> Self {
        Self {
            own: own_ticks(),
            machine: machine_ticks(),
            steal: steal_ticks(),
        }
    }

    /// The hypervisor's steal as a share of all CPUs since `start` (part of
    /// what [`Interference::others`] counts).
    pub(crate) fn steal(&self) -> Option<f64> {
        let (_, total0) = self.machine?;
        let (_, total1) = machine_ticks()?;
        let total = total1.checked_sub(total0).filter(|t| *t > 0)?;
        Some(steal_ticks()?.saturating_sub(self.steal?) as f64 / total as f64)
    }

    /// Others' share of all CPUs since `start`.
    pub(crate) fn others(&self) -> Option<f64> {
        let (busy0, total0) = self.machine?;
        let (busy1, total1) = machine_ticks()?;
        let own = own_ticks()?.saturating_sub(self.own?);
        let total = total1.checked_sub(total0).filter(|t| *t > 0)?;
        let others = (busy1.saturating_sub(busy0)).saturating_sub(own);
        Some(others as f64 / total as f64)
    }
}

pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}
