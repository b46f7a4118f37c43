//! Open-loop load: requests scheduled at a fixed arrival rate and sent over
//! a pool of keep-alive connections, each latency measured from the request's
//! scheduled send time, so that a server that stalls is charged for every
//! request it delayed (no coordinated omission).
//!
//! The scheduler spins (yielding to the connections between checks) instead
//! of sleeping on tokio's millisecond timer, which would send requests in
//! bursts; the load generator's CPU use in these runs says nothing about its
//! headroom.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::http_load::{self, Outcome, Target};
use super::wire::{Expect, Work};

/// How long requests still queued or in flight at the end may take to finish.
const DRAIN: Duration = Duration::from_secs(1);

/// What the scheduler and the connections share.
struct Shared {
    /// Scheduled, not yet sent: (sequence number, scheduled send time).
    queue: RefCell<VecDeque<(u64, Instant)>>,
    /// Wakes an idle connection when the queue gains a request.
    ready: Notify,
    /// Set once the scheduler has queued its last request.
    done: Cell<bool>,
}

/// Sends `work` at `rate` requests per second over `connections`
/// connections for `warmup` + `measure`; counts the requests scheduled
/// inside `measure`. `Outcome::scheduled` is how many were, and a request
/// that missed the end (plus [`DRAIN`]) counts as missed, not completed.
pub(crate) async fn run(
    target: &Target,
    work: Work,
    expect: Expect,
    rate: f64,
    connections: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    let local = tokio::task::LocalSet::new();
    let target = Rc::new(target.clone());
    local
        .run_until(async move {
            let mut senders = Vec::with_capacity(connections);
            let mut out = Outcome {
                window: measure,
                ..Outcome::default()
            };
            for _ in 0..connections {
                match http_load::connect(&target).await {
                    Ok(c) => senders.push(c),
                    Err(e) => out.error(e),
                }
            }
            if senders.is_empty() {
                return out;
            }
            let shared = Rc::new(Shared {
                queue: RefCell::new(VecDeque::new()),
                ready: Notify::new(),
                done: Cell::new(false),
            });
            let start = Instant::now();
            let measure_from = start + warmup;
            let end = measure_from + measure;
            let handles: Vec<_> = senders
                .into_iter()
                .enumerate()
                .map(|(i, (sender, driver))| {
                    let (shared, target) = (Rc::clone(&shared), Rc::clone(&target));
                    tokio::task::spawn_local(async move {
                        let out = connection(
                            &shared,
                            &target,
                            sender,
                            (work, expect),
                            i as u64 + 1,
                            (measure_from, end),
                        )
                        .await;
                        driver.abort();
                        out
                    })
                })
                .collect();
            let interval = Duration::from_secs_f64(1.0 / rate.max(1.0));
            let mut scheduled_in_window = 0u64;
            let mut late = super::histogram::Histogram::default();
            let mut seq = 0u64;
            loop {
                let due = start + interval.mul_f64(seq as f64);
                if due >= end {
                    break;
                }
                let wait = due.saturating_duration_since(Instant::now());
                if wait > Duration::from_millis(3) {
                    tokio::time::sleep(wait - Duration::from_millis(2)).await;
                }
                while Instant::now() < due {
                    tokio::task::yield_now().await;
                }
                if due >= measure_from {
                    scheduled_in_window += 1;
                    late.record((Instant::now() - due).as_nanos() as u64);
                }
                shared.queue.borrow_mut().push_back((seq, due));
                shared.ready.notify_one();
                seq += 1;
            }
            shared.done.set(true);
            shared.ready.notify_waiters();
            let deadline = tokio::time::Instant::from_std(end + DRAIN);
            for h in handles {
                match tokio::time::timeout_at(deadline, h).await {
                    Ok(Ok(part)) => out.merge(part),
                    Ok(Err(e)) => out.error(format!("connection task: {e}")),
                    Err(_) => {}
                }
            }
            out.scheduled = Some(scheduled_in_window);
            out.scheduler_late_p99_ns = Some(late.percentile(99.0));
            out
        })
        .await
}

/// One connection: takes the next scheduled request, sends it, records its
/// latency from the scheduled time, until the scheduler is done and the
/// queue empty (or the drain deadline passes).
async fn connection(
    shared: &Shared,
    target: &Target,
    mut sender: http_load::Sender,
    (work, expect): (Work, Expect),
    index: u64,
    (measure_from, end): (Instant, Instant),
) -> Outcome {
    let mut out = Outcome::default();
    loop {
        let next = shared.queue.borrow_mut().pop_front();
        let Some((seq, due)) = next else {
            if shared.done.get() {
                return out;
            }
            shared.ready.notified().await;
            continue;
        };
        if Instant::now() > end + DRAIN {
            return out;
        }
        let id = (index << 40) | seq;
        let req = http_load::request(target, work.method(), work.name(), work.body(id));
        match http_load::exchange(&mut sender, req, expect, id).await {
            Ok(Ok(bytes)) => {
                if due >= measure_from && due < end {
                    let done = Instant::now();
                    out.completed += 1;
                    out.bytes += bytes;
                    out.hist.record((done - due).as_nanos() as u64);
                }
            }
            Ok(Err(wrong)) => out.error(wrong),
            Err(broken) => {
                // The connection is gone; the others carry on.
                out.error(broken);
                return out;
            }
        }
    }
}
