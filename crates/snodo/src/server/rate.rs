//! Rates (`30/s`) and the token buckets that hold callers to them: one
//! bucket, or one per caller in a bounded table.

use std::fmt;
use std::time::Duration;

#[cfg(any(feature = "http", feature = "client"))]
use tokio::time::Instant;

/// How many requests a period allows: `30/s`, `600/m`, `10000/h`,
/// `5/10s`. Held by a token bucket that holds `count` tokens and refills
/// them evenly over `period`, so a burst of `count` passes at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    count: u32,
    period: Duration,
}

impl Rate {
    /// `count` requests per `period` (both more than zero).
    pub fn new(count: u32, period: Duration) -> Option<Self> {
        (count > 0 && !period.is_zero()).then_some(Rate { count, period })
    }

    /// Parses `N/s`, `N/m`, `N/h` or `N/<seconds>s` (`5/10s`, `1/0.5s`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "{text:?} is no rate: write requests per period, as 30/s, 600/m, 10000/h or 5/10s"
            )
        };
        let (count, per) = text.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let per = per.trim();
        let period = match per {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => {
                let secs: f64 = per
                    .strip_suffix('s')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(bad)?;
                if !(secs.is_finite() && (0.001..=86_400.0).contains(&secs)) {
                    return Err(bad());
                }
                Duration::from_secs_f64(secs)
            }
        };
        Rate::new(count, period).ok_or_else(bad)
    }

    /// The requests a period allows (the burst).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.period.as_secs_f64() {
            1.0 => write!(f, "{}/s", self.count),
            60.0 => write!(f, "{}/m", self.count),
            3600.0 => write!(f, "{}/h", self.count),
            secs => write!(f, "{}/{secs}s", self.count),
        }
    }
}

/// A token bucket.
#[cfg(any(feature = "http", feature = "client"))]
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    tokens: f64,
    at: Instant,
}

#[cfg(any(feature = "http", feature = "client"))]
impl Bucket {
    /// A full bucket.
    pub(crate) fn full(rate: &Rate, now: Instant) -> Self {
        Bucket {
            tokens: f64::from(rate.count),
            at: now,
        }
    }

    fn refill(&mut self, rate: &Rate, now: Instant) {
        let earned = now.duration_since(self.at).as_secs_f64() / rate.period.as_secs_f64()
            * f64::from(rate.count);
        self.tokens = (self.tokens + earned).min(f64::from(rate.count));
        self.at = now;
    }

    /// Takes a token, or says how long until one is there.
    pub(crate) fn take(&mut self, rate: &Rate, now: Instant) -> Result<(), Duration> {
        self.refill(rate, now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        let missing = 1.0 - self.tokens;
        Err(rate
            .period
            .mul_f64(missing / f64::from(rate.count))
            .max(Duration::from_millis(1)))
    }

    /// Whether the bucket is full again (a caller that may be forgotten).
    #[cfg(feature = "http")]
    fn is_full(&mut self, rate: &Rate, now: Instant) -> bool {
        self.refill(rate, now);
        self.tokens >= f64::from(rate.count)
    }
}

/// The most callers a per-caller rate tracks at once.
pub const MAX_TRACKED_CALLERS: usize = 65_536;

/// One bucket per caller, at most [`MAX_TRACKED_CALLERS`] of them: when
/// the table is full, callers whose buckets are full again are forgotten
/// (as if never seen), and if that frees less than an eighth of it, the
/// eighth nearest to full: a sweep costs the table's size once per eighth
/// of new callers, never once per caller.
#[cfg(feature = "http")]
#[derive(Debug)]
pub(crate) struct Buckets {
    rate: Rate,
    max: usize,
    table: std::collections::HashMap<String, Bucket>,
}

#[cfg(feature = "http")]
impl Buckets {
    pub(crate) fn new(rate: Rate) -> Self {
        Self::with_max(rate, MAX_TRACKED_CALLERS)
    }

    pub(crate) fn with_max(rate: Rate, max: usize) -> Self {
        Buckets {
            rate,
            max: max.max(1),
            table: std::collections::HashMap::new(),
        }
    }

    pub(crate) fn rate(&self) -> &Rate {
        &self.rate
    }

    /// Takes a token from `caller`'s bucket, or says how long until one
    /// is there.
    pub(crate) fn take(&mut self, caller: &str, now: Instant) -> Result<(), Duration> {
        let rate = self.rate;
        if let Some(bucket) = self.table.get_mut(caller) {
            return bucket.take(&rate, now);
        }
        if self.table.len() >= self.max {
            self.table.retain(|_, b| !b.is_full(&rate, now));
            let room = (self.max / 8).max(1);
            if self.table.len() + room > self.max {
                let mut tokens: Vec<f64> = self.table.values().map(|b| b.tokens).collect();
                let cut = tokens.len().saturating_sub(room);
                tokens.select_nth_unstable_by(cut, f64::total_cmp);
                let threshold = tokens[cut];
                let mut over = self.table.len() + room - self.max;
                self.table.retain(|_, b| {
                    let drop = over > 0 && b.tokens >= threshold;
                    over -= usize::from(drop);
                    !drop
                });
            }
        }
        let mut bucket = Bucket::full(&rate, now);
        let taken = bucket.take(&rate, now);
        self.table.insert(caller.to_owned(), bucket);
        taken
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print() {
        for (text, count, secs, shown) in [
            ("30/s", 30, 1.0, "30/s"),
            (" 600 / m ", 600, 60.0, "600/m"),
            ("10000/h", 10000, 3600.0, "10000/h"),
            ("5/10s", 5, 10.0, "5/10s"),
            ("1/0.5s", 1, 0.5, "1/0.5s"),
        ] {
            let r = Rate::parse(text).unwrap();
            assert_eq!(
                (r.count(), r.period().as_secs_f64()),
                (count, secs),
                "{text}"
            );
            assert_eq!(r.to_string(), shown);
        }
        for bad in [
            "", "30", "0/s", "-1/s", "30/d", "30/0s", "30/xs", "1/1e9s", "a/s",
        ] {
            let e = Rate::parse(bad).unwrap_err();
            assert!(e.contains("is no rate"), "{bad}: {e}");
        }
    }

    #[cfg(any(feature = "http", feature = "client"))]
    #[test]
    fn a_bucket_lets_a_burst_through_then_one_per_share_of_the_period() {
        let rate = Rate::parse("4/s").unwrap();
        let t0 = Instant::now();
        let mut b = Bucket::full(&rate, t0);
        for _ in 0..4 {
            assert!(b.take(&rate, t0).is_ok());
        }
        let wait = b.take(&rate, t0).unwrap_err();
        assert_eq!(wait, Duration::from_millis(250));
        let later = t0 + Duration::from_millis(100);
        assert_eq!(
            b.take(&rate, later).unwrap_err(),
            Duration::from_millis(150)
        );
        assert!(b.take(&rate, t0 + Duration::from_millis(250)).is_ok());
        // Refilled, never past the burst.
        let idle = t0 + Duration::from_secs(60);
        for _ in 0..4 {
            assert!(b.take(&rate, idle).is_ok());
        }
        assert!(b.take(&rate, idle).is_err());
    }

    #[cfg(feature = "http")]
    #[test]
    fn callers_have_their_own_buckets_and_the_table_stays_bounded() {
        let rate = Rate::parse("1/s").unwrap();
        let t0 = Instant::now();
        let mut table = Buckets::with_max(rate, 3);
        assert!(table.take("a", t0).is_ok());
        assert!(table.take("a", t0).is_err());
        assert!(table.take("b", t0).is_ok());
        assert!(table.take("c", t0).is_ok());
        // Full: d pushes one out, and the table stays within 3.
        assert!(table.take("d", t0).is_ok());
        assert!(table.tracked() <= 3);
        // A second later every bucket is full again: all are forgotten.
        let t1 = t0 + Duration::from_secs(1);
        for caller in ["e", "f", "g", "h"] {
            assert!(table.take(caller, t1).is_ok());
        }
        assert!(table.tracked() <= 3);
        assert!(table.take("h", t1).is_err());
        // Many new callers at once: the table never grows past its bound.
        let mut big = Buckets::with_max(rate, 1000);
        for i in 0..5000 {
            assert!(big.take(&format!("ip:{i}"), t0).is_ok());
            assert!(big.tracked() <= 1000);
        }
    }
}
