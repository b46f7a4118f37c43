//! `snodo demo` exits on SIGTERM, over stdio and HTTP, even while its
//! standard input stays open.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use support::terminate_and_wait;

#[test]
fn the_http_demo_stops_on_sigterm() {
    let (child, _url) = support::http_demo();
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
    // One answered request shows the server is serving (and its handler is in place).
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
