//! Holding a backend to its limits: calls in flight, a rate, a circuit
//! breaker that cuts off a backend that keeps failing, and a budget for
//! retrying the calls that may be repeated.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use super::stats::Refusal;
use crate::client::{ClientError, ClientErrorKind};
use crate::error::HandlerError;
use crate::server::{Bucket, Rate};
use crate::{Context, Error};

/// The most retries a backend's budget saves up.
const MAX_SAVED_RETRIES: f64 = 10.0;

/// How one backend's calls are limited: set with
/// [`Proxy::limit`](super::Proxy::limit). The default limits nothing.
/// They apply to each forwarded tool call, prompt request and resource
/// read (a caller's answer to a backend's input request continues its
/// call, and is not counted again).
///
/// ```
/// use std::time::Duration;
/// use snodo::proxy::BackendLimits;
/// use snodo::server::Rate;
///
/// let limits = BackendLimits::new()
///     .concurrency(8)
///     .rate(Rate::parse("30/s").unwrap())
///     .retry(3, 20)
///     .circuit_breaker(5, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BackendLimits {
    concurrency: Option<usize>,
    rate: Option<Rate>,
    retry: Option<(u32, u32)>,
    breaker: Option<(u32, Duration)>,
}

impl BackendLimits {
    /// Limits nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `calls` in flight at the backend (at least 1); later calls
    /// wait their turn (their caller's cancellation and the request's
    /// timeout still apply).
    pub fn concurrency(mut self, calls: usize) -> Self {
        self.concurrency = Some(calls.clamp(1, Semaphore::MAX_PERMITS));
        self
    }

    /// At most `rate` calls (a token bucket: a burst of the rate's count,
    /// then evenly over its period); a call past it is refused at once
    /// with [`RATE_LIMITED`](crate::error::code::RATE_LIMITED) and
    /// `data.retryAfter` in seconds.
    pub fn rate(mut self, rate: Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// Tries a call up to `attempts` times in all when it fails (the
    /// backend cannot be reached, times out, breaks the protocol or
    /// answers `-32603`), for tools whose annotations say `readOnlyHint`
    /// or `idempotentHint`. Retries add at most `budget_percent` % to the
    /// calls sent: each call earns that share of a retry, each retry
    /// spends one, and at most 10 are saved (one to start with).
    pub fn retry(mut self, attempts: u32, budget_percent: u32) -> Self {
        self.retry = Some((attempts.max(1), budget_percent));
        self
    }

    /// After `failures` failed calls in a row (as [`retry`](Self::retry)
    /// counts them) the backend is cut off for `open_for`: its calls fail
    /// at once with [`BACKEND_UNAVAILABLE`](crate::error::code::BACKEND_UNAVAILABLE)
    /// and `data.retryAfter`. Then one call is let through: if it
    /// succeeds, the backend is served again; if it fails, it is cut off
    /// again.
    pub fn circuit_breaker(mut self, failures: u32, open_for: Duration) -> Self {
        self.breaker = Some((failures.max(1), open_for));
        self
    }

    /// A short account of the settings, for logs and summaries.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.concurrency {
            parts.push(format!("concurrency {n}"));
        }
        if let Some(rate) = &self.rate {
            parts.push(format!("rate {rate}"));
        }
        if let Some((attempts, budget)) = self.retry {
            parts.push(format!("retry {attempts} attempts within {budget} %"));
        }
        if let Some((failures, open_for)) = self.breaker {
            parts.push(format!(
                "circuit_breaker after {failures} failures, open {} s",
                open_for.as_secs_f64()
            ));
        }
        parts.join(", ")
    }
}

/// A circuit breaker's state.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Breaker {
    /// Serving; the failures in a row so far.
    Closed(u32),
    /// Cut off until then.
    Open(Instant),
    /// One trial call let through, its answer awaited.
    Trial,
}

/// A backend's limits and their state.
#[derive(Debug)]
pub(crate) struct Guard {
    limits: BackendLimits,
    permits: Option<Semaphore>,
    bucket: Option<Mutex<Bucket>>,
    breaker: Mutex<Breaker>,
    /// Retries saved up.
    budget: Mutex<f64>,
}

/// A call not let through: the limit that refused it (none when its
/// caller went away while it waited), and the error that says so.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) why: Option<Refusal>,
    pub(crate) error: HandlerError,
}

/// A call let through; dropped when it ends.
pub(crate) struct Pass<'a> {
    guard: &'a Guard,
    _permit: Option<SemaphorePermit<'a>>,
    /// It is the breaker's trial call.
    trial: bool,
    recorded: bool,
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        // A trial that ended without an answer (cancelled) lets the next
        // call try.
        if self.trial && !self.recorded {
            let mut breaker = lock(&self.guard.breaker);
            if *breaker == Breaker::Trial {
                *breaker = Breaker::Open(Instant::now());
            }
        }
    }
}

impl Default for Guard {
    fn default() -> Self {
        Guard::new(BackendLimits::default())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Guard {
    pub(crate) fn new(limits: BackendLimits) -> Self {
        let now = Instant::now();
        Guard {
            permits: limits.concurrency.map(Semaphore::new),
            bucket: limits.rate.map(|r| Mutex::new(Bucket::full(&r, now))),
            breaker: Mutex::new(Breaker::Closed(0)),
            budget: Mutex::new(1.0),
            limits,
        }
    }

    pub(crate) fn limits(&self) -> &BackendLimits {
        &self.limits
    }

    /// Whether it has a circuit breaker.
    pub(crate) fn has_breaker(&self) -> bool {
        self.limits.breaker.is_some()
    }

    /// Whether calls are limited at all.
    pub(crate) fn is_open_door(&self) -> bool {
        self.limits == BackendLimits::default()
    }

    /// The breaker's state, for reports: `closed`, `open` or `half-open`.
    pub(crate) fn breaker_state(&self) -> &'static str {
        match *lock(&self.breaker) {
            Breaker::Closed(_) => "closed",
            Breaker::Open(until) if until > Instant::now() => "open",
            Breaker::Open(_) | Breaker::Trial => "half-open",
        }
    }

    /// Lets a call through, or says why not: cut off, over the rate; waits
    /// for a turn under the concurrency limit (or the caller's
    /// cancellation).
    pub(crate) async fn admit(&self, id: &str, cx: &Context) -> Result<Pass<'_>, Refused> {
        let refused = |why, error| Refused {
            why: Some(why),
            error,
        };
        let mut trial = false;
        if let Some((_, open_for)) = self.limits.breaker {
            let now = Instant::now();
            let mut breaker = lock(&self.breaker);
            match *breaker {
                Breaker::Closed(_) => {}
                Breaker::Open(until) if until > now => {
                    return Err(refused(Refusal::Breaker, cut_off(id, until - now)));
                }
                Breaker::Open(_) => {
                    *breaker = Breaker::Trial;
                    trial = true;
                }
                Breaker::Trial => return Err(refused(Refusal::Breaker, cut_off(id, open_for))),
            }
        }
        let mut pass = Pass {
            guard: self,
            _permit: None,
            trial,
            recorded: false,
        };
        if let (Some(bucket), Some(rate)) = (&self.bucket, &self.limits.rate)
            && let Err(wait) = lock(bucket).take(rate, Instant::now())
        {
            return Err(refused(Refusal::Rate, limited(id, rate, wait)));
        }
        if let Some(permits) = &self.permits {
            tokio::select! {
                permit = permits.acquire() => pass._permit = permit.ok(),
                () = cx.cancellation().cancelled() => {
                    return Err(Refused {
                        why: None,
                        error: HandlerError::protocol(Error::internal("the request was cancelled")),
                    });
                }
            }
        }
        Ok(pass)
    }

    /// Records how a call let through ended: answered (whatever the
    /// answer), or failed as the breaker and retries count failures.
    pub(crate) fn record(&self, mut pass: Pass<'_>, failed: bool) {
        pass.recorded = true;
        let Some((failures, open_for)) = self.limits.breaker else {
            return;
        };
        let mut breaker = lock(&self.breaker);
        *breaker = match (*breaker, failed) {
            (_, false) => Breaker::Closed(0),
            (Breaker::Closed(n), true) if n + 1 < failures && !pass.trial => Breaker::Closed(n + 1),
            (_, true) => {
                tracing::warn!(target: "snodo::proxy", "a backend is cut off for {} s after {failures} failures in a row", open_for.as_secs_f64());
                Breaker::Open(Instant::now() + open_for)
            }
        };
    }

    /// How many times a call that may be repeated is tried in all.
    pub(crate) fn attempts(&self) -> u32 {
        self.limits.retry.map_or(1, |(attempts, _)| attempts)
    }

    /// A first attempt earns its share of a retry.
    pub(crate) fn earn(&self) {
        if let Some((_, percent)) = self.limits.retry {
            let mut budget = lock(&self.budget);
            *budget = (*budget + f64::from(percent) / 100.0).min(MAX_SAVED_RETRIES);
        }
    }

    /// Spends a retry, if one is saved.
    pub(crate) fn spend(&self) -> bool {
        let mut budget = lock(&self.budget);
        if *budget >= 1.0 {
            *budget -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Whether a backend's failure counts against it (for the breaker and
/// retries): it could not be reached, timed out, broke the protocol, or
/// answered `-32603`.
pub(crate) fn counts(e: &ClientError) -> bool {
    match e.kind() {
        ClientErrorKind::Transport | ClientErrorKind::Timeout | ClientErrorKind::Protocol => true,
        ClientErrorKind::Rpc => e.code() == Some(crate::error::code::INTERNAL_ERROR),
        _ => false,
    }
}

fn seconds(wait: Duration) -> f64 {
    (wait.as_secs_f64() * 1000.0).ceil() / 1000.0
}

fn limited(id: &str, rate: &Rate, wait: Duration) -> HandlerError {
    let after = seconds(wait);
    HandlerError::protocol(
        Error::new(
            crate::error::code::RATE_LIMITED,
            format!("backend {id:?} takes at most {rate} calls: try again in {after} s"),
        )
        .with_data(json!({"backend": id, "rate": rate.to_string(), "retryAfter": after})),
    )
}

fn cut_off(id: &str, wait: Duration) -> HandlerError {
    let after = seconds(wait);
    HandlerError::protocol(
        Error::new(
            crate::error::code::BACKEND_UNAVAILABLE,
            format!("backend {id:?} is cut off after failing: try again in {after} s"),
        )
        .with_data(json!({"backend": id, "breaker": "open", "retryAfter": after})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Context {
        Context::detached()
    }

    #[tokio::test(start_paused = true)]
    async fn the_breaker_opens_after_failures_in_a_row_and_lets_one_trial_through() {
        let guard = Guard::new(BackendLimits::new().circuit_breaker(2, Duration::from_secs(10)));
        let cx = cx();
        let pass = guard.admit("b", &cx).await.unwrap();
        guard.record(pass, true);
        let pass = guard.admit("b", &cx).await.unwrap();
        guard.record(pass, false);
        // A success in between: two more failures are needed.
        for _ in 0..2 {
            let pass = guard.admit("b", &cx).await.unwrap();
            guard.record(pass, true);
        }
        assert_eq!(guard.breaker_state(), "open");
        let e = guard.admit("b", &cx).await.err().unwrap();
        assert_eq!(e.why, Some(Refusal::Breaker));
        let e = e.error.to_string();
        assert!(e.contains("cut off"), "{e}");
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(guard.breaker_state(), "half-open");
        let trial = guard.admit("b", &cx).await.unwrap();
        // One trial at a time.
        assert!(guard.admit("b", &cx).await.is_err());
        guard.record(trial, true);
        assert_eq!(guard.breaker_state(), "open");
        tokio::time::advance(Duration::from_secs(10)).await;
        let trial = guard.admit("b", &cx).await.unwrap();
        guard.record(trial, false);
        assert_eq!(guard.breaker_state(), "closed");
        // A trial dropped unanswered lets the next call try.
        for _ in 0..2 {
            let pass = guard.admit("b", &cx).await.unwrap();
            guard.record(pass, true);
        }
        tokio::time::advance(Duration::from_secs(10)).await;
        drop(guard.admit("b", &cx).await.unwrap());
        assert!(guard.admit("b", &cx).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn the_rate_refuses_with_the_wait_and_the_budget_bounds_retries() {
        let guard = Guard::new(
            BackendLimits::new()
                .rate(Rate::parse("2/s").unwrap())
                .retry(3, 50),
        );
        let cx = cx();
        assert!(guard.admit("b", &cx).await.is_ok());
        assert!(guard.admit("b", &cx).await.is_ok());
        let e = guard.admit("b", &cx).await.err().unwrap();
        assert_eq!(e.why, Some(Refusal::Rate));
        let e = e.error.to_string();
        assert!(e.contains("try again in 0.5 s"), "{e}");
        // One retry to start with; two first attempts earn another.
        assert_eq!(guard.attempts(), 3);
        assert!(guard.spend());
        assert!(!guard.spend());
        guard.earn();
        assert!(!guard.spend());
        guard.earn();
        assert!(guard.spend());
    }

    #[tokio::test]
    async fn concurrency_holds_calls_until_a_turn_is_free() {
        let guard = Guard::new(BackendLimits::new().concurrency(1));
        let cx = cx();
        let first = guard.admit("b", &cx).await.unwrap();
        let waiting = guard.admit("b", &cx);
        tokio::pin!(waiting);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut waiting)
                .await
                .is_err()
        );
        drop(first);
        assert!(waiting.await.is_ok());
    }

    #[test]
    fn describe_names_each_limit() {
        assert!(BackendLimits::new().describe().is_empty());
        let all = BackendLimits::new()
            .concurrency(0)
            .rate(Rate::parse("30/s").unwrap())
            .retry(0, 20)
            .circuit_breaker(5, Duration::from_secs(30));
        assert_eq!(
            all.describe(),
            "concurrency 1, rate 30/s, retry 1 attempts within 20 %, circuit_breaker after 5 failures, open 30 s"
        );
    }
}
