//! The client commands' output to a closed pipe (`snodo tools URL | head -1`)
//! ends the command quietly: no panic, exit 0.

mod support;

use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let (demo, url) = support::http_demo();
    let mut child = Command::new(env!("CARGO_BIN_EXE_snodo"))
        .args(["tools", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before anything is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    support::terminate_and_wait(demo);
}
