//! Several nodes, one service: three `snodo demo` nodes joined by a bus
//! (Redis, then PostgreSQL) and one keyring, reached directly and through a
//! round-robin balancer, with literal JSON-RPC over HTTP.
//!
//! Redis must be reachable on 127.0.0.1:6379 and PostgreSQL on
//! 127.0.0.1:5432 (database `test`); `SNODO_SKIP_REDIS=1` and
//! `SNODO_SKIP_POSTGRES=1` skip their halves on a machine without them.

mod nodes_support;
mod support;

use std::time::Duration;

use nodes_support::raw::{self, Reply};
use nodes_support::{
    Bus, Node, balancer, cluster, initialize, key_line, send_legacy, send_modern, send_tasks,
    temp_dir, write_keys,
};
use serde_json::{Value, json};

/// A listen stream on `url` for the tool list and the URIs given.
async fn listen(url: &str, id: u64, uris: &[&str]) -> Reply {
    let notifications = if uris.is_empty() {
        r#"{"toolsListChanged":true}"#.to_string()
    } else {
        format!(
            r#"{{"toolsListChanged":true,"resourceSubscriptions":{}}}"#,
            json!(uris)
        )
    };
    nodes_support::listen(url, id, &notifications).await
}

/// Calls the demo's `announce` on `url`; it succeeds.
async fn announce(url: &str, what: &str) {
    let answer = nodes_support::announce(url, what).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
}

/// The next frame of `stream` whose method is `method`.
async fn next_with_method(stream: &mut Reply, method: &str) -> Value {
    loop {
        let frame = stream
            .frame()
            .await
            .unwrap_or_else(|| panic!("the stream ended before {method}"));
        if frame["method"] == method {
            return frame;
        }
    }
}

async fn listen_streams_hear_every_node(nodes: &[Node], lb: &str) {
    let (a, b, c) = (&nodes[0].url, &nodes[1].url, &nodes[2].url);
    let mut on_a = listen(a, 1, &[]).await;
    let mut through_lb = listen(lb, 2, &["demo://greetings/Ada"]).await;
    announce(c, "tools").await;
    let heard = next_with_method(&mut on_a, "notifications/tools/list_changed").await;
    assert_eq!(
        heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    next_with_method(&mut through_lb, "notifications/tools/list_changed").await;
    announce(b, "demo://greetings/Ada").await;
    let updated = next_with_method(&mut through_lb, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], "demo://greetings/Ada");
}

async fn sealed_state_opens_on_another_node(nodes: &[Node]) {
    let (a, b) = (&nodes[0].url, &nodes[1].url);
    let args = r#""name":"confirm_delete","arguments":{"path":"/tmp/x"}"#;
    let mut asked = send_modern(a, 3, "tools/call", Some("confirm_delete"), args).await;
    let asked = asked.json().await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap();
    let retry = format!(
        r#"{args},"inputResponses":{{"confirm":{{"action":"accept","content":{{"confirm":true}}}}}},"requestState":"{state}""#
    );
    let mut done = send_modern(b, 4, "tools/call", Some("confirm_delete"), &retry).await;
    let done = done.json().await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Deleted /tmp/x (not really: this is a demo)",
        "{done}"
    );
}

async fn pages_continue_across_nodes(nodes: &[Node]) {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for turn in 0.. {
        assert!(turn < 10, "the pages end");
        let url = &nodes[turn % nodes.len()].url;
        let params = match &cursor {
            Some(c) => format!(r#""cursor":"{c}""#),
            None => String::new(),
        };
        let mut page = send_modern(url, 5, "tools/list", None, &params).await;
        let page = page.json().await;
        let tools = page["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{page}"));
        assert!(tools.len() <= 2, "pages of two: {page}");
        names.extend(
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(
        names,
        [
            "add",
            "announce",
            "confirm_delete",
            "count",
            "greet",
            "lookup",
            "report"
        ]
    );
}

async fn legacy_sessions_move_between_nodes(nodes: &[Node]) {
    let (a, b, c) = (&nodes[0].url, &nodes[1].url, &nodes[2].url);
    let session = initialize(a).await;
    let mut done = send_legacy(
        b,
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    let status = done.status;
    assert_eq!(status, 202, "{}", done.text().await);
    let mut listed = send_legacy(
        c,
        &session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
    .await;
    let listed = listed.json().await;
    assert_eq!(listed["result"]["tools"][0]["name"], "add", "{listed}");
    assert!(
        listed["result"]["nextCursor"].is_string(),
        "pages of two: {listed}"
    );
    let mut subscribed = send_legacy(
        b,
        &session,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"demo://greetings/Grace"}}"#,
    )
    .await;
    assert_eq!(subscribed.json().await["result"], json!({}));
    let mut get = raw::request(
        "GET",
        b,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", &session),
        ],
        "",
    )
    .await;
    assert_eq!(get.status, 200);
    // The GET stream on B hears what A raises: a subscribed update (and
    // nothing of an unsubscribed one).
    announce(a, "demo://greetings/Linus").await;
    announce(a, "demo://greetings/Grace").await;
    let updated = get.frame().await.expect("the update");
    assert_eq!(
        updated,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "demo://greetings/Grace"}})
    );
    // A request that asks the client (an elicitation) runs on C; the
    // answer, sent to A, reaches C's request.
    let mut call = send_legacy(
        c,
        &session,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"confirm_delete","arguments":{"path":"/tmp/y"}}}"#,
    )
    .await;
    let ask = call.frame().await.expect("the elicitation");
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": true}}});
    let mut sent = send_legacy(a, &session, &answer.to_string()).await;
    let status = sent.status;
    assert_eq!(status, 202, "{}", sent.text().await);
    let result = call.frame().await.expect("the call's result");
    assert_eq!(result["id"], 3);
    assert_eq!(
        result["result"]["content"][0]["text"], "Deleted /tmp/y (not really: this is a demo)",
        "{result}"
    );
    // DELETE on A ends it everywhere: B answers 404 and its GET stream ends.
    let deleted = raw::request(
        "DELETE",
        a,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", &session),
        ],
        "",
    )
    .await;
    assert_eq!(deleted.status, 200);
    let gone = send_legacy(
        b,
        &session,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(gone.status, 404);
    let gone = send_legacy(c, &session, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).await;
    assert_eq!(gone.status, 404);
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), get.frame())
            .await
            .expect("the GET stream ends"),
        None
    );
}

/// `tasks/get` on `url` until the task's status is `status`.
async fn task_reaches(url: &str, id: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut reply = send_tasks(
            url,
            20,
            "tasks/get",
            Some(id),
            &format!(r#""taskId":"{id}""#),
        )
        .await;
        let task = reply.json().await;
        if task["result"]["status"] == status {
            return task["result"].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task never became {status}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn tasks_move_between_nodes(nodes: &[Node]) {
    let (a, b, c) = (&nodes[0].url, &nodes[1].url, &nodes[2].url);
    // Created on A, asks for input; fetched and answered on B, done on C.
    let mut created = send_tasks(
        a,
        10,
        "tools/call",
        Some("confirm_delete"),
        r#""name":"confirm_delete","arguments":{"path":"/tmp/task"}"#,
    )
    .await;
    let created = created.json().await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = task_reaches(b, &id, "input_required").await;
    assert_eq!(
        waiting["inputRequests"]["confirm"]["method"], "elicitation/create",
        "{waiting}"
    );
    let mut updated = send_tasks(
        b,
        11,
        "tasks/update",
        Some(&id),
        &format!(r#""taskId":"{id}","inputResponses":{{"confirm":{{"action":"accept","content":{{"confirm":true}}}}}}"#),
    )
    .await;
    let updated = updated.json().await;
    assert!(updated["result"].is_object(), "{updated}");
    let done = task_reaches(c, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Deleted /tmp/task (not really: this is a demo)",
        "{done}"
    );
    // Created on A, cancelled on B, seen cancelled on C.
    let mut created = send_tasks(
        a,
        12,
        "tools/call",
        Some("report"),
        r#""name":"report","arguments":{"seconds":30}"#,
    )
    .await;
    let created = created.json().await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    task_reaches(b, &id, "working").await;
    let mut cancelled = send_tasks(
        b,
        13,
        "tasks/cancel",
        Some(&id),
        &format!(r#""taskId":"{id}""#),
    )
    .await;
    assert!(cancelled.json().await["result"].is_object());
    task_reaches(c, &id, "cancelled").await;
}

async fn run(bus: Bus, name: &str) {
    let Some(url) = bus.url() else { return };
    let dir = temp_dir(name);
    let keys = dir.join("keys");
    write_keys(&keys, &[key_line("k1", 1), key_line("k2", 2)]);
    let channel = bus.channel(name);
    let tasks = if bus == Bus::Postgres {
        url.clone()
    } else {
        "memory".into()
    };
    let nodes = cluster(
        &url,
        &channel,
        &keys,
        3,
        &["--page-size", "2", "--tasks", &tasks],
    )
    .await;
    let lb = balancer::start(nodes.iter().map(|n| raw::addr_of(&n.url)).collect()).await;
    listen_streams_hear_every_node(&nodes, &lb.url).await;
    sealed_state_opens_on_another_node(&nodes).await;
    pages_continue_across_nodes(&nodes).await;
    legacy_sessions_move_between_nodes(&nodes).await;
    if bus == Bus::Postgres {
        tasks_move_between_nodes(&nodes).await;
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_on_redis_serve_as_one() {
    run(Bus::Redis, "redis").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_on_postgres_serve_as_one() {
    run(Bus::Postgres, "postgres").await;
}
