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
use super::envelope::{resource, scope};
use super::http::ExportClient;
use super::proto;
use super::sampler::Sampler;

/// Now, in nanoseconds since the Unix epoch (OTLP's timestamps).
pub(crate) fn now_ns() -> u64 {
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
    /// A queue no thread drains, for the layer's tests.
    #[cfg(test)]
    pub(crate) fn unattended(max_queue: usize, sampler: Sampler) -> Arc<Self> {
        Arc::new(Spans {
            queue: Mutex::default(),
            wake: Condvar::new(),
            batching: Batching {
                delay: Duration::from_secs(60),
                max_queue,
                max_batch: max_queue,
            },
            sampler,
        })
    }

    /// The encoded spans queued so far (`ScopeSpans.spans` fields), taken.
    #[cfg(test)]
    pub(crate) fn take_open(&self) -> Vec<u8> {
        let mut q = self.lock();
        q.queued = 0;
        std::mem::take(&mut q.open).bytes
    }

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

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;

    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message;

    use super::*;

    fn batching(max_queue: usize, max_batch: usize) -> Batching {
        Batching {
            delay: Duration::from_secs(60),
            max_queue,
            max_batch,
        }
    }

    fn span(name: &str) -> Vec<u8> {
        let mut buf = Vec::new();
        proto::string(&mut buf, 5, name);
        buf
    }

    #[test]
    fn a_full_queue_drops_and_counts() {
        let spans = Spans {
            queue: Mutex::default(),
            wake: Condvar::new(),
            batching: batching(3, 2),
            sampler: Sampler::AlwaysOn,
        };
        for i in 0..5 {
            spans.push(&span(&format!("s{i}")));
        }
        assert_eq!(spans.dropped(), 2);
        let q = spans.lock();
        assert_eq!(q.queued, 3);
        assert_eq!(q.full.len(), 1);
        assert_eq!(q.full[0].count, 2);
        assert_eq!(q.open.count, 1);
    }

    /// A collector on loopback answering 200 to every request; the bodies
    /// it received.
    fn collector() -> (String, mpsc::Receiver<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    loop {
                        let mut length = 0;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                            let lower = line.to_ascii_lowercase();
                            if let Some(v) = lower.strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap();
                            }
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let _ = tx.send(body);
                        let out = reader.get_mut();
                        let _ = out.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
                    }
                });
            }
        });
        (url, rx)
    }

    #[test]
    fn full_batches_leave_at_once_and_a_flush_sends_the_rest() {
        let (url, bodies) = collector();
        let worker = Worker::start(Config {
            traces: Some(Target {
                url,
                headers: Vec::new(),
                timeout: Duration::from_secs(5),
            }),
            metrics: None,
            sampler: Sampler::AlwaysOn,
            batching: batching(100, 2),
            metric_interval: Duration::from_secs(60),
            resource: vec![("service.name".into(), "test".into())],
        })
        .unwrap();
        for i in 0..3 {
            worker.spans().push(&span(&format!("s{i}")));
        }
        let names = |body: Vec<u8>| -> Vec<String> {
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            let rs = &request.resource_spans[0];
            let service = &rs.resource.as_ref().unwrap().attributes[0];
            assert_eq!(service.key, "service.name");
            let ss = &rs.scope_spans[0];
            assert_eq!(ss.scope.as_ref().unwrap().name, "snodo");
            ss.spans.iter().map(|s| s.name.clone()).collect()
        };
        // The full batch leaves without waiting for the minute's delay.
        let first = bodies.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(names(first), ["s0", "s1"]);
        worker.flush();
        let rest = bodies.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(names(rest), ["s2"]);
        assert_eq!(worker.spans().dropped(), 0);
    }
}
