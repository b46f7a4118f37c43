//! Starting the `snodo` binary and stopping it with a signal.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `snodo demo --http 127.0.0.1:0` with piped stdin and stdout, and the URL
/// it printed.
pub fn http_demo() -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snodo"))
        .args(["demo", "--http", "127.0.0.1:0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the demo starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url: serde_json::Value = serde_json::from_str(&line).expect("the demo prints its url");
    (child, url["url"].as_str().unwrap().to_string())
}

/// `snodo demo --http 127.0.0.1:0 ARGS...` as a child of the runtime
/// (killed when dropped), and the URL of its first stdout line (within
/// 30 s).
pub async fn spawn_demo(args: &[&str]) -> (tokio::process::Child, String) {
    spawn_demo_with(args, |_| {}).await
}

/// [`spawn_demo`], with the command adjusted by `configure` first (its
/// environment, its stderr).
pub async fn spawn_demo_with(
    args: &[&str],
    configure: impl FnOnce(&mut tokio::process::Command),
) -> (tokio::process::Child, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_snodo"));
    command
        .args(["demo", "--http", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    configure(&mut command);
    let mut child = command.spawn().expect("the demo starts");
    let url = demo_url(&mut child).await;
    (child, url)
}

/// The URL a demo prints on its first stdout line (within 30 s).
pub async fn demo_url(child: &mut tokio::process::Child) -> String {
    use tokio::io::AsyncBufReadExt;
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        tokio::io::BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .expect("the demo prints its url within 30 s")
    .unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not the URL line: {line:?}"));
    v["url"].as_str().unwrap().to_string()
}

/// Sends SIGTERM (through the shell's own `kill`, present wherever `sh`
/// is) and waits up to 15 s for a successful exit.
pub fn terminate_and_wait(mut child: Child) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .expect("sh runs");
    assert!(status.success());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("still running 15 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The tool names `client`'s server lists, sorted.
pub async fn tool_names(client: &snodo::client::Client) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    names
}

/// `snodo proxy --http 127.0.0.1:0 ARGS... CONFIG` (stderr passed on) and
/// its URL.
pub async fn spawn_proxy(
    args: &[String],
    config: &std::path::Path,
) -> (tokio::process::Child, String) {
    spawn_proxy_with(args, config, |_| {}).await
}

/// [`spawn_proxy`], with the command adjusted by `configure` first.
pub async fn spawn_proxy_with(
    args: &[String],
    config: &std::path::Path,
    configure: impl FnOnce(&mut tokio::process::Command),
) -> (tokio::process::Child, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_snodo"));
    command
        .arg("proxy")
        .args(["--http", "127.0.0.1:0"])
        .args(args)
        .arg(config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true);
    configure(&mut command);
    let mut child = command.spawn().expect("the proxy starts");
    let url = demo_url(&mut child).await;
    (child, url)
}

/// Serves `server` over Streamable HTTP on loopback while the test runs,
/// keeping the headers of every request it is sent; its URL and those
/// headers.
pub async fn serve_recording(
    server: &snodo::Server,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<http::HeaderMap>>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: std::sync::Arc<std::sync::Mutex<Vec<http::HeaderMap>>> = Default::default();
    let (service, log) = (server.http_service(), seen.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (service, log) = (service.clone(), log.clone());
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(
                    move |request: http::Request<hyper::body::Incoming>| {
                        log.lock().unwrap().push(request.headers().clone());
                        let mut service = service.clone();
                        async move { tower_service::Service::call(&mut service, request).await }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    (url, seen)
}

/// A fresh, empty directory for one test's files: `snodo-<name>-<pid>` in
/// the system's temporary directory.
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snodo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
