//! The export thread and the span queue it drains: spans wait in batches of
//! `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (at most `OTEL_BSP_MAX_QUEUE_SIZE` in
//! all; more are dropped and counted) and leave when a batch fills, every
//! `OTEL_BSP_SCHEDULE_DELAY`, on a flush and at shutdown; metrics leave
//! every `OTEL_METRIC_EXPORT_INTERVAL`, on a flush and at shutdown.
//!
//! A closed span is queued as the buffer it was encoded in, not copied: the
//! export thread writes the queued spans into one request body and hands
//! the emptied buffers back for the next spans.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::aggregate::Aggregate;
use super::config::{Batching, Config, Target};
use super::envelope::{resource, scope};
use super::http::ExportClient;
use super::proto;
use super::sampler::Sampler;
use snodo::telemetry::export::now_ns;

/// The most emptied span buffers kept for reuse, and the largest kept.
const RETURNED_MAX: usize = 1024;
const RETURNED_MAX_BYTES: usize = 8 * 1024;

#[derive(Default)]
struct Queue {
    /// Encoded `Span` messages, oldest first.
    spans: VecDeque<Vec<u8>>,
    dropped: u64,
    /// Emptied span buffers, for the layer's next spans.
    returned: Vec<Vec<u8>>,
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
        let mut bytes = Vec::new();
        for span in self.lock().spans.drain(..) {
            proto::bytes(&mut bytes, 2, &span);
        }
        bytes
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues one encoded `Span` message. Returns a buffer for the next
    /// span: an emptied one the export thread gave back, or `span`'s own
    /// when it was dropped because the queue is full.
    pub(crate) fn push(&self, span: Vec<u8>) -> Option<Vec<u8>> {
        let mut q = self.lock();
        if q.spans.len() >= self.batching.max_queue {
            q.dropped += 1;
            return Some(span);
        }
        q.spans.push_back(span);
        let spare = q.returned.pop();
        if q.spans.len() == self.batching.max_batch {
            drop(q);
            self.wake.notify_one();
        }
        spare
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
            let (spans, flushes, stop, metrics_due) = {
                let mut q = self.spans.lock();
                loop {
                    let now = Instant::now();
                    if q.spans.len() >= self.spans.batching.max_batch
                        || !q.flushes.is_empty()
                        || q.stop
                    {
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
                // Whole batches, and the rest when it is time for it.
                let max_batch = self.spans.batching.max_batch;
                let take = if everything {
                    q.spans.len()
                } else {
                    q.spans.len() / max_batch * max_batch
                };
                let taken: Vec<Vec<u8>> = q.spans.drain(..take).collect();
                let flushes = std::mem::take(&mut q.flushes);
                let metrics_due = q.stop || !flushes.is_empty() || now >= next_metrics;
                if now >= next_spans {
                    next_spans = now + delay;
                }
                (taken, flushes, q.stop, metrics_due)
            };
            let max_batch = self.spans.batching.max_batch;
            for batch in spans.chunks(max_batch) {
                self.send_spans(batch);
            }
            self.give_back(spans);
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

    /// Sends these spans as one export request.
    fn send_spans(&mut self, batch: &[Vec<u8>]) {
        let Some(target) = self.traces.clone() else {
            return;
        };
        // Each span with its tag and a length of up to three bytes.
        let len: usize = batch.iter().map(|s| s.len() + 4).sum();
        let mut body = Vec::with_capacity(len + self.resource.len() + 64);
        proto::message(&mut body, 1, |rs| {
            rs.extend_from_slice(&self.resource);
            proto::message(rs, 2, |ss| {
                scope(ss);
                for span in batch {
                    proto::bytes(ss, 2, span);
                }
            });
        });
        self.send(&target, body, "spans");
    }

    /// Gives the spans' buffers back to the layer, emptied.
    fn give_back(&self, spans: Vec<Vec<u8>>) {
        let mut q = self.spans.lock();
        for mut span in spans {
            if q.returned.len() >= RETURNED_MAX {
                break;
            }
            if span.capacity() <= RETURNED_MAX_BYTES {
                span.clear();
                q.returned.push(span);
            }
        }
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
            spans.push(span(&format!("s{i}")));
        }
        assert_eq!(spans.dropped(), 2);
        assert_eq!(spans.lock().spans.len(), 3);
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

    /// A worker exporting spans (no metrics) to a loopback collector, and
    /// the bodies the collector receives.
    fn exporting(batching: Batching) -> (Worker, mpsc::Receiver<Vec<u8>>) {
        let (url, bodies) = collector();
        let worker = Worker::start(Config {
            traces: Some(Target {
                url,
                headers: Vec::new(),
                timeout: Duration::from_secs(5),
            }),
            metrics: None,
            sampler: Sampler::AlwaysOn,
            batching,
            metric_interval: Duration::from_secs(60),
            resource: vec![("service.name".into(), "test".into())],
        })
        .unwrap();
        (worker, bodies)
    }

    #[test]
    fn full_batches_leave_at_once_and_a_flush_sends_the_rest() {
        let (worker, bodies) = exporting(batching(100, 2));
        for i in 0..3 {
            worker.spans().push(span(&format!("s{i}")));
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

    #[test]
    fn spans_leave_in_order_in_batches_never_over_their_size() {
        let (worker, bodies) = exporting(batching(10_000, 100));
        let padding = "x".repeat(1000);
        for i in 0..250 {
            worker.spans().push(span(&format!("s{i:03}{padding}")));
        }
        worker.flush();
        let mut names = Vec::new();
        while let Ok(body) = bodies.recv_timeout(Duration::from_millis(500)) {
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            let spans = &request.resource_spans[0].scope_spans[0].spans;
            assert!(
                !spans.is_empty() && spans.len() <= 100,
                "{} spans",
                spans.len()
            );
            names.extend(spans.iter().map(|s| s.name[..4].to_owned()));
        }
        let expected: Vec<String> = (0..250).map(|i| format!("s{i:03}")).collect();
        assert_eq!(names, expected);
        assert_eq!(worker.spans().dropped(), 0);
    }
}
