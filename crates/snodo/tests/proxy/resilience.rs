//! A backend's limits: a circuit breaker that cuts off a backend that
//! hangs and lets it back once it answers, retries of read-only tools
//! only, a rate and a cap on calls in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use snodo::client::Client;
use snodo::prelude::*;
use snodo::proxy::{BackendLimits, Proxy};
use snodo::server::Rate;

use crate::host::{gateway, send};

async fn call(proxy: &Proxy, name: &str) -> Value {
    send(
        proxy.server(),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    )
    .await
}

async fn proxy_of(backend: Server, limits: BackendLimits, timeout: Duration) -> Proxy {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy.limit("b", limits).unwrap();
    proxy
        .connect_backend("b", Client::builder().timeout(timeout), backend)
        .await
        .unwrap();
    proxy
}

#[tokio::test]
async fn a_backend_that_hangs_trips_the_breaker_and_is_served_again_after_open_for() {
    let hang = Arc::new(AtomicBool::new(true));
    let flag = hang.clone();
    let backend = Server::builder("b", "1")
        .tool(snodo::tool::from_fn("slow", move |_a, cx| {
            let hang = flag.load(Ordering::SeqCst);
            async move {
                if hang {
                    cx.cancellation().cancelled().await;
                }
                Ok("answered".into())
            }
        }))
        .build()
        .unwrap();
    let limits = BackendLimits::new().circuit_breaker(2, Duration::from_millis(800));
    let proxy = proxy_of(backend, limits, Duration::from_millis(200)).await;
    assert_eq!(proxy.breaker("b"), Some("closed"));
    for _ in 0..2 {
        let r = call(&proxy, "b.slow").await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
    }
    assert_eq!(proxy.breaker("b"), Some("open"));
    // Cut off: an answer at once, without waiting for the timeout.
    let since = Instant::now();
    let r = call(&proxy, "b.slow").await;
    assert!(since.elapsed() < Duration::from_millis(150), "{r}");
    assert_eq!(r["error"]["code"], -31503, "{r}");
    assert_eq!(r["error"]["data"]["breaker"], "open");
    let after = r["error"]["data"]["retryAfter"].as_f64().unwrap();
    assert!(after > 0.0 && after <= 0.8, "{r}");
    // The backend answers again; after open_for one trial goes through and
    // the backend is served again.
    hang.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(850)).await;
    assert_eq!(proxy.breaker("b"), Some("half-open"));
    let r = call(&proxy, "b.slow").await;
    assert_eq!(r["result"]["content"][0]["text"], "answered", "{r}");
    assert_eq!(proxy.breaker("b"), Some("closed"));
    let r = call(&proxy, "b.slow").await;
    assert_eq!(r["result"]["content"][0]["text"], "answered", "{r}");
}

/// A tool that fails with `-32603` on its first call and answers after,
/// counting its calls.
fn fails_once(name: &'static str, annotations: Value, calls: Arc<AtomicUsize>) -> impl Tool {
    snodo::tool::from_fn(name, move |_a, _c| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        async move {
            if n == 0 {
                return Err(HandlerError::protocol(snodo::Error::internal("flaked")));
            }
            Ok(format!("call {}", n + 1).into())
        }
    })
    .annotations(annotations)
}

#[tokio::test]
async fn only_read_only_or_idempotent_tools_are_tried_again() {
    let (ro, idem, rw) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let backend = Server::builder("b", "1")
        .tool(fails_once(
            "lookup",
            json!({"readOnlyHint": true}),
            ro.clone(),
        ))
        .tool(fails_once(
            "put",
            json!({"idempotentHint": true}),
            idem.clone(),
        ))
        .tool(fails_once(
            "append",
            json!({"readOnlyHint": false}),
            rw.clone(),
        ))
        .build()
        .unwrap();
    let limits = BackendLimits::new().retry(3, 100);
    let proxy = proxy_of(backend, limits, Duration::from_secs(10)).await;
    let r = call(&proxy, "b.lookup").await;
    assert_eq!(r["result"]["content"][0]["text"], "call 2", "{r}");
    let r = call(&proxy, "b.put").await;
    assert_eq!(r["result"]["content"][0]["text"], "call 2", "{r}");
    let r = call(&proxy, "b.append").await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["message"], "flaked", "{r}");
    assert_eq!(
        (
            ro.load(Ordering::SeqCst),
            idem.load(Ordering::SeqCst),
            rw.load(Ordering::SeqCst)
        ),
        (2, 2, 1)
    );
}

#[tokio::test]
async fn retries_stop_at_the_budget() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let backend = Server::builder("b", "1")
        .tool(
            snodo::tool::from_fn("lookup", move |_a, _c| {
                counter.fetch_add(1, Ordering::SeqCst);
                async { Err(HandlerError::protocol(snodo::Error::internal("down"))) }
            })
            .annotations(json!({"readOnlyHint": true})),
        )
        .build()
        .unwrap();
    // Five attempts allowed, but a budget of 10 %: the one retry saved at
    // the start, then a tenth of a retry per call.
    let limits = BackendLimits::new().retry(5, 10);
    let proxy = proxy_of(backend, limits, Duration::from_secs(10)).await;
    for _ in 0..5 {
        let r = call(&proxy, "b.lookup").await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
    }
    // 1 + 0.5 earned: one retry in all.
    assert_eq!(calls.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn a_rate_refuses_with_the_wait_and_concurrency_holds_calls_in_turn() {
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n, m) = (now.clone(), most.clone());
    let backend = Server::builder("b", "1")
        .tool(snodo::tool::from_fn("work", move |_a, _c| {
            let (n, m) = (n.clone(), m.clone());
            async move {
                let inside = n.fetch_add(1, Ordering::SeqCst) + 1;
                m.fetch_max(inside, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                n.fetch_sub(1, Ordering::SeqCst);
                Ok("done".into())
            }
        }))
        .build()
        .unwrap();
    let limits = BackendLimits::new()
        .concurrency(1)
        .rate(Rate::parse("3/10s").unwrap());
    let proxy = proxy_of(backend, limits, Duration::from_secs(10)).await;
    let (a, b, c) = tokio::join!(
        call(&proxy, "b.work"),
        call(&proxy, "b.work"),
        call(&proxy, "b.work")
    );
    for r in [a, b, c] {
        assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
    }
    assert_eq!(most.load(Ordering::SeqCst), 1);
    let r = call(&proxy, "b.work").await;
    assert_eq!(r["error"]["code"], -31429, "{r}");
    assert_eq!(r["error"]["data"]["rate"], "3/10s");
    let after = r["error"]["data"]["retryAfter"].as_f64().unwrap();
    assert!(after > 0.0 && after <= 3.334, "{r}");
    // New limits start afresh.
    proxy.limit("b", BackendLimits::new()).unwrap();
    let r = call(&proxy, "b.work").await;
    assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
}
