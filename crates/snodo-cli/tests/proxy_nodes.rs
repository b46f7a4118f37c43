//! Three `snodo proxy` replicas joined by a bus (Redis) and one keyring,
//! each in front of its own `snodo demo --stdio`, behind a round-robin
//! balancer: one initialize-era session is served whichever replica each
//! request reaches, an elicitation asked on one is answered through
//! another, and ending the session ends it on all.
//!
//! Redis must be reachable on 127.0.0.1:6379; `SNODO_SKIP_REDIS=1` skips
//! this on a machine without it.

mod nodes_support;
mod support;

use nodes_support::raw;
use nodes_support::{Bus, balancer, initialize, key_line, send_legacy, temp_dir, write_keys};
use serde_json::json;

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_proxy_replicas_on_redis_serve_one_initialize_era_session() {
    let Some(url) = Bus::Redis.url() else { return };
    let dir = temp_dir("proxy-replicas");
    let keys = dir.join("keys");
    write_keys(&keys, &[key_line("k1", 7)]);
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            "[backends.demo]\ncommand = [\"{SNODO}\", \"demo\", \"--stdio\"]\nstderr = \"quiet\"\n"
        ),
    )
    .unwrap();
    let args = vec![
        "--bus".to_string(),
        url,
        "--bus-channel".into(),
        Bus::Redis.channel("proxy"),
        "--keys".into(),
        keys.display().to_string(),
    ];
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(support::spawn_proxy(&args, &config).await);
    }
    let lb = balancer::start(replicas.iter().map(|(_, u)| raw::addr_of(u)).collect()).await;

    let session = initialize(&lb.url).await;
    let mut done = send_legacy(
        &lb.url,
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    let status = done.status;
    assert_eq!(status, 202, "{}", done.text().await);
    let mut listed = send_legacy(
        &lb.url,
        &session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
    .await;
    let listed = listed.json().await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"demo.add") && names.contains(&"demo.confirm_delete"),
        "{listed}"
    );
    for id in 2..5 {
        let mut added = send_legacy(
            &lb.url,
            &session,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"demo.add","arguments":{{"a":{id},"b":1}}}}}}"#
            ),
        )
        .await;
        let added = added.json().await;
        assert_eq!(
            added["result"]["structuredContent"],
            json!({"sum": id + 1}),
            "{added}"
        );
    }
    // The demo asks for a confirmation: asked on one replica, answered
    // through the next.
    let mut call = send_legacy(
        &lb.url,
        &session,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"demo.confirm_delete","arguments":{"path":"/tmp/y"}}}"#,
    )
    .await;
    let ask = call.frame().await.expect("the elicitation");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": true}}});
    let mut sent = send_legacy(&lb.url, &session, &answer.to_string()).await;
    let status = sent.status;
    assert_eq!(status, 202, "{}", sent.text().await);
    let result = call.frame().await.expect("the call's result");
    assert_eq!(result["id"], 5, "{result}");
    assert!(
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Deleted /tmp/y"),
        "{result}"
    );
    let hits: Vec<usize> = lb
        .hits
        .iter()
        .map(|h| h.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    assert!(
        hits.iter().all(|h| *h >= 2),
        "every replica served: {hits:?}"
    );

    // Ended through one replica, ended on all.
    let deleted = raw::request(
        "DELETE",
        &lb.url,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", &session),
        ],
        "",
    )
    .await;
    assert_eq!(deleted.status, 200);
    for id in 10..13 {
        let gone = send_legacy(
            &lb.url,
            &session,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
        )
        .await;
        assert_eq!(gone.status, 404);
    }
    let _ = std::fs::remove_dir_all(dir);
}
