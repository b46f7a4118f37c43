//! The export thread and the span queue it drains: spans wait in batches of
//! `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (at most `OTEL_BSP_MAX_QUEUE_SIZE` in
//! all; more are dropped and counted) and leave when a batch fills, every
//! `OTEL_BSP_SCHEDULE_DELAY`, on a flush and at shutdown; metrics leave
//! every `OTEL_METRIC_EXPORT_INTERVAL`, on a flush and at shutdown.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::aggregate::Aggregate;
use super::config::{Batching, Config, Target};
use super::http::ExportClient;
use super::proto::{self, AnyValue};
use super::sampler::Sampler;

/// The instrumentation scope every span and metric is reported under.
pub(crate) fn scope(buf: &mut Vec<u8>) {
    proto::message(buf, 1, |s| {
        proto::string(s, 1, "snodo");
        proto::string(s, 2, env!("CARGO_PKG_VERSION"));
    });
}

/// The encoded `resource` field (1) of `ResourceSpans`/`ResourceMetrics`.
fn resource(attrs: &[(String, String)]) -> Vec<u8> {
    let mut buf = Vec::new();
    proto::message(&mut buf, 1, |r| {
        for (k, v) in attrs {
            proto::key_value(r, 1, k, AnyValue::Str(v));
        }
    });
    buf
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// How many emptied batch buffers are kept.
const SPARE_BATCHES: usize = 4;

/// Spans encoded as `ScopeSpans.spans` fields, and how many.
#[derive(Debug, Default)]
struct Batch {
    bytes: Vec<u8>,
    count: usize,
}

#[derive(Default)]
struct Queue {
    full: VecDeque<Batch>,
    open: Batch,
    queued: usize,
    dropped: u64,
    /// Emptied batch buffers, for the next batches.
    spare: Vec<Vec<u8>>,
    /// Flushes asked for and not yet done.
    flushes: Vec<mpsc::Sender<()>>,
    stop: bool,
}

/// The spans waiting for export, shared by the layer and the thread.
pub(crate) struct Spans {
    queue: Mutex<Queue>,
    wake: Condvar,
    batching: Batching,
    pub(crate) sampler: Sampler,
}

impl Spans {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues one encoded `Span` message.
    pub(crate) fn push(&self, span: &[u8]) {
        let mut q = self.lock();
        if q.queued >= self.batching.max_queue {
            q.dropped += 1;
            return;
        }
        q.queued += 1;
        proto::bytes(&mut q.open.bytes, 2, span);
        q.open.count += 1;
        if q.open.count >= self.batching.max_batch {
            let fresh = Batch {
                bytes: q.spare.pop().unwrap_or_default(),
                count: 0,
            };
            let full = std::mem::replace(&mut q.open, fresh);
            q.full.push_back(full);
            drop(q);
            self.wake.notify_one();
        }
    }

    /// How many spans were dropped because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.lock().dropped
    }
}

/// The aggregation every exporter of this process reports.
pub(crate) fn aggregate() -> &'static Aggregate {
    static AGGREGATE: OnceLock<Aggregate> = OnceLock::new();
    AGGREGATE.get_or_init(|| Aggregate::new(now_ns()))
}

/// The running export thread.
pub(crate) struct Worker {
    spans: Arc<Spans>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").finish_non_exhaustive()
    }
}

struct Thread {
    spans: Arc<Spans>,
    client: ExportClient,
    traces: Option<Target>,
    metrics: Option<Target>,
    metric_interval: Duration,
    resource: Vec<u8>,
    failing: bool,
}

impl Worker {
    /// Starts the thread for `config`.
    pub(crate) fn start(config: Config) -> std::io::Result<Self> {
        let spans = Arc::new(Spans {
            queue: Mutex::default(),
            wake: Condvar::new(),
            batching: config.batching,
            sampler: config.sampler,
        });
        let thread = Thread {
            spans: spans.clone(),
            client: ExportClient::new()?,
            traces: config.traces,
            metrics: config.metrics,
            metric_interval: config.metric_interval,
            resource: resource(&config.resource),
            failing: false,
        };
        let handle = std::thread::Builder::new()
            .name("snodo-otlp".into())
            .spawn(move || thread.run())?;
        Ok(Worker {
            spans,
            thread: Some(handle),
        })
    }

    /// The queue spans go to.
    pub(crate) fn spans(&self) -> &Arc<Spans> {
        &self.spans
    }

    /// Exports everything now; returns once it was sent (or gave up).
    pub(crate) fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        self.spans.lock().flushes.push(tx);
        self.spans.wake.notify_one();
        let _ = rx.recv_timeout(Duration::from_secs(30));
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.spans.lock().stop = true;
        self.spans.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Thread {
    fn run(mut self) {
        let delay = self.spans.batching.delay;
        let mut next_spans = Instant::now() + delay;
        let mut next_metrics = Instant::now() + self.metric_interval;
        loop {
            let (batches, flushes, stop, metrics_due) = {
                let mut q = self.spans.lock();
                loop {
                    let now = Instant::now();
                    if !q.full.is_empty() || !q.flushes.is_empty() || q.stop {
                        break;
                    }
                    if now >= next_spans || (self.metrics.is_some() && now >= next_metrics) {
                        break;
                    }
                    let mut until = next_spans;
                    if self.metrics.is_some() {
                        until = until.min(next_metrics);
                    }
                    q = self
                        .spans
                        .wake
                        .wait_timeout(q, until.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                let now = Instant::now();
                let everything = !q.flushes.is_empty() || q.stop || now >= next_spans;
                let mut batches: Vec<Batch> = q.full.drain(..).collect();
                if everything && q.open.count > 0 {
                    batches.push(std::mem::take(&mut q.open));
                }
                q.queued -= batches.iter().map(|b| b.count).sum::<usize>();
                let flushes = std::mem::take(&mut q.flushes);
                let metrics_due = q.stop || !flushes.is_empty() || now >= next_metrics;
                if now >= next_spans {
                    next_spans = now + delay;
                }
                (batches, flushes, q.stop, metrics_due)
            };
            for batch in batches {
                let mut bytes = self.send_spans(batch);
                bytes.clear();
                let mut q = self.spans.lock();
                if q.spare.len() < SPARE_BATCHES {
                    q.spare.push(bytes);
                }
            }
            if metrics_due {
                next_metrics = Instant::now() + self.metric_interval;
                self.send_metrics();
            }
            for f in flushes {
                let _ = f.send(());
            }
            if stop {
                return;
            }
        }
    }

    /// Sends a batch; its buffer, for reuse.
    fn send_spans(&mut self, batch: Batch) -> Vec<u8> {
        let Some(target) = self.traces.clone() else {
            return batch.bytes;
        };
        let mut body = Vec::with_capacity(batch.bytes.len() + self.resource.len() + 64);
        proto::message(&mut body, 1, |rs| {
            rs.extend_from_slice(&self.resource);
            proto::message(rs, 2, |ss| {
                scope(ss);
                ss.extend_from_slice(&batch.bytes);
            });
        });
        self.send(&target, body, "spans");
        batch.bytes
    }

    fn send_metrics(&mut self) {
        let Some(target) = self.metrics.clone() else {
            return;
        };
        let body = aggregate().encode(&self.resource, now_ns());
        self.send(&target, body, "metrics");
    }

    /// Posts one export; the first failure after a success is logged.
    fn send(&mut self, target: &Target, body: Vec<u8>, what: &str) {
        match self.client.post(target, body) {
            Ok(()) => {
                if self.failing {
                    tracing::info!(target: "snodo::otlp", url = %target.url, "OTLP export works again");
                }
                self.failing = false;
            }
            Err(e) => {
                if !self.failing {
                    tracing::warn!(target: "snodo::otlp", url = %target.url, error = %e, "OTLP export of {what} failed");
                }
                self.failing = true;
            }
        }
    }
}
