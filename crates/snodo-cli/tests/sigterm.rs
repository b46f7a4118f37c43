//! `snodo demo` exits on SIGTERM, over stdio and HTTP, even while its
//! standard input stays open.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn terminate_and_wait(mut child: Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
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

#[test]
fn the_http_demo_stops_on_sigterm() {
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
    assert!(line.contains("\"url\""), "{line}");
    terminate_and_wait(child);
}

#[test]
fn the_stdio_demo_stops_on_sigterm_with_stdin_open() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snodo"))
        .args(["demo", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the demo starts");
    // One answered ping shows the server is serving (and its handler is in place).
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.contains("\"protocolVersion\":\"2025-11-25\""),
        "{line}"
    );
    terminate_and_wait(child);
    drop(stdin);
}
