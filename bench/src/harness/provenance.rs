//! What a run was measured with: the commit (and whether the tree had
//! changes), the toolchain, a hash of the lockfile (so the peers' versions
//! are pinned too), and the machine.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the harness is built from `bench/`).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// `rustc --version`.
pub(crate) fn rustc() -> String {
    output(Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())).arg("--version"))
        .unwrap_or_else(|| "unknown".into())
}

/// The commit checked out, with `+changes` when the tree differs from it.
pub(crate) fn commit() -> String {
    let root = workspace_root();
    let Some(head) = output(
        Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(["rev-parse", "HEAD"]),
    ) else {
        return "unknown".into();
    };
    let dirty = output(Command::new("git").arg("-C").arg(&root).args([
        "status",
        "--porcelain",
        "--untracked-files=no",
    ]))
    .is_some();
    if dirty {
        format!("{head}+changes")
    } else {
        head
    }
}

/// The SHA-256 of `Cargo.lock` (`sha256sum`), which pins every crate the
/// servers were built from.
pub(crate) fn lockfile_sha256() -> String {
    output(Command::new("sha256sum").arg(workspace_root().join("Cargo.lock")))
        .and_then(|line| line.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// The CPU model from `/proc/cpuinfo`.
pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The kernel release.
pub(crate) fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| "unknown kernel".into())
}
