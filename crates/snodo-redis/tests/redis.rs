//! The bus and the session directory against the Redis server on
//! 127.0.0.1:6379 (`SNODO_REDIS_URL` points elsewhere on loopback;
//! `SNODO_SKIP_REDIS=1` skips these tests on a machine without Redis).

use std::time::Duration;

use snodo_redis::{RedisBus, RedisSessions};
use snodo_test::event_bus;
use snodo_test::session_directory;

fn url() -> Option<String> {
    if snodo_test::skip("SNODO_SKIP_REDIS") {
        return None;
    }
    Some(std::env::var("SNODO_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()))
}

fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("snodo-test:{name}:{}:{nanos}", std::process::id())
}

async fn bus(url: &str, channel: &str) -> RedisBus {
    RedisBus::connect(url, channel).await.unwrap_or_else(|e| {
        panic!("Redis must be reachable at {url} (SNODO_SKIP_REDIS=1 skips): {e}")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_bus_keeps_the_bus_contract() {
    let Some(url) = url() else { return };
    let channel = unique("contract");
    event_bus::run(|| bus(&url, &channel)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_directory_keeps_the_directory_contract() {
    let Some(url) = url() else { return };
    let idle = Duration::from_millis(900);
    let dir = RedisSessions::connect(&url, &format!("{}:", unique("sessions")), idle)
        .await
        .unwrap_or_else(|e| panic!("Redis must be reachable at {url}: {e}"));
    session_directory::run(dir, idle).await;
}

#[tokio::test]
async fn a_wrong_address_is_a_clear_error() {
    if url().is_none() {
        return;
    }
    let error = RedisBus::connect("redis://127.0.0.1:1", "x")
        .await
        .unwrap_err();
    assert!(error.to_string().starts_with("Redis: "), "{error}");
    // The client's own error is kept under it.
    assert!(std::error::Error::source(&error).is_some(), "{error:?}");
    let error = RedisBus::connect("not a url", "x").await.unwrap_err();
    assert!(error.to_string().contains("not a url"), "{error}");
    assert!(std::error::Error::source(&error).is_some(), "{error:?}");
}
