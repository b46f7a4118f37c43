//! What a run was measured with: the commit (and whether the tree had
//! changes), the toolchain, a hash of the lockfile (so the peers' versions
//! are pinned too), and the machine. Every mode's JSON carries the same
//! block ([`Provenance::stamp`]) and every markdown report the same lines
//! ([`Provenance::markdown`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

/// The workspace root (the harness is built from `bench/`).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The provenance block of a results document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Provenance {
    /// The commit checked out (`git rev-parse HEAD`), or `unknown`.
    pub(crate) commit: String,
    /// Whether tracked files differed from that commit (`None`: unknown).
    pub(crate) dirty: Option<bool>,
    /// `rustc --version`.
    pub(crate) rustc: String,
    /// The SHA-256 of `Cargo.lock`, which pins every crate the servers were
    /// built from.
    pub(crate) cargo_lock_sha256: String,
    /// The machine.
    pub(crate) machine: Machine,
}

/// The machine a run was measured on: hardware facts only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Machine {
    /// Online CPUs (all of them, whatever this process is pinned to).
    pub(crate) cpus: usize,
    /// The CPU model.
    pub(crate) cpu_model: String,
    /// Total memory, KiB (`None`: unknown).
    pub(crate) memory_kib: Option<u64>,
    /// The kernel and, when known, the distribution.
    pub(crate) os: String,
    /// The CPU architecture the harness was built for.
    pub(crate) arch: String,
}

impl Provenance {
    /// Reads the commit, the toolchain, the lockfile's hash and the machine.
    pub(crate) fn collect() -> Self {
        let (commit, dirty) = match head() {
            Some(head) => (head, dirty()),
            None => ("unknown".into(), None),
        };
        Self {
            commit,
            dirty,
            rustc: rustc(),
            cargo_lock_sha256: lockfile_sha256(),
            machine: Machine {
                cpus: cpus(),
                cpu_model: cpu_model(),
                memory_kib: memory_kib(),
                os: os(),
                arch: std::env::consts::ARCH.into(),
            },
        }
    }

    /// The commit as the main document's `meta.commit` has always given it:
    /// with `+changes` when the tree differed from it.
    pub(crate) fn commit_label(&self) -> String {
        if self.dirty == Some(true) {
            format!("{}+changes", self.commit)
        } else {
            self.commit.clone()
        }
    }

    /// The block as JSON.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// `doc` (an object) with this block as its member `provenance`.
    pub(crate) fn stamp(&self, mut doc: serde_json::Value) -> serde_json::Value {
        if let Some(map) = doc.as_object_mut() {
            map.insert("provenance".into(), self.to_json());
        }
        doc
    }

    /// The lines a markdown report's header gives: the commit and toolchain,
    /// then the machine.
    pub(crate) fn markdown(&self) -> String {
        let lock = &self.cargo_lock_sha256;
        format!(
            "Commit `{}`{}, {}, `Cargo.lock` SHA-256 `{}…`.\n\nMachine: {}.\n",
            self.commit,
            match self.dirty {
                Some(true) => " with uncommitted changes",
                Some(false) => "",
                None => " (changes unknown)",
            },
            self.rustc,
            &lock[..lock.len().min(16)],
            self.machine.describe()
        )
    }
}

impl Machine {
    /// `2 × Intel(R) Xeon(R) Processor, 23.4 GiB of memory, Linux 6.1 (Debian
    /// GNU/Linux 12), x86_64`.
    pub(crate) fn describe(&self) -> String {
        let memory = self.memory_kib.map_or(String::new(), |kib| {
            format!(", {:.1} GiB of memory", kib as f64 / 1024.0 / 1024.0)
        });
        format!(
            "{} × {}{memory}, {}, {}",
            self.cpus, self.cpu_model, self.os, self.arch
        )
    }
}

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn git() -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(workspace_root());
    cmd
}

/// `git rev-parse HEAD`.
fn head() -> Option<String> {
    output(git().args(["rev-parse", "HEAD"]))
}

/// Whether a tracked file differs from `HEAD`.
fn dirty() -> Option<bool> {
    let out = git()
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(!out.stdout.iter().all(u8::is_ascii_whitespace))
}

/// `rustc --version`.
fn rustc() -> String {
    output(Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())).arg("--version"))
        .unwrap_or_else(|| "unknown".into())
}

/// The SHA-256 of `Cargo.lock` (`sha256sum`).
fn lockfile_sha256() -> String {
    output(Command::new("sha256sum").arg(workspace_root().join("Cargo.lock")))
        .and_then(|line| line.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// Online CPUs from `/proc/cpuinfo` (the harness may already be pinned to
/// one, which `available_parallelism` would count instead).
fn cpus() -> usize {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .map(|s| s.lines().filter(|l| l.starts_with("processor")).count())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The CPU model from `/proc/cpuinfo`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// `MemTotal` from `/proc/meminfo`, KiB.
fn memory_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The kernel release, and the distribution's `PRETTY_NAME` when there is
/// one.
fn os() -> String {
    let kernel = kernel();
    let distribution = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim().trim_matches('"').to_string())
        })
        .filter(|d| !d.is_empty());
    match distribution {
        Some(d) => format!("{kernel} ({d})"),
        None => kernel,
    }
}

/// The kernel release.
pub(crate) fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("Linux {}", s.trim()))
        .unwrap_or_else(|_| "unknown kernel".into())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A block with made-up values, for the documents' tests.
    pub(crate) fn example() -> Provenance {
        Provenance {
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            dirty: Some(true),
            rustc: "rustc 1.95.0 (59807616e 2026-04-14)".into(),
            cargo_lock_sha256: "84555bfe259a10115b707fff62c16a86d773583d2ce8035f1c3cf8ed6f4c3b5a"
                .into(),
            machine: Machine {
                cpus: 2,
                cpu_model: "Intel(R) Xeon(R) Processor".into(),
                memory_kib: Some(24_000_000),
                os: "Linux 6.1.0 (Debian GNU/Linux 12 (bookworm))".into(),
                arch: "x86_64".into(),
            },
        }
    }

    #[test]
    fn the_block_names_commit_toolchain_and_machine() {
        let p = example();
        let json = p.to_json();
        for key in ["commit", "dirty", "rustc", "cargo_lock_sha256", "machine"] {
            assert!(json.get(key).is_some(), "{key} missing");
        }
        for key in ["cpus", "cpu_model", "memory_kib", "os", "arch"] {
            assert!(json["machine"].get(key).is_some(), "machine.{key} missing");
        }
        assert_eq!(p.commit_label(), format!("{}+changes", p.commit));
        let md = p.markdown();
        assert!(md.contains("Commit `0123456789abcdef0123456789abcdef01234567` with uncommitted changes, rustc 1.95.0"));
        assert!(md.contains("`Cargo.lock` SHA-256 `84555bfe259a1011…`"));
        assert!(md.contains("Machine: 2 × Intel(R) Xeon(R) Processor, 22.9 GiB of memory, Linux 6.1.0 (Debian GNU/Linux 12 (bookworm)), x86_64."));
        let stamped = p.stamp(serde_json::json!({"bridge": {}}));
        assert_eq!(stamped["provenance"], json);
        assert!(stamped["bridge"].is_object());
    }

    #[test]
    fn this_machine_is_described() {
        let p = Provenance::collect();
        assert!(p.machine.cpus >= 1);
        assert!(!p.rustc.is_empty());
        assert!(p.markdown().starts_with("Commit `"));
    }
}
