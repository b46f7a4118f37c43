//! `snodo-callgrind`: instructions per request through snodo's in-process
//! dispatch path (`Server::dispatch`, the seam every transport uses),
//! through its Streamable HTTP tower `Service` (headers checked, the body
//! read and the response built, without a socket), through the stdio
//! transport's loop (`Server::serve_lines` over an in-memory pipe) and
//! through a proxy to a backend in the same process (both servers and the
//! client between them), counted by `valgrind --tool=callgrind`, and a gate
//! against a committed baseline.
//!
//! ```text
//! snodo-callgrind count              print the instructions per request
//! snodo-callgrind check BASELINE     fail when one is over its baseline by more than 5 %
//! snodo-callgrind update BASELINE    write the counts as the new baseline
//! snodo-callgrind self-test          check the comparison itself
//! snodo-callgrind measure WORKLOAD N (what runs under valgrind) N requests
//! snodo-callgrind allocations        print the heap allocations per request
//! ```
//!
//! Allocations are counted in process by this binary's global allocator
//! (every `alloc`, `alloc_zeroed` and `realloc`), the same difference of a
//! short and a long run cancelling start-up; `check` gates them beside the
//! instructions, with the same tolerance.
//!
//! Each workload runs twice under callgrind, with [`SHORT`] and with
//! [`LONG`] requests; the difference of the two totals divided by the
//! difference of the counts is the cost of one request, with start-up,
//! server building and exit cancelled out. An instruction count does not
//! depend on what else the machine is doing, so the gate needs no repeats
//! and no tolerance for noise; the 5 % is room for the small variation that
//! hash seeds and allocator state leave.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use snodo::schema::Basic;
use snodo::{Dispatched, TransportInfo};

/// Requests of the short run.
const SHORT: u64 = 1000;
/// Requests of the long run.
const LONG: u64 = 3000;
/// The largest increase over the baseline the gate lets through.
const TOLERANCE: f64 = 0.05;
/// Ids start here so that every id has the same number of digits.
const FIRST_ID: u64 = 1_000_000;

/// The `_meta` every 2026-07-28 request carries (as the load generator sends).
const META: &str = snodo_bench_common::REQUEST_META;

/// `tools/call echo` with request id `id`.
fn echo_body(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"echo-{id}"}},{META}}}}}"#
    )
}

/// The text `echo` must answer request `id` with.
fn echo_expect(id: u64) -> String {
    format!(r#""text":"echo-{id}""#)
}

/// Which seam a workload's requests enter by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    /// `Server::dispatch`, bytes in, a reply out.
    Dispatch,
    /// The tower `Service` of the Streamable HTTP transport: an HTTP request
    /// with the standard MCP headers in, an HTTP response out.
    Service,
    /// `Server::dispatch` of a proxy whose backend (`b`) is the tool set,
    /// reached by a client in the same process.
    Proxy,
    /// `Server::serve_lines`, the stdio transport's loop, over an in-memory
    /// pipe: a line in, the next line read before the next is sent.
    Lines,
}

/// One kind of request measured.
struct Workload {
    name: &'static str,
    what: &'static str,
    validated: bool,
    via: Via,
    /// The request's `Mcp-Method` and `Mcp-Name` headers (the `Service` path).
    headers: (&'static str, Option<&'static str>),
    body: fn(u64) -> String,
    expect: fn(u64) -> String,
}

/// `tools/call b.echo` (through the proxy) with request id `id`.
fn proxied_echo_body(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"b.echo","arguments":{{"text":"echo-{id}"}},{META}}}}}"#
    )
}

/// `tools/call add` with request id `id`.
fn add_body(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}},{META}}}}}"#
    )
}

/// What `add` must answer request `id` with.
fn add_expect(id: u64) -> String {
    format!(r#""sum":{}"#, id + 1)
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "tools_call_echo",
        what: "tools/call echo (text result), no validator",
        validated: false,
        via: Via::Dispatch,
        headers: ("tools/call", Some("echo")),
        body: echo_body,
        expect: echo_expect,
    },
    Workload {
        name: "tools_call_echo_basic",
        what: "tools/call echo, arguments checked by the Basic validator",
        validated: true,
        via: Via::Dispatch,
        headers: ("tools/call", Some("echo")),
        body: echo_body,
        expect: echo_expect,
    },
    Workload {
        name: "tools_call_add",
        what: "tools/call add (structured result with an output schema, no validator: its presence is checked, not its content)",
        validated: false,
        via: Via::Dispatch,
        headers: ("tools/call", Some("add")),
        body: add_body,
        expect: add_expect,
    },
    Workload {
        name: "service_tools_call_add",
        what: "tools/call add through the Streamable HTTP tower Service (standard headers checked, body read, response built; no socket)",
        validated: false,
        via: Via::Service,
        headers: ("tools/call", Some("add")),
        body: add_body,
        expect: add_expect,
    },
    Workload {
        name: "stdio_tools_call_echo",
        what: "tools/call echo through the stdio transport's loop (Server::serve_lines over an in-memory pipe, one request in flight)",
        validated: false,
        via: Via::Lines,
        headers: ("tools/call", Some("echo")),
        body: echo_body,
        expect: echo_expect,
    },
    Workload {
        name: "tools_list",
        what: "tools/list (52 tools, one page)",
        validated: false,
        via: Via::Dispatch,
        headers: ("tools/list", None),
        body: |id| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{META}}}}}"#)
        },
        expect: |_| r#""name":"inert_49""#.to_string(),
    },
    Workload {
        name: "proxy_tools_call_echo",
        what: "tools/call b.echo through a proxy to the tool set in the same process (the proxy's server, its client and the backend's server)",
        validated: false,
        via: Via::Proxy,
        headers: ("tools/call", Some("b.echo")),
        body: proxied_echo_body,
        expect: echo_expect,
    },
];

/// The system allocator, counting the allocations made through it.
struct Counting;

/// Allocations (`alloc`, `alloc_zeroed`, `realloc`) since the start.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed unchanged to the system allocator, which
// upholds `GlobalAlloc`'s contract; the counter has no effect on memory.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's guarantees are the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations per request of `w`, counted in this process.
fn allocations(w: &Workload) -> Result<f64, String> {
    one_request(w, "allocations", |n| measure(w, n))
}

/// What one request costs: the total of a [`LONG`] run less that of a
/// [`SHORT`] one, over the difference of their requests (start-up, server
/// building and exit cancel out).
fn one_request(
    w: &Workload,
    what: &str,
    total: impl Fn(u64) -> Result<u64, String>,
) -> Result<f64, String> {
    let short = total(SHORT)?;
    let long = total(LONG)?;
    let extra = long
        .checked_sub(short)
        .ok_or_else(|| format!("{}: the long run counted fewer {what}", w.name))?;
    Ok(extra as f64 / (LONG - SHORT) as f64)
}

fn workload(name: &str) -> Result<&'static Workload, String> {
    WORKLOADS.iter().find(|w| w.name == name).ok_or_else(|| {
        let names: Vec<&str> = WORKLOADS.iter().map(|w| w.name).collect();
        format!("no workload {name:?} (one of {})", names.join(", "))
    })
}

/// Builds the server and dispatches `n` requests of `w`, checking each reply;
/// returns the heap allocations made while dispatching (the requests and
/// the expected answers are written before, so that only the server's are
/// counted).
fn measure(w: &Workload, n: u64) -> Result<u64, String> {
    let mut builder = bench_snodo_tools::builder();
    if w.validated {
        builder = builder.validator(Basic);
    }
    let server = builder.build().map_err(|e| e.to_string())?;
    let mut runtime = tokio::runtime::Builder::new_current_thread();
    if w.via != Via::Dispatch {
        // The service bounds the time to read a body; the client times its
        // requests; the stdio loop gives requests a grace at end of input,
        // and its run here is bounded.
        runtime.enable_time();
    }
    let runtime = runtime.build().map_err(|e| e.to_string())?;
    let requests: Vec<(u64, String, String)> = (FIRST_ID..FIRST_ID + n)
        .map(|id| (id, (w.body)(id), (w.expect)(id)))
        .collect();
    match w.via {
        Via::Dispatch => runtime.block_on(dispatch_all(&server, &requests)),
        Via::Service => runtime.block_on(serve_all(w, &server, requests)),
        Via::Proxy => runtime.block_on(async {
            let proxy = proxy_of(server).await?;
            dispatch_all(proxy.server(), &requests).await
        }),
        Via::Lines => runtime.block_on(lines_all(&server, &requests)),
    }
}

/// Sends every request as a line to `Server::serve_lines` and reads its
/// answer before sending the next; returns the heap allocations made
/// meanwhile (the lines are built before, the answer read into one buffer).
async fn lines_all(
    server: &snodo::Server,
    requests: &[(u64, String, String)],
) -> Result<u64, String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(64 * 1024);
    let serving = {
        let server = server.clone();
        tokio::spawn(async move {
            let options = snodo::transport::stdio::StdioOptions::new();
            server.serve_lines(server_in, server_out, options).await
        })
    };
    let mut answers = BufReader::new(from_server);
    let mut answer = String::with_capacity(4096);
    let lines: Vec<String> = requests
        .iter()
        .map(|(_, body, _)| format!("{body}\n"))
        .collect();
    // A loop that stalls fails the run: one timer for all the requests,
    // which adds a check of it per wait and no timer per request.
    let bound = std::time::Duration::from_secs(600);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let exchanged = tokio::time::timeout(bound, async {
        for ((id, _, expect), line) in requests.iter().zip(&lines) {
            to_server
                .write_all(line.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            answer.clear();
            answers
                .read_line(&mut answer)
                .await
                .map_err(|e| e.to_string())?;
            check_reply(*id, 200, answer.as_bytes(), expect)?;
        }
        Ok::<(), String>(())
    })
    .await;
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    exchanged.map_err(|_| "the stdio loop stopped answering".to_string())??;
    drop(to_server);
    tokio::time::timeout(bound, serving)
        .await
        .map_err(|_| "the stdio loop did not end with its input".to_string())?
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(allocations)
}

/// A proxy (names under `b.`) whose one backend is `backend`, reached in
/// this process.
async fn proxy_of(backend: snodo::Server) -> Result<snodo::proxy::Proxy, String> {
    use snodo::client::{Client, Target};
    let front = snodo::Server::builder("gateway", "1.0.0")
        .declare(snodo::server::Capability::Tools)
        .build()
        .map_err(|e| e.to_string())?;
    let proxy = snodo::proxy::Proxy::namespaced(front, ".").map_err(|e| e.to_string())?;
    let client = Client::builder()
        .connect(Target::Direct(backend))
        .await
        .map_err(|e| e.to_string())?;
    proxy
        .add_backend("b", client)
        .await
        .map_err(|e| e.to_string())?;
    Ok(proxy)
}

/// Checks one reply's status and text.
fn check_reply(id: u64, status: u16, body: &[u8], expect: &str) -> Result<(), String> {
    let text = std::str::from_utf8(body).map_err(|e| e.to_string())?;
    if status != 200 || !text.contains(expect) || text.contains("isError") {
        return Err(format!("request {id}: unexpected reply {status} {text}"));
    }
    Ok(())
}

/// Dispatches every request through `Server::dispatch`; returns the heap
/// allocations made meanwhile.
async fn dispatch_all(
    server: &snodo::Server,
    requests: &[(u64, String, String)],
) -> Result<u64, String> {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for (id, body, expect) in requests {
        let out = server
            .dispatch(body.as_bytes(), TransportInfo::default())
            .await;
        let Dispatched::Reply(reply) = out else {
            return Err(format!("request {id}: not a plain reply"));
        };
        check_reply(*id, u16::from(reply.status), &reply.body, expect)?;
    }
    Ok(ALLOCATIONS.load(Ordering::Relaxed) - before)
}

/// Sends every request through the Streamable HTTP tower `Service` (the
/// HTTP requests are built before counting); returns the heap allocations
/// made meanwhile.
async fn serve_all(
    w: &Workload,
    server: &snodo::Server,
    requests: Vec<(u64, String, String)>,
) -> Result<u64, String> {
    use http_body_util::{BodyExt, Full};
    use tower_service::Service;
    let mut service = server.http_service();
    let (method, name) = w.headers;
    let mut built = Vec::with_capacity(requests.len());
    for (id, body, expect) in requests {
        let mut request = http::Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", snodo::model::LATEST_VERSION)
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let request = request
            .body(Full::new(bytes::Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        built.push((id, request, expect));
    }
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for (id, request, expect) in built {
        let Ok(response) = service.call(request).await;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("request {id}: the body failed: {e}"))?
            .to_bytes();
        check_reply(id, status, &body, &expect)?;
    }
    Ok(ALLOCATIONS.load(Ordering::Relaxed) - before)
}

/// Instructions callgrind counted for `measure w n` in a child process.
fn instructions(w: &Workload, n: u64) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!("snodo-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!(
            "--callgrind-out-file={}",
            dir.join("callgrind.out").display()
        ))
        .arg(&exe)
        .args(["measure", w.name, &n.to_string()])
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.map_err(|e| format!("valgrind: {e} (is valgrind installed?)"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{} {n} under callgrind failed:\n{stderr}", w.name));
    }
    stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected : ")
                .map(|(_, n)| n.trim().to_owned())
        })
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no instruction total in callgrind's output:\n{stderr}"))
}

/// Instructions per request of `w`.
fn per_request(w: &Workload) -> Result<f64, String> {
    one_request(w, "instructions", |n| instructions(w, n))
}

fn rustc_version() -> String {
    Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn count_all() -> Result<Vec<(&'static Workload, f64)>, String> {
    WORKLOADS
        .iter()
        .map(|w| {
            let n = per_request(w)?;
            eprintln!("  {:<24} {n:>10.0} instructions/request", w.name);
            Ok((w, n))
        })
        .collect()
}

fn update(path: &Path) -> Result<(), String> {
    let counts = count_all()?;
    let mut per = serde_json::Map::new();
    let mut allocs = serde_json::Map::new();
    let mut what = serde_json::Map::new();
    for (w, n) in &counts {
        per.insert(w.name.into(), json!(n.round() as u64));
        allocs.insert(w.name.into(), json!(allocations(w)?.round() as u64));
        what.insert(w.name.into(), json!(w.what));
    }
    let doc = json!({
        "tool": "valgrind --tool=callgrind (instructions, Ir)",
        "rustc": rustc_version(),
        "short_run": SHORT,
        "long_run": LONG,
        "instructions_per_request": per,
        "allocations_per_request": allocs,
        "workloads": what,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// How one count compares with its baseline.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Within the tolerance.
    Ok,
    /// Cheaper by more than the tolerance: the baseline should move too.
    Faster,
    /// Dearer by more than the tolerance: the gate fails.
    Regressed,
}

fn judge(base: f64, now: f64) -> Verdict {
    let change = now / base - 1.0;
    if change > TOLERANCE {
        Verdict::Regressed
    } else if change < -TOLERANCE {
        Verdict::Faster
    } else {
        Verdict::Ok
    }
}

/// Compares with the baseline; `Ok(false)` when a count regressed.
fn check(path: &Path) -> Result<bool, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let baseline: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let rustc = rustc_version();
    if baseline["rustc"].as_str() != Some(rustc.as_str()) {
        println!(
            "note: the baseline was counted with {}, this is {rustc}; a new toolchain moves the counts (update the baseline in its own commit)",
            baseline["rustc"]
        );
    }
    let (mut passed, mut failed) = (0, 0);
    println!(
        "| workload | measure | baseline | now | change | verdict |\n|---|---|--:|--:|--:|---|"
    );
    type Count = fn(&Workload) -> Result<f64, String>;
    let measures: [(&str, &str, Count); 2] = [
        ("instructions_per_request", "instructions", per_request),
        ("allocations_per_request", "allocations", allocations),
    ];
    for (key, measure, count) in measures {
        for w in WORKLOADS {
            let now = count(w)?;
            let Some(base) = baseline[key][w.name].as_f64() else {
                println!(
                    "| {} | {measure} | - | {now:.0} | - | no baseline: FAILED |",
                    w.name
                );
                failed += 1;
                continue;
            };
            let verdict = match judge(base, now) {
                Verdict::Regressed => {
                    failed += 1;
                    "REGRESSED (over 5 %): FAILED"
                }
                Verdict::Faster => {
                    passed += 1;
                    "fewer: update the baseline in the commit that earns it"
                }
                Verdict::Ok => {
                    passed += 1;
                    "ok"
                }
            };
            println!(
                "| {} | {measure} | {base:.0} | {now:.0} | {:+.1} % | {verdict} |",
                w.name,
                (now / base - 1.0) * 100.0
            );
        }
    }
    println!("callgrind: {passed} passed, {failed} failed");
    Ok(failed == 0)
}

/// The comparison's own checks (no valgrind needed): a count 6 % over its
/// baseline fails, 4 % over passes, 10 % under asks for a new baseline.
fn self_test() -> Result<(), String> {
    let cases = [
        (1000.0, 1000.0, Verdict::Ok),
        (1000.0, 1040.0, Verdict::Ok),
        (1000.0, 1060.0, Verdict::Regressed),
        (1000.0, 900.0, Verdict::Faster),
        (1000.0, 960.0, Verdict::Ok),
    ];
    for (base, now, want) in &cases {
        let got = judge(*base, *now);
        if got != *want {
            return Err(format!(
                "judge({base}, {now}) is {got:?}, expected {want:?}"
            ));
        }
    }
    for w in WORKLOADS {
        let id = FIRST_ID;
        serde_json::from_str::<Value>(&(w.body)(id))
            .map_err(|e| format!("{}: the request is not JSON: {e}", w.name))?;
    }
    println!("the gate's comparison holds for {} cases", cases.len());
    Ok(())
}

fn usage() -> String {
    "usage: snodo-callgrind count | allocations | check BASELINE | update BASELINE | self-test | measure WORKLOAD N"
        .into()
}

fn run(args: &[String]) -> Result<bool, String> {
    match args {
        [cmd] if cmd == "count" => {
            for (w, n) in count_all()? {
                println!("{}: {n:.0}", w.name);
            }
            Ok(true)
        }
        [cmd, path] if cmd == "check" => check(Path::new(path)),
        [cmd] if cmd == "allocations" => {
            for w in WORKLOADS {
                println!("{}: {:.1}", w.name, allocations(w)?);
            }
            Ok(true)
        }
        [cmd] if cmd == "self-test" => self_test().map(|()| true),
        [cmd, path] if cmd == "update" => update(Path::new(path)).map(|()| true),
        [cmd, name, n] if cmd == "measure" => {
            let n = n.parse().map_err(|_| format!("not a count: {n:?}"))?;
            measure(workload(name)?, n).map(|_| true)
        }
        _ => Err(usage()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("snodo-callgrind: {e}");
            ExitCode::FAILURE
        }
    }
}
