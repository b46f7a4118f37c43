//! The exporter's own metrics: the duration histograms and the task
//! counter aggregated in process (cumulative since start), and the gauges
//! read at each export, encoded as an OTLP `ExportMetricsServiceRequest`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use super::proto::{self, AnyValue};
use snodo::telemetry::export::{Attr, DURATION_BUCKETS, Gauge, Recorder, Series, Side};

/// The most series a histogram keeps; later ones are counted in one
/// series marked `otel.metric.overflow = true`, as the SDK specification
/// asks.
pub(crate) const MAX_SERIES: usize = 2_000;

/// A fast hasher for the series keys (FxHash's multiply-rotate): the keys
/// are made by this process from closed sets and the server's own names.
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
}

impl Fx {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// One histogram series.
#[derive(Debug, Clone)]
struct Cell {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    buckets: [u64; DURATION_BUCKETS.len() + 1],
}

impl Cell {
    fn new() -> Self {
        Cell {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            buckets: [0; DURATION_BUCKETS.len() + 1],
        }
    }

    fn add(&mut self, v: f64) {
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let i = DURATION_BUCKETS.partition_point(|b| *b < v);
        self.buckets[i] += 1;
    }
}

type SeriesMap = HashMap<Series, Cell, BuildHasherDefault<Fx>>;

/// What [`Aggregate`] holds for one side.
#[derive(Default)]
struct Histogram {
    series: SeriesMap,
    overflow: Option<Cell>,
}

/// The in-process aggregation.
pub(crate) struct Aggregate {
    start_ns: u64,
    durations: [Mutex<Histogram>; 2],
    settled: Mutex<Vec<(&'static str, u64)>>,
}

impl Aggregate {
    pub(crate) fn new(start_ns: u64) -> Self {
        Aggregate {
            start_ns,
            durations: [Mutex::default(), Mutex::default()],
            settled: Mutex::default(),
        }
    }

    /// The export request for everything so far, at `now_ns`.
    pub(crate) fn encode(&self, resource: &[u8], now_ns: u64) -> Vec<u8> {
        let mut buf = Vec::with_capacity(4096);
        proto::message(&mut buf, 1, |rm| {
            rm.extend_from_slice(resource);
            proto::message(rm, 2, |sm| {
                super::envelope::scope(sm);
                for side in [Side::Server, Side::Client] {
                    self.encode_histogram(sm, side, now_ns);
                }
                for &(gauge, name, description, unit) in Gauge::ALL {
                    proto::message(sm, 2, |m| {
                        header(m, name, description, unit);
                        proto::message(m, 5, |g| {
                            proto::message(g, 1, |p| {
                                if gauge == Gauge::Tasks {
                                    proto::key_value(
                                        p,
                                        7,
                                        "mcp.task.status",
                                        AnyValue::Str("working"),
                                    );
                                }
                                proto::fixed64(p, 3, now_ns);
                                proto::fixed64(p, 6, gauge.get() as u64);
                            })
                        });
                    });
                }
                let settled = lock(&self.settled).clone();
                if !settled.is_empty() {
                    proto::message(sm, 2, |m| {
                        header(
                            m,
                            "snodo.server.tasks.settled",
                            "Task runs that ended, by the status they ended in",
                            "{task}",
                        );
                        proto::message(m, 7, |sum| {
                            for (status, n) in &settled {
                                proto::message(sum, 1, |p| {
                                    proto::key_value(
                                        p,
                                        7,
                                        "mcp.task.status",
                                        AnyValue::Str(status),
                                    );
                                    proto::fixed64(p, 2, self.start_ns);
                                    proto::fixed64(p, 3, now_ns);
                                    proto::fixed64(p, 6, *n);
                                });
                            }
                            proto::uint(sum, 2, CUMULATIVE);
                            proto::uint(sum, 3, 1);
                        });
                    });
                }
            });
        });
        buf
    }

    fn encode_histogram(&self, sm: &mut Vec<u8>, side: Side, now_ns: u64) {
        let (series, overflow) = {
            let h = lock(&self.durations[side as usize]);
            if h.series.is_empty() && h.overflow.is_none() {
                return;
            }
            let series: Vec<(Series, Cell)> = h
                .series
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (series, h.overflow.clone())
        };
        let (name, description) = side.histogram();
        proto::message(sm, 2, |m| {
            header(m, name, description, "s");
            proto::message(m, 9, |hist| {
                let point = |hist: &mut Vec<u8>, attrs: &dyn Fn(&mut Vec<u8>), cell: &Cell| {
                    proto::message(hist, 1, |p| {
                        attrs(p);
                        proto::fixed64(p, 2, self.start_ns);
                        proto::fixed64(p, 3, now_ns);
                        proto::fixed64(p, 4, cell.count);
                        proto::double(p, 5, cell.sum);
                        proto::message(p, 6, |b| {
                            for n in cell.buckets {
                                b.extend_from_slice(&n.to_le_bytes());
                            }
                        });
                        proto::message(p, 7, |b| {
                            for bound in DURATION_BUCKETS {
                                b.extend_from_slice(&bound.to_bits().to_le_bytes());
                            }
                        });
                        if cell.count > 0 {
                            proto::double(p, 11, cell.min);
                            proto::double(p, 12, cell.max);
                        }
                    });
                };
                for (key, cell) in &series {
                    point(hist, &|p| attributes(p, key), cell);
                }
                if let Some(cell) = &overflow {
                    point(
                        hist,
                        &|p| proto::key_value(p, 9, "otel.metric.overflow", AnyValue::Bool(true)),
                        cell,
                    );
                }
                proto::uint(hist, 2, CUMULATIVE);
            });
        });
    }
}

/// `AGGREGATION_TEMPORALITY_CUMULATIVE`.
const CUMULATIVE: u64 = 2;

fn header(m: &mut Vec<u8>, name: &str, description: &str, unit: &str) {
    proto::string(m, 1, name);
    proto::string(m, 2, description);
    proto::string(m, 3, unit);
}

/// A histogram point's attributes (field 9).
fn attributes(p: &mut Vec<u8>, series: &Series) {
    series.each(|key, value| match value {
        Attr::Str(s) => proto::key_value(p, 9, key, AnyValue::Str(s)),
        Attr::Int(i) => proto::key_value(p, 9, key, AnyValue::Int(i)),
        Attr::Code(c) => proto::key_value(p, 9, key, AnyValue::Str(&c.to_string())),
        // A kind of value this exporter does not know yet is left out.
        _ => {}
    });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Recorder for &'static Aggregate {
    fn duration(&self, side: Side, series: &Series, seconds: f64) {
        let mut h = lock(&self.durations[side as usize]);
        if let Some(cell) = h.series.get_mut(series) {
            cell.add(seconds);
        } else if h.series.len() < MAX_SERIES {
            let mut cell = Cell::new();
            cell.add(seconds);
            h.series.insert(series.clone(), cell);
        } else {
            h.overflow.get_or_insert_with(Cell::new).add(seconds);
        }
    }

    fn task_settled(&self, status: &'static str) {
        let mut settled = lock(&self.settled);
        match settled.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => settled.push((status, 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use prost::Message as _;

    fn series(tool: &str) -> Series {
        Series::new("tools/call").with_tool(tool)
    }

    #[test]
    fn histograms_decode_with_their_buckets_and_overflow() {
        let agg: &'static Aggregate = Box::leak(Box::new(Aggregate::new(1)));
        agg.duration(Side::Server, &series("add"), 0.015);
        agg.duration(Side::Server, &series("add"), 400.0);
        agg.duration(Side::Server, &series("echo"), 0.001);
        agg.task_settled("completed");
        agg.task_settled("completed");
        for i in 0..MAX_SERIES {
            agg.duration(Side::Client, &series(&format!("t{i}")), 0.5);
        }
        agg.duration(Side::Client, &series("one too many"), 0.5);
        let req = ExportMetricsServiceRequest::decode(agg.encode(&[], 9).as_slice()).unwrap();
        let metrics = &req.resource_metrics[0].scope_metrics[0].metrics;
        let server = metrics
            .iter()
            .find(|m| m.name == "mcp.server.operation.duration")
            .unwrap();
        let Some(Data::Histogram(h)) = &server.data else {
            panic!("{server:?}")
        };
        assert_eq!(h.aggregation_temporality, 2);
        let add = h
            .data_points
            .iter()
            .find(|p| {
                p.attributes
                    .iter()
                    .any(|kv| format!("{:?}", kv.value).contains("\"add\""))
            })
            .unwrap();
        assert_eq!(add.count, 2);
        assert_eq!(add.explicit_bounds, DURATION_BUCKETS.to_vec());
        assert_eq!(add.bucket_counts.len(), 15);
        assert_eq!(add.bucket_counts[1], 1, "0.015 s is in (0.01, 0.02]");
        assert_eq!(add.bucket_counts[14], 1, "400 s is past the last bound");
        assert_eq!((add.min, add.max), (Some(0.015), Some(400.0)));
        assert_eq!((add.start_time_unix_nano, add.time_unix_nano), (1, 9));
        let client = metrics
            .iter()
            .find(|m| m.name == "mcp.client.operation.duration")
            .unwrap();
        let Some(Data::Histogram(h)) = &client.data else {
            panic!()
        };
        assert_eq!(h.data_points.len(), MAX_SERIES + 1);
        assert!(
            h.data_points
                .iter()
                .any(|p| p.attributes.len() == 1 && p.attributes[0].key == "otel.metric.overflow")
        );
        let settled = metrics
            .iter()
            .find(|m| m.name == "snodo.server.tasks.settled")
            .unwrap();
        let Some(Data::Sum(sum)) = &settled.data else {
            panic!()
        };
        assert!(sum.is_monotonic);
        assert_eq!(
            sum.data_points[0].value,
            Some(opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(2))
        );
        assert!(metrics.iter().any(|m| m.name == "snodo.server.sessions"));
    }
}
