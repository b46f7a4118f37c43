//! What the bus and the session store are worth to someone who can reach
//! them but holds no key: `snodo demo` nodes joined by Redis, then
//! PostgreSQL, with a plain client of the same server publishing forged and
//! replayed messages on the channel, reading every message and every stored
//! key or row, and tampering with stored records; and the bytes 1 000
//! subscriptions write to the server.
//!
//! Redis must be reachable on 127.0.0.1:6379 and PostgreSQL on
//! 127.0.0.1:5432 (database `test`); `SNODO_SKIP_REDIS=1` and
//! `SNODO_SKIP_POSTGRES=1` skip their halves on a machine without them.

mod nodes_support;
mod support;

use std::net::SocketAddr;
use std::time::Duration;

use nodes_support::counting::Counting;
use nodes_support::raw::{self, Reply};
use nodes_support::tap::{self, Tap};
use nodes_support::{
    Bus, initialize, key_line, logged_node, node_args, send_legacy, temp_dir, write_keys,
};
use serde_json::{Value, json};

/// The largest record a session directory keeps (`MAX_RECORD_BYTES`).
const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// The bus URL of `bus` for one test: PostgreSQL in a schema of its own.
async fn url_for(bus: Bus, name: &str) -> Option<String> {
    let url = bus.url()?;
    Some(match bus {
        Bus::Redis => url,
        Bus::Postgres => tap::schema_url(&url, name).await,
    })
}

/// `url` with its `host:port` replaced by `addr`; and the address it named.
fn through(url: &str, addr: SocketAddr) -> (String, SocketAddr) {
    let start = url.find("://").unwrap() + 3;
    let start = match url[start..].find('@') {
        Some(at) if url[start..start + at].find('/').is_none() => start + at + 1,
        _ => start,
    };
    let end = url[start..].find('/').map_or(url.len(), |i| start + i);
    let upstream: SocketAddr = url[start..end].parse().expect("an IP:PORT in the URL");
    (format!("{}{addr}{}", &url[..start], &url[end..]), upstream)
}

/// Splits a message into the framing before its JSON and the JSON, if it
/// has that form.
fn framing(message: &[u8]) -> Option<(String, Value)> {
    let text = std::str::from_utf8(message).ok()?;
    let start = text.find('{')?;
    let json = serde_json::from_str(&text[start..]).ok()?;
    Some((text[..start].to_string(), json))
}

/// Forged messages against `session`, whose call `call` awaits the answer
/// to the elicitation `asked`: every kind the nodes exchange, in the form of
/// the genuine messages heard (their framing and fields kept, the content
/// changed) and in plain JSON.
fn forgeries(session: &str, asked: &Value, call: u64, heard: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let answer = json!({"jsonrpc": "2.0", "id": asked, "result": {"action": "accept", "content": {"confirm": false}}});
    let changes = [
        json!({"k": "answer", "response": answer}),
        json!({"k": "cancelled", "id": call}),
        json!({"k": "unsubscribed", "uri": "demo://greetings/Grace"}),
        json!({"k": "ended"}),
    ];
    let mut out = Vec::new();
    let mut seq = 1_000_000u64;
    let mut next = || {
        seq += 1;
        seq
    };
    out.push(json!({"o": "f0rged", "s": next(), "e": {"k": "tools"}}).to_string());
    for change in &changes {
        out.push(json!({"o": "f0rged", "s": next(), "sid": session, "c": change}).to_string());
    }
    // A genuine session change, its change swapped (its tag, if any, kept).
    if let Some((frame, genuine)) = heard
        .iter()
        .filter_map(|m| framing(m))
        .find(|(_, v)| v.get("c").is_some())
    {
        for change in &changes {
            let mut forged = genuine.clone();
            forged["c"] = change.clone();
            forged["s"] = next().into();
            out.push(format!("{frame}{forged}"));
        }
        let mut forged = genuine.clone();
        if let Some(map) = forged.as_object_mut() {
            map.retain(|k, _| !matches!(k.as_str(), "c" | "sid" | "w"));
            map.insert("e".into(), json!({"k": "tools"}));
            map.insert("s".into(), next().into());
        }
        out.push(format!("{frame}{forged}"));
    }
    out.into_iter().map(String::into_bytes).collect()
}

/// The genuine message that carried a tools list change, as heard.
fn tools_change(heard: &[Vec<u8>]) -> Option<Vec<u8>> {
    heard
        .iter()
        .rev()
        .find(|m| {
            framing(m)
                .is_some_and(|(_, v)| v.pointer("/e/k").and_then(Value::as_str) == Some("tools"))
        })
        .cloned()
}

async fn subscribe(url: &str, session: &str, id: u64, uri: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}});
    send_legacy(url, session, &body.to_string())
        .await
        .json()
        .await
}

async fn get_stream(url: &str, session: &str) -> Reply {
    raw::request(
        "GET",
        url,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", session),
        ],
        "",
    )
    .await
}

/// Frames of `stream` until it is quiet for `quiet`.
async fn frames_until_quiet(stream: &mut Reply, quiet: Duration) -> Vec<Value> {
    let mut frames = Vec::new();
    while let Ok(Some(frame)) = stream.frame_within(quiet).await {
        frames.push(frame);
    }
    frames
}

async fn a_forged_bus_changes_nothing(bus: Bus, name: &str) {
    let Some(url) = url_for(bus, name).await else {
        return;
    };
    let dir = temp_dir(name);
    let keys = dir.join("keys");
    write_keys(&keys, &[key_line("k1", 1)]);
    let channel = bus.channel(name);
    let tap = Tap::open(bus, &url, &channel).await;
    let args = node_args(&url, &channel, &keys, &[]);
    let (node_a, log_a) = logged_node(&args).await;
    let (node_b, log_b) = logged_node(&args).await;
    let (a, b) = (node_a.url.as_str(), node_b.url.as_str());
    let mut problems: Vec<String> = Vec::new();

    // A session through both nodes: opened on A, finished and subscribed on
    // B, its GET stream on B; a listen stream on B; an elicitation of a
    // call on A awaiting the client's answer.
    let session = initialize(a).await;
    let done = send_legacy(
        b,
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(done.status, 202);
    let subscribed = subscribe(b, &session, 1, "demo://greetings/Grace").await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    let mut get = get_stream(b, &session).await;
    assert_eq!(get.status, 200);
    let mut listening = nodes_support::listen(b, 2, r#"{"toolsListChanged":true}"#).await;
    let announced = nodes_support::announce(a, "tools").await;
    assert_eq!(announced["result"]["isError"], Value::Null, "{announced}");
    let heard = listening.frame().await.expect("the genuine list change");
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    let heard = get.frame().await.expect("the genuine list change");
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    let mut call = send_legacy(
        a,
        &session,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"confirm_delete","arguments":{"path":"/tmp/y"}}}"#,
    )
    .await;
    let ask = call.frame().await.expect("the elicitation");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let genuine = tap.heard();
    assert!(!genuine.is_empty(), "the tap hears the nodes");

    // Forged messages of every kind, and a genuine one replayed.
    for forged in forgeries(&session, &ask["id"], 3, &genuine) {
        tap.publish(&forged).await;
    }
    match tools_change(&genuine) {
        Some(replayed) => tap.publish(&replayed).await,
        None => problems.push("no genuine tools list change was heard on the bus".into()),
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // The elicitation still awaits its answer (neither answered nor
    // cancelled by the forgeries).
    match call.frame_within(Duration::from_secs(1)).await {
        Err(()) => {}
        Ok(frame) => problems.push(format!(
            "the pending call moved on forged messages: {frame:?}"
        )),
    }
    // The listener heard no forged or replayed list change.
    for frame in frames_until_quiet(&mut listening, Duration::from_millis(500)).await {
        if frame["method"] == "notifications/tools/list_changed" {
            problems.push(format!("a listener heard a forged list change: {frame}"));
        }
    }
    // The session is as it was on B: alive, still subscribed.
    let listed = send_legacy(
        b,
        &session,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    )
    .await;
    if listed.status != 200 {
        problems.push(format!("the session is gone on B: {}", listed.status));
    }
    nodes_support::announce(a, "demo://greetings/Grace").await;
    loop {
        match get.frame_within(Duration::from_secs(10)).await {
            Ok(Some(frame)) if frame["params"]["uri"] == "demo://greetings/Grace" => break,
            Ok(Some(frame)) => {
                problems.push(format!("B's GET stream heard a forged message: {frame}"));
            }
            other => {
                problems.push(format!(
                    "B's GET stream lost the subscription or ended: {other:?}"
                ));
                break;
            }
        }
    }
    // The client's own answer, sent to B, completes the call on A.
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": true}}});
    let sent = send_legacy(b, &session, &answer.to_string()).await;
    if sent.status != 202 {
        problems.push(format!("the genuine answer was refused: {}", sent.status));
    }
    match call.frame_within(Duration::from_secs(10)).await {
        Ok(Some(result))
            if result["result"]["content"][0]["text"]
                == "Deleted /tmp/y (not really: this is a demo)" => {}
        other => problems.push(format!(
            "the call did not end with the genuine answer: {other:?}"
        )),
    }
    // Both nodes counted what they refused.
    for (node, log) in [("A", &log_a), ("B", &log_b)] {
        if !log
            .shows_within("bus envelopes refused", Duration::from_secs(5))
            .await
        {
            problems.push(format!("node {node} logged no refused envelope"));
        }
    }
    // No session id on the bus, nor in the store (but in what the tap
    // itself published).
    let heard = tap.heard_from_nodes();
    if let Some(m) = heard
        .iter()
        .find(|m| String::from_utf8_lossy(m).contains(&session))
    {
        problems.push(format!(
            "the session id travels on the bus: {}",
            String::from_utf8_lossy(m)
        ));
    }
    let published = tap.published();
    let stored = tap.stored().await;
    if let Some(entry) = stored
        .iter()
        .find(|e| e.contains(&session) && !published.iter().any(|p| e.contains(p.as_str())))
    {
        problems.push(format!(
            "the session id is stored in clear: {}",
            &entry[..entry.len().min(300)]
        ));
    }
    // A record tampered with in the store is no session at all: its head
    // (the revision), for a node that reads the session for the first time;
    // its state (initialized), for the nodes that hold a copy.
    let (node_c, log_c) = logged_node(&args).await;
    let tampered = tap.tamper_records("2025-11-25", "2025-06-18").await;
    assert!(tampered > 0, "the tap found the stored record");
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let status = send_legacy(&node_c.url, &session, ping).await.status;
    if status != 404 {
        problems.push(format!("node C served a tampered record: {status}"));
    }
    let tampered = tap.tamper_records(r#""n":true"#, r#""n":false"#).await
        + tap
            .tamper_records(r#""initialized":true"#, r#""initialized":false"#)
            .await;
    assert!(tampered > 0, "the tap found the stored state");
    for (node, url) in [("A", a), ("B", b)] {
        let status = send_legacy(url, &session, ping).await.status;
        if status != 404 {
            problems.push(format!("node {node} served a tampered record: {status}"));
        }
    }
    for (node, log) in [("B", &log_b), ("C", &log_c)] {
        if !log
            .shows_within("session record refused", Duration::from_secs(5))
            .await
        {
            problems.push(format!("node {node} logged no refused record"));
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    assert!(
        problems.is_empty(),
        "{} problems:\n- {}",
        problems.len(),
        problems.join("\n- ")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_redis_bus_changes_nothing() {
    a_forged_bus_changes_nothing(Bus::Redis, "forged_redis").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_postgres_bus_changes_nothing() {
    a_forged_bus_changes_nothing(Bus::Postgres, "forged_postgres").await;
}

/// Subscriptions a session asks for in the bounded-bytes test.
const SUBSCRIBES: usize = 1_000;

async fn subscriptions_write_bounded_bytes(bus: Bus, name: &str) {
    let Some(url) = url_for(bus, name).await else {
        return;
    };
    let relay_at: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let (_, upstream) = through(&url, relay_at);
    let relay = Counting::start(upstream).await;
    let (relayed, _) = through(&url, relay.addr);
    let dir = temp_dir(name);
    let keys = dir.join("keys");
    write_keys(&keys, &[key_line("k1", 1)]);
    let channel = bus.channel(name);
    let (node, _log) = logged_node(&node_args(&relayed, &channel, &keys, &[])).await;
    let session = initialize(&node.url).await;
    let done = send_legacy(
        &node.url,
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(done.status, 202);
    let before = relay.sent();
    let started = std::time::Instant::now();
    let (mut accepted, mut refused) = (0usize, Vec::new());
    for i in 0..SUBSCRIBES {
        let uri = format!("demo://greetings/{i:04}-{}", "x".repeat(1000));
        let answer = subscribe(&node.url, &session, i as u64 + 10, &uri).await;
        if answer["result"] == json!({}) {
            accepted += 1;
        } else {
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("subscriptions"),
                "a refused subscription says why: {answer}"
            );
            refused.push(i);
        }
    }
    let written = relay.sent() - before;
    let stored = Tap::open(bus, &url, &channel).await.record_bytes().await;
    eprintln!(
        "{name}: {SUBSCRIBES} subscribes of 1 KB URIs in {:.1} s: {accepted} accepted, {} refused \
         (first refused: {:?}); {written} bytes written to the server; the record holds {stored} bytes",
        started.elapsed().as_secs_f64(),
        refused.len(),
        refused.first(),
    );
    assert!(
        accepted >= 900,
        "most subscriptions fit in the record: {accepted}"
    );
    assert!(
        refused.iter().all(|i| *i >= accepted),
        "once the record is full it stays full: {refused:?}"
    );
    assert!(
        written < 8 * 1024 * 1024,
        "{written} bytes written for {SUBSCRIBES} subscriptions"
    );
    // The record counts its parts' bytes; the server adds its own few per
    // member (a field name, a row's key).
    assert!(
        stored <= MAX_RECORD_BYTES + SUBSCRIBES * 64,
        "the record stays bounded: {stored} bytes"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_write_bounded_bytes_to_redis() {
    subscriptions_write_bounded_bytes(Bus::Redis, "bytes_redis").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_write_bounded_bytes_to_postgres() {
    subscriptions_write_bounded_bytes(Bus::Postgres, "bytes_postgres").await;
}

#[test]
fn a_bus_without_a_keyring_is_refused() {
    // Refused before anything is reached: no server needs to run.
    let out = std::process::Command::new(nodes_support::SNODO)
        .args([
            "demo",
            "--http",
            "127.0.0.1:0",
            "--bus",
            "redis://127.0.0.1:1",
        ])
        .env_remove("SNODO_KEYS")
        .output()
        .expect("the demo runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--bus needs the service's keyring (--keys FILE, or $SNODO_KEYS)"),
        "{stderr}"
    );
}
