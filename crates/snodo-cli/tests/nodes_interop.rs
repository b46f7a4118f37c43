//! The official TypeScript SDK clients, v1 (initialize era, sessions) and
//! v2 (2026-07-28), through a round-robin balancer in front of three demo
//! nodes joined by Redis: every request goes to the next node, so sessions,
//! elicitations answered on another node and paginated lists all cross
//! nodes.
//!
//! Run by `interop/run.sh` (which installs Node 22 and the pinned packages
//! and puts Node first on PATH): `cargo test --test nodes_interop --
//! --ignored --nocapture`. Needs Redis on 127.0.0.1:6379.

mod nodes_support;
mod support;

use std::path::PathBuf;
use std::time::Duration;

use nodes_support::{Bus, balancer, cluster, key_line, raw, temp_dir, write_keys};

fn interop_node() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/node")
}

async fn client(script: &str, url: &str, label: &str) {
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new("node")
            .args([script, "--http", url, "--label", label])
            .current_dir(interop_node())
            .output(),
    )
    .await
    .expect("the client finishes within 120 s")
    .unwrap_or_else(|e| panic!("node (Node 22 on PATH, see interop/run.sh): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The client's own checks, and its closing `<label>: N passed, M failed`.
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{label} failed:\n{stdout}");
    assert!(
        stdout.contains(&format!("{label}: ")) && stdout.contains(" 0 failed"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Node 22 and the pinned npm packages (interop/run.sh)"]
async fn typescript_clients_through_the_balancer() {
    let Some(url) = Bus::Redis.url() else { return };
    let dir = temp_dir("ts-clients");
    let keys = dir.join("keys");
    write_keys(&keys, &[key_line("k1", 1)]);
    let nodes = cluster(&url, &Bus::Redis.channel("ts_clients"), &keys, 3, &[]).await;
    let lb = balancer::start(nodes.iter().map(|n| raw::addr_of(&n.url)).collect()).await;
    client("ts_v1_client.mjs", &lb.url, "ts-sdk-v1-balanced").await;
    client("ts_v2_client.mjs", &lb.url, "ts-sdk-v2-balanced").await;
    let hits: Vec<usize> = lb
        .hits
        .iter()
        .map(|h| h.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    println!("requests per node through the balancer: {hits:?}");
    assert!(
        hits.iter().all(|h| *h > 5),
        "every node served requests: {hits:?}"
    );
    let paged = cluster(
        &url,
        &Bus::Redis.channel("ts_paged"),
        &keys,
        3,
        &["--page-size", "2"],
    )
    .await;
    let lb = balancer::start(paged.iter().map(|n| raw::addr_of(&n.url)).collect()).await;
    client("ts_v2_client.mjs", &lb.url, "ts-sdk-v2-balanced-paged").await;
    let _ = std::fs::remove_dir_all(dir);
}
