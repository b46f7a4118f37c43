//! Server processes: locating and spawning the binaries (pinned with
//! `taskset`), reading their announced URL, their memory from `/proc`, and
//! stopping them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::http_load::Target;

/// One server under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spec {
    /// The name in the report.
    pub(crate) name: &'static str,
    /// Its binary, next to the harness.
    pub(crate) bin: &'static str,
    /// Environment that selects the variant (the same binary serves several).
    pub(crate) env: &'static [(&'static str, &'static str)],
    /// Its validating builds, one per validated workload it runs (arguments
    /// checked against `inputSchema`); none if the library cannot validate.
    pub(crate) validated: &'static [Validating],
    /// Whether it serves stdio.
    pub(crate) stdio: bool,
    /// Whether it implements `subscriptions/listen`.
    pub(crate) listen: bool,
}

/// One validating build of a server: what runs in one validated workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Validating {
    /// The workload it runs in.
    pub(crate) workload: &'static str,
    /// Its binary, next to the harness.
    pub(crate) bin: &'static str,
    /// Environment that selects the validator.
    pub(crate) env: &'static [(&'static str, &'static str)],
    /// What it checks, as the report and the JSON (`validator`) name it:
    /// the validator's name, a comma, what it checks.
    pub(crate) checks: &'static str,
}

/// The like-for-like validated workload: a full JSON Schema validator on
/// each side.
pub(crate) const VALIDATED: &str = "http_call_validated_c64";
/// snodo with its bundled `Basic` subset, against snodo without a validator.
pub(crate) const VALIDATED_BASIC: &str = "http_call_validated_basic_c64";

/// What snodo's `Full` validator checks.
const SNODO_FULL_CHECKS: &str = "Full, the arguments against inputSchema as JSON Schema 2020-12 (the jsonschema crate 0.61; format an annotation)";

/// The servers, in report order (each round runs them in a random order).
pub(crate) const SERVERS: [Spec; 6] = [
    Spec {
        name: "snodo",
        bin: "bench-server-snodo",
        env: &[],
        validated: &[
            Validating {
                workload: VALIDATED,
                bin: "bench-server-snodo-validated",
                env: &[("SNODO_BENCH_VALIDATE", "full")],
                checks: SNODO_FULL_CHECKS,
            },
            Validating {
                workload: VALIDATED_BASIC,
                bin: "bench-server-snodo",
                env: &[("SNODO_BENCH_VALIDATE", "basic")],
                checks: "Basic, the arguments against inputSchema with a keyword subset (type, required, properties, bounds, pattern; no $ref, combinators or format)",
            },
        ],
        stdio: true,
        listen: true,
    },
    Spec {
        name: "snodo-axum",
        bin: "bench-server-snodo",
        env: &[("SNODO_BENCH_AXUM", "1")],
        validated: &[Validating {
            workload: VALIDATED,
            bin: "bench-server-snodo-validated",
            env: &[("SNODO_BENCH_AXUM", "1"), ("SNODO_BENCH_VALIDATE", "full")],
            checks: SNODO_FULL_CHECKS,
        }],
        stdio: false,
        listen: true,
    },
    Spec {
        name: "rmcp",
        bin: "bench-server-rmcp",
        env: &[],
        validated: &[],
        stdio: true,
        listen: true,
    },
    Spec {
        name: "rmcp-doc",
        bin: "bench-server-rmcp",
        env: &[("SNODO_BENCH_RMCP_STYLE", "documented")],
        validated: &[],
        stdio: true,
        listen: false,
    },
    Spec {
        name: "tower-mcp",
        bin: "bench-server-tower-mcp",
        env: &[],
        validated: &[Validating {
            workload: VALIDATED,
            bin: "bench-server-tower-mcp-validated",
            env: &[],
            checks: "schema-validation, the arguments against inputSchema (and a structured result against outputSchema) as JSON Schema 2020-12 (the jsonschema crate 0.58; format asserted)",
        }],
        stdio: true,
        listen: true,
    },
    Spec {
        name: "ceiling",
        bin: "bench-server-ceiling",
        env: &[],
        validated: &[],
        stdio: true,
        listen: false,
    },
];

impl Spec {
    /// Its validating build for `workload`, if it runs there.
    pub(crate) fn validating(&self, workload: &str) -> Option<&'static Validating> {
        self.validated.iter().find(|v| v.workload == workload)
    }
}

/// The packages to build (one cargo invocation each).
pub(crate) const PACKAGES: [&str; 7] = [
    "bench-server-snodo",
    "bench-server-snodo-validated",
    "bench-server-snodo-full",
    "bench-server-rmcp",
    "bench-server-tower-mcp",
    "bench-server-tower-mcp-validated",
    "bench-server-ceiling",
];

/// The snodo server with tasks (in memory, SQLite or PostgreSQL), OAuth and
/// OTLP export: the snodo-only workloads and the telemetry runs. The
/// comparisons with the peers use `bench-server-snodo`, which, like their
/// servers, holds only the tools.
pub(crate) const SNODO_FULL: Spec = Spec {
    name: "snodo",
    bin: "bench-server-snodo-full",
    env: &[],
    validated: &[],
    stdio: true,
    listen: true,
};

impl Spec {
    /// This server as built for the snodo-only workloads: snodo's full
    /// build with the same environment; any other server as it is.
    pub(crate) fn full(self) -> Spec {
        if self.bin == SERVERS[0].bin {
            Spec {
                bin: SNODO_FULL.bin,
                ..self
            }
        } else {
            self
        }
    }
}

/// The snodo server with every `tracing` span and event compiled out (the
/// baseline of `--telemetry`).
pub(crate) const SNODO_BARE: Spec = Spec {
    name: "snodo-bare",
    bin: "bench-server-snodo-bare",
    env: &[],
    validated: &[],
    stdio: true,
    listen: true,
};

/// Where binaries are and how servers get pinned.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    /// The directory holding the server binaries.
    pub(crate) dir: PathBuf,
    /// The CPUs the servers are pinned to (`taskset -c LIST`).
    pub(crate) server_cpu: Option<String>,
    /// Whether server stderr is shown (else discarded).
    pub(crate) show_stderr: bool,
}

impl Launcher {
    fn command(&self, spec: &Spec, arg: &str) -> Command {
        self.command_of(spec.bin, spec.env, arg)
    }

    /// `bin ARG` from the binaries' directory, pinned like the servers.
    pub(crate) fn command_of(&self, bin: &str, env: &[(&str, &str)], arg: &str) -> Command {
        let bin = self.dir.join(bin);
        let mut cmd = match &self.server_cpu {
            Some(cpus) => {
                // taskset execs the server: the child's pid is the server's.
                let mut c = Command::new("taskset");
                c.arg("-c").arg(cpus).arg(&bin);
                c
            }
            None => Command::new(&bin),
        };
        cmd.envs(env.iter().copied());
        cmd.arg(arg)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if self.show_stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true);
        cmd
    }

    /// Starts `spec --http` and waits for its URL line.
    pub(crate) async fn http(&self, spec: &Spec) -> Result<HttpServer, String> {
        self.http_with(spec, "--http").await
    }

    /// Starts `spec --http` protected by OAuth with tokens of `issuer`
    /// (snodo's bench server reads `SNODO_BENCH_ISSUER`; with `every_call`,
    /// `SNODO_BENCH_JWT_EVERY_CALL`: the signature is checked on every call).
    pub(crate) async fn http_protected(
        &self,
        spec: &Spec,
        issuer: &str,
        every_call: bool,
    ) -> Result<HttpServer, String> {
        let spec = spec.full();
        let mut cmd = self.command(&spec, "--http");
        cmd.env("SNODO_BENCH_ISSUER", issuer);
        if every_call {
            cmd.env("SNODO_BENCH_JWT_EVERY_CALL", "1");
        }
        self.http_spawned(spec.bin, cmd).await
    }

    /// Starts `spec --http` with extra environment variables.
    pub(crate) async fn http_env(
        &self,
        spec: &Spec,
        env: &[(&str, String)],
    ) -> Result<HttpServer, String> {
        let mut cmd = self.command(spec, "--http");
        for (k, v) in env {
            cmd.env(k, v);
        }
        self.http_spawned(spec.bin, cmd).await
    }

    /// Starts a validating build (`--http`).
    pub(crate) async fn http_validated(&self, build: &Validating) -> Result<HttpServer, String> {
        self.http_spawned(build.bin, self.command_of(build.bin, build.env, "--http"))
            .await
    }

    /// Starts `spec --http` with its tasks in `store` (`SNODO_BENCH_TASKS`).
    pub(crate) async fn http_tasks(&self, spec: &Spec, store: &str) -> Result<HttpServer, String> {
        let spec = spec.full();
        let mut cmd = self.command(&spec, "--http");
        cmd.env("SNODO_BENCH_TASKS", store);
        self.http_spawned(spec.bin, cmd).await
    }

    /// Starts `spec --http-sessions` (the library's stateful mode for the
    /// initialize era) and waits for its URL line.
    pub(crate) async fn http_sessions(&self, spec: &Spec) -> Result<HttpServer, String> {
        self.http_with(spec, "--http-sessions").await
    }

    async fn http_with(&self, spec: &Spec, mode: &str) -> Result<HttpServer, String> {
        self.http_spawned(spec.bin, self.command(spec, mode)).await
    }

    /// Spawns `cmd` (named `name` in errors) and waits for its URL line.
    pub(crate) async fn http_spawned(
        &self,
        name: &str,
        mut cmd: Command,
    ) -> Result<HttpServer, String> {
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{name}: cannot spawn: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .map_err(|_| format!("{name}: no URL within 20 s"))?
            .map_err(|e| format!("{name}: {e}"))?
            .ok_or_else(|| format!("{name}: exited before printing its URL"))?;
        let url = serde_json::from_str::<serde_json::Value>(&line)
            .ok()
            .and_then(|v| v.get("url").and_then(|u| u.as_str()).map(str::to_string))
            .ok_or_else(|| format!("{name}: unexpected first line {line:?}"))?;
        let target = Target::from_url(&url)?;
        let pid = child.id().ok_or("no pid")?;
        Ok(HttpServer {
            stdin: child.stdin.take(),
            child,
            pid,
            target,
        })
    }

    /// Starts `spec --stdio`.
    pub(crate) fn stdio(&self, spec: &Spec) -> Result<StdioServer, String> {
        self.stdio_spawned(spec.bin, self.command(spec, "--stdio"))
    }

    /// Spawns `cmd` (named `name` in errors) as a stdio server.
    pub(crate) fn stdio_spawned(
        &self,
        name: &str,
        mut cmd: Command,
    ) -> Result<StdioServer, String> {
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{name}: cannot spawn: {e}"))?;
        let pid = child.id().ok_or("no pid")?;
        Ok(StdioServer {
            stdin: Some(child.stdin.take().expect("piped")),
            stdout: Some(BufReader::with_capacity(
                64 * 1024,
                child.stdout.take().expect("piped"),
            )),
            child,
            pid,
            next_id: 1,
        })
    }
}

/// A running HTTP server.
#[derive(Debug)]
pub(crate) struct HttpServer {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its process id.
    pub(crate) pid: u32,
    /// Where it listens.
    pub(crate) target: Target,
}

impl HttpServer {
    /// Closes its stdin (it exits then) and waits; kills it after 3 s.
    pub(crate) async fn stop(mut self) {
        drop(self.stdin.take());
        stop_child(&mut self.child).await;
    }
}

/// A running stdio server.
#[derive(Debug)]
pub(crate) struct StdioServer {
    child: Child,
    /// Its stdin (taken while a workload runs).
    pub(crate) stdin: Option<ChildStdin>,
    /// Its stdout (taken while a workload runs).
    pub(crate) stdout: Option<BufReader<ChildStdout>>,
    /// Its process id.
    pub(crate) pid: u32,
    /// The next JSON-RPC id to use.
    pub(crate) next_id: u64,
}

impl StdioServer {
    /// Closes its stdin (end of input) and waits; kills it after 3 s.
    pub(crate) async fn stop(mut self) {
        drop(self.stdin.take());
        stop_child(&mut self.child).await;
    }
}

async fn stop_child(child: &mut Child) {
    if tokio::time::timeout(Duration::from_secs(3), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// `VmRSS` and `VmHWM` of `pid`, in KiB.
pub(crate) fn memory_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some((
        status_field(&status, "VmRSS:")?,
        status_field(&status, "VmHWM:")?,
    ))
}

/// The number that follows `name` in a `/proc` status text.
fn status_field(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
}

/// The sum over `pid`'s threads of what `read` finds in each one's
/// `/proc/<pid>/task/<tid>/<file>` (threads that already exited are not
/// counted, which is fine for deltas over a run of long-lived threads).
fn per_thread_sum(pid: u32, file: &str, read: impl Fn(&str) -> Option<u64>) -> Option<u64> {
    let mut total = 0u64;
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let path = entry.ok()?.path().join(file);
        if let Ok(text) = std::fs::read_to_string(path) {
            total += read(&text).unwrap_or(0);
        }
    }
    Some(total)
}

/// CPU time `pid` has used, in nanoseconds: the sum over its threads of the
/// first field of `schedstat`.
pub(crate) fn cpu_ns(pid: u32) -> Option<u64> {
    per_thread_sum(pid, "schedstat", |text| {
        text.split_whitespace().next()?.parse().ok()
    })
}

/// How often the scheduler took the CPU from `pid` while it could still run
/// (a woken process preempting it): the sum over its threads of
/// `nonvoluntary_ctxt_switches` in their `status`.
pub(crate) fn preemptions(pid: u32) -> Option<u64> {
    per_thread_sum(pid, "status", |text| {
        status_field(text, "nonvoluntary_ctxt_switches:")
    })
}

/// Pins this process (before it starts any thread) to `cpu` with `taskset -p`;
/// threads started later inherit the mask.
pub(crate) fn pin_self(cpu: usize) -> Result<(), String> {
    pin_task(&cpu.to_string(), &std::process::id().to_string())
}

/// `taskset -p -c CPUS ID`: pins one thread (a process id names its main
/// thread).
fn pin_task(cpus: &str, id: &str) -> Result<(), String> {
    let out = std::process::Command::new("taskset")
        .args(["-p", "-c", cpus, id])
        .output()
        .map_err(|e| format!("taskset: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Whether `taskset` runs here.
pub(crate) fn have_taskset() -> bool {
    std::process::Command::new("taskset")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The directory of the running executable.
pub(crate) fn exe_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "the executable has no directory".to_string())
}

/// The workloads that run snodo's full build ([`SNODO_FULL`]).
pub(crate) const FULL_BUILD_WORKLOADS: [&str; 5] = [
    "http_call_auth_c16",
    "http_call_jwt_sig_c16",
    "http_task_memory_c16",
    "http_task_sqlite_c16",
    "http_task_postgres_c16",
];

/// The packages (of [`PACKAGES`], in its order) that `specs` need to run
/// `workloads`.
pub(crate) fn packages_for(specs: &[Spec], workloads: &[&str]) -> Vec<&'static str> {
    let plain = workloads
        .iter()
        .any(|w| ![VALIDATED, VALIDATED_BASIC].contains(w) && !FULL_BUILD_WORKLOADS.contains(w));
    let full = workloads.iter().any(|w| FULL_BUILD_WORKLOADS.contains(w));
    let mut needed = Vec::new();
    for spec in specs {
        if plain {
            needed.push(spec.bin);
        }
        if full && spec.full().bin != spec.bin {
            needed.push(spec.full().bin);
        }
        needed.extend(
            spec.validated
                .iter()
                .filter(|v| workloads.contains(&v.workload))
                .map(|v| v.bin),
        );
    }
    PACKAGES
        .into_iter()
        .filter(|p| needed.contains(p))
        .collect()
}

/// Builds these servers' binaries, one cargo invocation each.
pub(crate) fn build_these(dir: &Path, specs: &[Spec]) -> Result<(), String> {
    let packages: Vec<&str> = specs.iter().map(|s| s.bin).collect();
    build_packages(dir, &packages)
}

/// Builds these packages (each named as its binary) with the cargo that ran
/// us (if any), in the profile we were built with: `cargo run` builds only
/// the harness. One cargo invocation per package, so that features never
/// unify across libraries (tower-mcp turns on serde_json's
/// `preserve_order`).
pub(crate) fn build_packages(dir: &Path, packages: &[&str]) -> Result<(), String> {
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    let release = dir.file_name().is_some_and(|n| n == "release");
    let started = Instant::now();
    for package in packages {
        let mut cmd = std::process::Command::new(&cargo);
        cmd.args(["build", "--quiet", "-p", package]);
        if release {
            cmd.arg("--release");
        }
        if let Some(manifest_dir) = option_env!("CARGO_MANIFEST_DIR") {
            cmd.current_dir(manifest_dir);
        }
        let status = cmd.status().map_err(|e| format!("cargo build: {e}"))?;
        if !status.success() {
            return Err(format!("building {package} failed"));
        }
    }
    if started.elapsed() > Duration::from_secs(3) {
        eprintln!("built the server binaries in {:.0?}", started.elapsed());
    }
    Ok(())
}

/// Checks that these server binaries exist.
pub(crate) fn check_binaries(dir: &Path, packages: &[&str]) -> Result<(), String> {
    for bin in packages {
        let path = dir.join(bin);
        if !path.is_file() {
            return Err(format!(
                "{} not found (build it with `cargo build --release -p {bin}`)",
                path.display(),
            ));
        }
    }
    Ok(())
}

/// CPU time of a server and of the harness over one measured window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuUse {
    /// The server's CPU time, ns.
    pub(crate) server_ns: u64,
    /// The harness's (load generator's) CPU time, ns.
    pub(crate) harness_ns: u64,
    /// The window's wall time.
    pub(crate) wall: Duration,
    /// How often the server was preempted (see [`preemptions`]).
    pub(crate) server_preempted: u64,
}

/// Reads [`CpuUse`] at the start and the end of a window, from a thread of
/// its own (so that a busy load generator does not delay the readings).
#[derive(Debug)]
pub(crate) struct WindowCpu(std::thread::JoinHandle<Option<CpuUse>>);

impl WindowCpu {
    /// Starts watching `pid` over `warmup` .. `warmup + measure` from now.
    pub(crate) fn spawn(pid: u32, warmup: Duration, measure: Duration) -> Self {
        let from = Instant::now() + warmup;
        let to = from + measure;
        Self(std::thread::spawn(move || {
            std::thread::sleep(from.saturating_duration_since(Instant::now()));
            let (s0, h0, t0) = (cpu_ns(pid)?, cpu_ns(std::process::id())?, Instant::now());
            let p0 = preemptions(pid)?;
            std::thread::sleep(to.saturating_duration_since(Instant::now()));
            let (s1, h1, t1) = (cpu_ns(pid)?, cpu_ns(std::process::id())?, Instant::now());
            let p1 = preemptions(pid)?;
            Some(CpuUse {
                server_ns: s1.saturating_sub(s0),
                harness_ns: h1.saturating_sub(h0),
                wall: t1 - t0,
                server_preempted: p1.saturating_sub(p0),
            })
        }))
    }

    /// The readings (`None` if `/proc` could not be read).
    pub(crate) fn join(self) -> Option<CpuUse> {
        self.0.join().ok().flatten()
    }
}

/// Pins the calling thread to `cpus` (a `taskset` list such as `0,1`).
pub(crate) fn pin_this_thread(cpus: &str) -> Result<(), String> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").map_err(|e| e.to_string())?;
    let tid = stat.split_whitespace().next().ok_or("no thread id")?;
    pin_task(cpus, tid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_spinning_on_one_cpu_preempt_each_other() {
        let before = preemptions(std::process::id()).expect("our own status is readable");
        let until = Instant::now() + Duration::from_millis(300);
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                std::thread::spawn(move || {
                    pin_this_thread("0").unwrap();
                    while Instant::now() < until {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        // Read while they still spin: an ended thread's count is gone.
        std::thread::sleep(Duration::from_millis(250));
        let after = preemptions(std::process::id()).unwrap();
        for s in spinners {
            s.join().unwrap();
        }
        assert!(after > before, "{before} -> {after}");
        assert_eq!(preemptions(u32::MAX), None);
    }

    #[test]
    fn each_validated_workload_runs_the_builds_it_compares() {
        let all = SERVERS.to_vec();
        assert_eq!(
            packages_for(&all, &[VALIDATED]),
            [
                "bench-server-snodo-validated",
                "bench-server-tower-mcp-validated"
            ]
        );
        assert_eq!(
            packages_for(&all, &[VALIDATED_BASIC]),
            ["bench-server-snodo"]
        );
        assert_eq!(
            packages_for(&all[..1], &["http_call_c64", "http_task_memory_c16"]),
            ["bench-server-snodo", "bench-server-snodo-full"]
        );
        // Like for like: every build in the compared workload is a full
        // JSON Schema 2020-12 validator, and each names what it checks.
        let compared: Vec<&Validating> = SERVERS
            .iter()
            .filter_map(|s| s.validating(VALIDATED))
            .collect();
        assert_eq!(compared.len(), 3);
        for build in compared {
            assert!(build.checks.contains("as JSON Schema 2020-12"), "{build:?}");
            assert!(PACKAGES.contains(&build.bin));
        }
        let basic = SERVERS[0].validating(VALIDATED_BASIC).unwrap();
        assert!(basic.checks.starts_with("Basic, "));
        assert_eq!(basic.env, [("SNODO_BENCH_VALIDATE", "basic")]);
        assert!(
            SERVERS[1..]
                .iter()
                .all(|s| s.validating(VALIDATED_BASIC).is_none())
        );
    }
}
