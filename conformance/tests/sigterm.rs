//! The fixture server exits on SIGTERM even while its standard input stays
//! open (a supervisor keeps the pipe; only the signal says stop).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigterm_stops_the_server_while_stdin_stays_open() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snodo-conformance"))
        .args(["server", "--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fixture starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"url\""), "{line}");
    let _stdin_kept_open = child.stdin.take();
    // The shell's own `kill`, present wherever `sh` is.
    let status = Command::new("sh")
        .args(["-c", &format!("kill -TERM {}", child.id())])
        .status()
        .expect("sh runs");
    assert!(status.success());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        if started.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("still running 15 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
