//! The `snodo` command line pins each protocol revision against the demo,
//! over Streamable HTTP and over stdio, both as real child processes.

mod support;

use std::process::{Child, Command};

use serde_json::Value;

/// The HTTP demo, killed when dropped.
struct Demo {
    child: Child,
    url: String,
}

impl Demo {
    fn http() -> Demo {
        let (child, url) = support::http_demo();
        Demo { child, url }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn snodo(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_snodo"))
        .args(args)
        .output()
        .expect("snodo runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_revision_is_spoken_over_http_and_stdio() {
    let demo = Demo::http();
    let stdio = format!("{} demo --stdio", env!("CARGO_BIN_EXE_snodo"));
    for target in [demo.url.as_str(), stdio.as_str()] {
        for revision in ["2026-07-28", "2025-11-25", "2025-06-18"] {
            let (code, out) = snodo(&["discover", "--protocol", revision, target]);
            assert_eq!(code, 0, "{revision} {target}: {out}");
            assert!(out.contains(&format!("Protocol: {revision}")), "{out}");

            let (code, out) = snodo(&[
                "call",
                "--protocol",
                revision,
                target,
                "add",
                "a=2",
                "b=40",
                "--json",
            ]);
            assert_eq!(code, 0, "{revision} {target}: {out}");
            let result: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(result["structuredContent"]["sum"], 42);
            assert_eq!(
                result.get("resultType").is_some(),
                revision == "2026-07-28",
                "resultType only in 2026-07-28: {result}"
            );

            let (code, out) =
                snodo(&["call", "--protocol", revision, target, "lookup", "word=zzz"]);
            assert_eq!(code, 1, "an isError result exits 1: {out}");

            let (code, _) = snodo(&[
                "read",
                "--protocol",
                revision,
                target,
                "demo://greetings/Ada",
            ]);
            assert_eq!(code, 0);
        }
    }
}
