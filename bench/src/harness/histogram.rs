//! A log-linear latency histogram (HDR-style): 128 linear sub-buckets per
//! power of two, so any recorded value is reported within 0.8 %.

/// Sub-bucket bits: 2^7 = 128 sub-buckets per power of two.
const SUB_BITS: u32 = 7;
/// Sub-buckets per power of two.
const SUB: u64 = 1 << SUB_BITS;
/// Buckets needed to index any `u64`.
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB as usize;

/// Counts of nanosecond values.
#[derive(Debug, Clone)]
pub(crate) struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }
}

fn index(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    let group = u64::from(e - SUB_BITS + 1);
    ((group << SUB_BITS) + ((v >> shift) - SUB)) as usize
}

/// The middle of the bucket at `i`.
fn value_at(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let group = i >> SUB_BITS;
    let sub = i & (SUB - 1);
    let shift = group - 1;
    let lower = (sub + SUB) << shift;
    lower + ((1u64 << shift) >> 1)
}

impl Histogram {
    /// Records one value, in nanoseconds.
    pub(crate) fn record(&mut self, nanos: u64) {
        self.counts[index(nanos)] += 1;
        self.total += 1;
    }

    /// Adds every count of `other`.
    pub(crate) fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The value at percentile `p` (0..=100), in nanoseconds; 0 when empty.
    pub(crate) fn percentile(&self, p: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return value_at(i);
            }
        }
        value_at(BUCKETS - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_within_one_percent() {
        for v in [
            0u64,
            1,
            127,
            128,
            129,
            1000,
            65_432,
            1_000_000,
            123_456_789,
            1 << 40,
        ] {
            let back = value_at(index(v));
            let err = (back as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 0.008, "{v} -> {back}");
        }
    }

    #[test]
    fn percentiles() {
        let mut h = Histogram::default();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile(50.0) as f64;
        let p99 = h.percentile(99.0) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.01);
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.01);
    }
}
