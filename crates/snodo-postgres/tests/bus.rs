//! The event bus and the session directory against the PostgreSQL server on
//! 127.0.0.1:5432 (`SNODO_POSTGRES_URL` names another on loopback;
//! `SNODO_SKIP_POSTGRES=1` skips these tests on a machine without one).

use std::time::Duration;

use snodo_postgres::{PostgresBus, PostgresSessions};
use snodo_test::event_bus;
use snodo_test::session_directory;

fn url() -> Option<String> {
    if snodo_test::skip("SNODO_SKIP_POSTGRES") {
        return None;
    }
    Some(
        std::env::var("SNODO_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into()),
    )
}

fn channel(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("snodo_test_{name}_{}_{nanos}", std::process::id())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_bus_keeps_the_bus_contract() {
    let Some(url) = url() else { return };
    let channel = channel("bus");
    let connect = || async {
        PostgresBus::connect(&url, &channel)
            .await
            .unwrap_or_else(|e| {
                panic!("PostgreSQL must be reachable at {url} (SNODO_SKIP_POSTGRES=1 skips): {e}")
            })
    };
    event_bus::run(connect).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_directory_keeps_the_directory_contract() {
    let Some(url) = url() else { return };
    let idle = Duration::from_millis(900);
    let dir = PostgresSessions::connect(&url, idle)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL must be reachable at {url}: {e}"));
    session_directory::run(dir, idle).await;
}

#[tokio::test]
async fn bad_channels_and_addresses_are_clear_errors() {
    let Some(url) = url() else { return };
    let error = PostgresBus::connect(&url, "Bad-Channel").await.unwrap_err();
    assert!(error.to_string().contains("[a-z0-9_]"), "{error}");
    let error = PostgresBus::connect("postgres://postgres@127.0.0.1:1/test", "ok")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("PostgreSQL"), "{error}");
}
