//! Which calls become tasks: the extension declared or not, the task methods
//! gated on it, refused calls, the macro's declaration, and the initialize era.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::task::{MemoryTaskStore, TaskOptions, TaskSupport};
use snodo::tool::from_fn;

use crate::requests::{DECLARED, UNDECLARED, poll_until, request, send, terminal};
use crate::server::{server, server_with};

#[tokio::test]
async fn a_declared_call_gets_a_flat_create_task_result_and_the_result_later() {
    let server = server();
    let caps = server.capabilities();
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert!(caps.get("tasks").is_none(), "no v1 tasks capability");

    let created = send(
        &server,
        &request(
            1,
            "tools/call",
            r#"{"name":"sleep","arguments":{"seconds":0.2}}"#,
            DECLARED,
        ),
    )
    .await;
    let r = &created["result"];
    assert_eq!(r["resultType"], "task", "{created}");
    assert_eq!(r["status"], "working");
    let id = r["taskId"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32, "128 random bits in hex");
    assert!(r["createdAt"].as_str().unwrap().ends_with('Z'));
    assert!(r["lastUpdatedAt"].is_string());
    assert_eq!(r["ttlMs"], 3_600_000);
    assert_eq!(r["pollIntervalMs"], 500);
    for absent in [
        "task",
        "result",
        "error",
        "inputRequests",
        "requestState",
        "content",
        "ttl",
        "pollInterval",
    ] {
        assert!(r.get(absent).is_none(), "{absent} in {r}");
    }

    // Readable at once (strong consistency), and working.
    let now = send(
        &server,
        &request(2, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED),
    )
    .await;
    assert_eq!(now["result"]["resultType"], "complete", "{now}");
    assert_eq!(now["result"]["taskId"], id.as_str());
    assert_eq!(now["result"]["status"], "working");

    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("slept 0.2 s as task {id}")
    );
    assert_eq!(done["result"]["resultType"], "complete");
    assert!(
        done["result"].get("_meta").is_none(),
        "no related-task meta on the inlined result"
    );
    assert!(done.get("error").is_none());
}

#[tokio::test]
async fn without_the_extension_optional_tools_run_inline_and_required_ones_are_refused() {
    let server = server();
    let inline = send(
        &server,
        &request(
            1,
            "tools/call",
            r#"{"name":"sleep","arguments":{"seconds":0}}"#,
            UNDECLARED,
        ),
    )
    .await;
    assert_eq!(inline["result"]["resultType"], "complete", "{inline}");
    assert_eq!(
        inline["result"]["content"][0]["text"],
        "slept 0 s as task -"
    );
    assert!(inline["result"].get("taskId").is_none());

    let refused = send(
        &server,
        &request(2, "tools/call", r#"{"name":"only_task"}"#, UNDECLARED),
    )
    .await;
    assert_eq!(
        refused["error"],
        json!({"code": -32021, "message": "Missing required client capability",
               "data": {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}})
    );

    // A never-task tool stays inline even when tasks are allowed, and a
    // legacy `task` hint in params changes nothing.
    let never = send(
        &server,
        &request(
            3,
            "tools/call",
            r#"{"name":"inline","task":{"ttl":60000,"pollInterval":100}}"#,
            DECLARED,
        ),
    )
    .await;
    assert_eq!(
        never["result"]["content"][0]["text"], "task: None",
        "{never}"
    );
}

#[tokio::test]
async fn task_methods_are_gated_before_any_lookup() {
    let server = server();
    for method in ["tasks/get", "tasks/cancel"] {
        let r = send(
            &server,
            &request(1, method, r#"{"taskId":"gate-test"}"#, UNDECLARED),
        )
        .await;
        assert_eq!(r["error"]["code"], -32021, "{method}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
            json!({})
        );
    }
    let r = send(
        &server,
        &request(
            1,
            "tasks/update",
            r#"{"taskId":"gate-test","inputResponses":{}}"#,
            UNDECLARED,
        ),
    )
    .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    for method in ["tasks/result", "tasks/list"] {
        let r = send(&server, &request(1, method, r#"{"taskId":"x"}"#, DECLARED)).await;
        assert_eq!(r["error"]["code"], -32601, "{method} is removed: {r}");
    }
    let r = send(
        &server,
        &request(
            1,
            "tasks/get",
            r#"{"taskId":"tasks-nonexistent-12345"}"#,
            DECLARED,
        ),
    )
    .await;
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Task not found"})
    );
    let r = send(
        &server,
        &request(1, "tasks/get", r#"{"taskId":7}"#, DECLARED),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602);

    // A server without tasks has no such methods.
    let plain = Server::builder("plain", "1")
        .tool(from_fn("t", |_, _| async { Ok(ToolResult::text("t")) }))
        .build()
        .unwrap();
    assert!(plain.capabilities().get("extensions").is_none());
    let r = send(
        &plain,
        &request(1, "tasks/get", r#"{"taskId":"x"}"#, DECLARED),
    )
    .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

#[tokio::test]
async fn a_refused_call_creates_no_task() {
    let store = Arc::new(MemoryTaskStore::new());
    let server = server_with(TaskOptions::shared(store.clone()));
    let refused = send(
        &server,
        &request(
            1,
            "tools/call",
            r#"{"name":"needs_x","arguments":{}}"#,
            DECLARED,
        ),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        refused["result"]["content"][0]["text"],
        "Missing required arguments: x"
    );
    assert!(store.is_empty(), "no task for a refused call");
}

/// Writes a report, as a task when the client allows it.
#[snodo::tool(task = "optional", task_retries = 2)]
async fn report(cx: Context) -> String {
    format!("report from task {}", cx.task_id().unwrap_or("-"))
}

#[tokio::test]
async fn the_macro_declares_task_support_and_retries() {
    use snodo::Tool;
    assert_eq!(report.task_support(), TaskSupport::Optional);
    assert_eq!(report.task_retries(), 2);
    let server = Server::builder("m", "1").tool(report).build().unwrap();
    assert_eq!(
        server.capabilities()["extensions"]["io.modelcontextprotocol/tasks"],
        json!({}),
        "a tool that supports tasks turns them on, in memory"
    );
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"report"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("report from task {id}")
    );
    let inline = send(
        &server,
        &request(2, "tools/call", r#"{"name":"report"}"#, UNDECLARED),
    )
    .await;
    assert_eq!(inline["result"]["content"][0]["text"], "report from task -");
}

#[tokio::test]
async fn the_initialize_era_has_no_tasks() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let server = server();
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server_side);
    tokio::spawn(async move {
        server
            .serve_lines(
                server_in,
                server_out,
                snodo::transport::StdioOptions::default(),
            )
            .await
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut exchange = async |line: &str| -> Value {
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        let got = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&got).unwrap()
    };
    let init = exchange(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(
        init["result"]["capabilities"].get("tasks").is_none(),
        "no v1 tasks capability: {init}"
    );
    assert!(
        init["result"]["capabilities"].get("extensions").is_none(),
        "no extension here: {init}"
    );
    let required = exchange(concat!(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"only_task"}}"#
    ))
    .await;
    // The dialect answers what the initialize era cannot express (-32021)
    // as a tool error.
    assert_eq!(
        required["result"]["isError"], true,
        "a required task tool cannot run here: {required}"
    );
    assert_eq!(
        required["result"]["content"][0]["text"],
        "Missing required client capability"
    );
    let optional = exchange(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"seconds":0}}}"#).await;
    assert_eq!(
        optional["result"]["content"][0]["text"], "slept 0 s as task -",
        "inline: {optional}"
    );
    let get =
        exchange(r#"{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"x"}}"#).await;
    assert_eq!(get["error"]["code"], -32601, "{get}");
}
