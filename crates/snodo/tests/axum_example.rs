//! Runs `examples/axum_mount.rs` as a real child process: it prints its URL,
//! answers `/health` and MCP requests through axum, and exits when its stdin
//! closes.
#![cfg(feature = "http")]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const SOON: Duration = Duration::from_secs(10);

/// The example binary, next to this test's binary (`target/<profile>/examples/`).
///
/// `cargo test` builds examples before it runs tests. When only this test
/// target was built (`cargo test --test axum_example`), or the example's
/// source is newer than its binary, build it now with the same cargo.
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let binary = profile_dir
        .join("examples")
        .join(format!("axum_mount{}", std::env::consts::EXE_SUFFIX));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/axum_mount.rs");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let fresh = match (modified(&binary), modified(&source)) {
        (Some(built), Some(written)) => built >= written,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if !fresh {
        let target_dir = profile_dir.parent().expect("target/<profile>");
        let mut cargo = std::process::Command::new(env!("CARGO"));
        cargo.args([
            "build",
            "--quiet",
            "-p",
            "snodo",
            "--example",
            "axum_mount",
            "--target-dir",
        ]);
        cargo.arg(target_dir);
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cargo.arg("--release");
            }
            Some(profile) => {
                cargo.args(["--profile", profile]);
            }
        }
        let status = cargo
            .status()
            .expect("run cargo build --example axum_mount");
        assert!(status.success(), "cargo build --example axum_mount failed");
    }
    binary
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axum_example_serves_health_and_mcp_and_exits_on_stdin_close() {
    let mut child = Command::new(example_binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the example");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(SOON, lines.next_line())
        .await
        .expect("the example prints its URL in time")
        .expect("read stdout")
        .expect("one line");
    let announced: Value = serde_json::from_str(&line).expect("a JSON line");
    let url = announced["url"].as_str().expect("a url").to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let health = Request::get(url.replace("/mcp", "/health"))
        .body(Full::default())
        .unwrap();
    let response = tokio::time::timeout(SOON, client.request(health))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "ok"
    );

    let list = Request::post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/list")
        .body(Full::new(Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        )))
        .unwrap();
    let response = tokio::time::timeout(SOON, client.request(list))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["id"], 1);
    assert_eq!(json["result"]["tools"][0]["name"], "echo");

    // The example's own checks run too: a GET on the MCP endpoint opens an
    // initialize-era session's stream, so without a session id it is 400.
    let get = Request::get(&url).body(Full::default()).unwrap();
    let response = tokio::time::timeout(SOON, client.request(get))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    drop(client); // close the keep-alive connections the graceful shutdown waits for
    drop(child.stdin.take());
    let status = tokio::time::timeout(SOON, child.wait())
        .await
        .expect("the example exits once stdin closes")
        .expect("wait for the example");
    assert!(status.success(), "{status}");
}
