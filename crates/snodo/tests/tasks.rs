//! The Tasks extension in process: literal request vectors, every answer
//! checked field by field, and the memory store against the store contract.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::task::{MemoryTaskStore, TaskOptions, TaskStore, TaskSupport};
use snodo::tool::from_fn;
use snodo::{Dispatched, Principal, TransportInfo};

const DECLARED: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{"elicitation":{},
    "extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;
const UNDECLARED: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A request with the given `_meta` text.
fn request(id: u64, method: &str, params: &str, meta: &str) -> String {
    let params = params.strip_suffix('}').expect("params is an object");
    let sep = if params.trim() == "{" { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}{sep}"_meta":{meta}}}}}"#
    )
}

async fn send_as(server: &Server, text: &str, principal: Option<&str>) -> Value {
    let transport = TransportInfo {
        principal: principal.map(Principal::new),
        ..TransportInfo::default()
    };
    match server.dispatch(text.as_bytes(), transport).await {
        Dispatched::Reply(reply) => serde_json::from_slice(&reply.body).unwrap(),
        other => panic!("expected one reply, got {other:?}"),
    }
}

async fn send(server: &Server, text: &str) -> Value {
    send_as(server, text, None).await
}

async fn wait(seconds: f64, cx: &Context) -> bool {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => false,
        () = cx.cancellation().cancelled() => true,
    }
}

fn server_with(options: TaskOptions) -> Server {
    Server::builder("tasks", "1.0.0")
        .tool(
            from_fn("sleep", |args: Arguments, cx: Context| async move {
                let seconds = args.f64("seconds").unwrap_or(0.0);
                if wait(seconds, &cx).await {
                    return Ok(ToolResult::text("saw the cancellation"));
                }
                Ok(ToolResult::text(format!(
                    "slept {seconds} s as task {}",
                    cx.task_id().unwrap_or("-")
                )))
            })
            .input_schema(json!({"type": "object", "properties": {"seconds": {"type": "number"}}}))
            .task_support(TaskSupport::Optional),
        )
        .tool(
            from_fn("only_task", |_, _| async { Ok(ToolResult::text("ran")) })
                .task_support(TaskSupport::Required),
        )
        .tool(from_fn("inline", |_, cx: Context| async move {
            Ok(ToolResult::text(format!("task: {:?}", cx.task_id())))
        }))
        .tool(
            from_fn("confirm", |_, cx: Context| async move {
                Ok(match cx.elicitation("ok") {
                    Some(answer) => ToolResult::text(format!("confirmed: {:?}", answer.bool("ok"))),
                    None => ToolResult::input_required(InputRequired::new().elicit_form(
                        "ok",
                        "Go on?",
                        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                    )),
                })
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            from_fn("reuse_key", |_, cx: Context| async move {
                let _ = cx;
                Ok(ToolResult::input_required(InputRequired::new().elicit_form(
                    "same",
                    "Again?",
                    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                )))
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            from_fn("needs_x", |args: Arguments, _| async move {
                Ok(ToolResult::text(args.str("x").unwrap_or("?").to_string()))
            })
            .input_schema(json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}))
            .task_support(TaskSupport::Required),
        )
        .tasks(options)
        .build()
        .unwrap()
}

fn server() -> Server {
    server_with(TaskOptions::memory())
}

async fn poll_until(server: &Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..200 {
        let got = send(
            server,
            &request(
                90,
                "tasks/get",
                &format!(r#"{{"taskId":"{id}"}}"#),
                DECLARED,
            ),
        )
        .await;
        if done(&got["result"]) {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached the expected state");
}

fn terminal(r: &Value) -> bool {
    matches!(
        r["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}

#[tokio::test]
async fn the_memory_store_keeps_the_store_contract() {
    snodo::task::contract::run(MemoryTaskStore::new).await;
}

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
async fn a_task_belongs_to_its_principal() {
    let server = server();
    let created = send_as(
        &server,
        &request(
            1,
            "tools/call",
            r#"{"name":"sleep","arguments":{"seconds":30}}"#,
            DECLARED,
        ),
        Some("alice"),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let get = request(2, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED);
    let cancel = request(
        3,
        "tasks/cancel",
        &format!(r#"{{"taskId":"{id}"}}"#),
        DECLARED,
    );
    let update = request(
        4,
        "tasks/update",
        &format!(r#"{{"taskId":"{id}","inputResponses":{{}}}}"#),
        DECLARED,
    );
    for (who, text) in [
        (Some("mallory"), &get),
        (None, &get),
        (Some("mallory"), &cancel),
        (Some("mallory"), &update),
    ] {
        let r = send_as(&server, text, who).await;
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Task not found"}),
            "{who:?}: {r}"
        );
    }
    let mine = send_as(&server, &get, Some("alice")).await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    let ack = send_as(&server, &cancel, Some("alice")).await;
    assert_eq!(ack["result"]["resultType"], "complete");
}

#[tokio::test]
async fn cancelling_reaches_the_handler_and_is_idempotent() {
    let server = server();
    let created = send(
        &server,
        &request(
            1,
            "tools/call",
            r#"{"name":"sleep","arguments":{"seconds":60}}"#,
            DECLARED,
        ),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let cancel = request(
        2,
        "tasks/cancel",
        &format!(r#"{{"taskId":"{id}"}}"#),
        DECLARED,
    );
    let ack = send(&server, &cancel).await;
    let result = ack["result"].as_object().unwrap();
    assert_eq!(result["resultType"], "complete", "{ack}");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(!result.contains_key(absent), "{absent} in the ack {ack}");
    }
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "cancelled", "{done}");
    assert!(
        done.get("result").is_none(),
        "a cancelled task carries no result"
    );
    let again = send(&server, &cancel).await;
    assert_eq!(
        again["result"]["resultType"], "complete",
        "cancelling twice acks: {again}"
    );
    let unknown = send(
        &server,
        &request(3, "tasks/cancel", r#"{"taskId":"nope"}"#, DECLARED),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
}

#[tokio::test]
async fn a_task_waiting_for_input_fails_after_its_input_wait() {
    let server = server_with(TaskOptions::memory().input_wait(Duration::from_millis(300)));
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = poll_until(&server, &id, |r| r["status"] != "working").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let failed = poll_until(&server, &id, terminal).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["statusMessage"],
        "No answer to the task's input requests within 0 s"
    );
    // An answer that comes too late finds nothing to answer.
    let late = send(
        &server,
        &request(
            2,
            "tasks/update",
            &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(late["result"]["resultType"], "complete", "{late}");
    assert_eq!(poll_until(&server, &id, |_| true).await["status"], "failed");
}

#[tokio::test]
async fn input_requests_wait_for_tasks_update() {
    let server = server();
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = poll_until(&server, &id, |r| r["status"] != "working").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(
        waiting["inputRequests"]["ok"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        waiting["inputRequests"]["ok"]["params"]["message"],
        "Go on?"
    );
    assert!(waiting.get("requestState").is_none());

    // Keys not outstanding are ignored, values unchecked.
    let ignored = send(
        &server,
        &request(
            2,
            "tasks/update",
            &format!(
                r#"{{"taskId":"{id}","inputResponses":{{"unknown-key":{{"ignored":true}}}}}}"#
            ),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(ignored["result"]["resultType"], "complete", "{ignored}");
    let still = poll_until(&server, &id, |_| true).await;
    assert_eq!(still["status"], "input_required");

    let bad = send(
        &server,
        &request(
            3,
            "tasks/update",
            &format!(r#"{{"taskId":"{id}","inputResponses":[]}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    // A malformed answer to an outstanding request is refused whole and the
    // question stays open (it used to be taken, and the handler's asking
    // again failed the task as a reused key).
    for malformed in [
        r#""yes""#,
        r#"{"action":"maybe"}"#,
        r#"{"action":"accept","content":{"ok":{"deep":1}}}"#,
    ] {
        let refused = send(
            &server,
            &request(
                3,
                "tasks/update",
                &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{malformed}}}}}"#),
                DECLARED,
            ),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("inputResponses.ok is not an answer to \"elicitation/create\""),
            "{refused}"
        );
    }
    let still = poll_until(&server, &id, |_| true).await;
    assert_eq!(still["status"], "input_required");

    let answered = send(&server, &request(4, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED)).await;
    assert_eq!(answered["result"]["resultType"], "complete", "{answered}");
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "confirmed: Some(true)"
    );

    // An update once the task waits on nothing is acked and changes nothing.
    let late = send(
        &server,
        &request(
            5,
            "tasks/update",
            &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"decline"}}}}}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(late["result"]["resultType"], "complete", "{late}");
    assert_eq!(poll_until(&server, &id, |_| true).await, done);
}

#[tokio::test]
async fn a_handler_that_asks_for_a_used_key_again_fails_its_task() {
    let server = server();
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"reuse_key"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    poll_until(&server, &id, |r| r["status"] == "input_required").await;
    send(&server, &request(2, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"same":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED)).await;
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(done["error"]["message"], "Input request key reused");
    assert_eq!(done["statusMessage"], "Input request key reused");
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

#[tokio::test]
async fn a_full_store_refuses_new_tasks_with_a_retryable_error_and_expired_tasks_are_purged() {
    let store = Arc::new(MemoryTaskStore::with_capacity(100));
    let server = server_with(
        TaskOptions::shared(store.clone())
            .ttl(Some(Duration::from_millis(1_000)))
            .sweep_every(Duration::from_millis(20)),
    );
    let call = request(
        1,
        "tools/call",
        r#"{"name":"sleep","arguments":{"seconds":60}}"#,
        DECLARED,
    );
    for _ in 0..100 {
        let r = send(&server, &call).await;
        assert_eq!(r["result"]["resultType"], "task", "{r}");
    }
    let full = send(&server, &call).await;
    assert_eq!(full["error"]["code"], -32603, "{full}");
    assert_eq!(
        full["error"]["data"],
        json!({"retryable": true, "limit": 100})
    );
    // Past their time to live the tasks read as missing and are purged.
    tokio::time::sleep(Duration::from_millis(1_600)).await;
    assert!(
        store.is_empty(),
        "expired tasks purged: {} left",
        store.len()
    );
    let again = send(&server, &call).await;
    assert_eq!(again["result"]["resultType"], "task", "room again: {again}");
}

#[tokio::test]
async fn principals_are_told_apart_by_issuer_and_by_client_or_user() {
    let server = server();
    let principal = |issuer: &str, subject: &str, client: &str| {
        let mut p = Principal::new(subject);
        p.issuer = Some(issuer.to_string());
        p.client_id = Some(client.to_string());
        p
    };
    let as_ = async |p: &Principal, text: &str| {
        let transport = TransportInfo {
            principal: Some(p.clone()),
            ..TransportInfo::default()
        };
        match server.dispatch(text.as_bytes(), transport).await {
            Dispatched::Reply(reply) => serde_json::from_slice::<Value>(&reply.body).unwrap(),
            other => panic!("expected one reply, got {other:?}"),
        }
    };
    // A user whose subject is "svc", signed in through the client "web".
    let user = principal("https://idp.example", "svc", "web");
    let call = request(
        1,
        "tools/call",
        r#"{"name":"sleep","arguments":{"seconds":0}}"#,
        DECLARED,
    );
    let created = as_(&user, &call).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let get = request(2, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED);
    assert!(as_(&user, &get).await["result"]["taskId"] == id.as_str());
    // The client "svc" acting for itself, and "svc" of another issuer, are
    // other principals.
    for other in [
        principal("https://idp.example", "svc", "svc"),
        principal("https://other.example", "svc", "web"),
    ] {
        let got = as_(&other, &get).await;
        assert_eq!(
            got["error"]["message"], "Task not found",
            "{other:?}: {got}"
        );
    }
}

#[tokio::test]
async fn a_full_store_keeps_finished_results_until_their_time_to_live() {
    let store = Arc::new(MemoryTaskStore::with_capacity(2_000));
    let server = server_with(TaskOptions::shared(store.clone()).max_per_share(10_000));
    let call = request(
        1,
        "tools/call",
        r#"{"name":"sleep","arguments":{"seconds":0}}"#,
        DECLARED,
    );
    let first = send(&server, &call).await;
    let first = first["result"]["taskId"].as_str().unwrap().to_string();
    assert_eq!(
        poll_until(&server, &first, terminal).await["status"],
        "completed"
    );
    let mut refused = 0;
    for _ in 0..2_500 {
        let r = send(&server, &call).await;
        if r["error"]["code"] == -32603 {
            assert_eq!(
                r["error"]["data"],
                json!({"retryable": true, "limit": 2_000})
            );
            refused += 1;
        }
    }
    assert_eq!(refused, 501, "the store holds 2 000 tasks");
    assert_eq!(store.len(), 2_000);
    let kept = poll_until(&server, &first, terminal).await;
    assert_eq!(
        kept["status"], "completed",
        "the oldest result is still there"
    );
}

/// `tools/call` of a finished-at-once task as `who`; the reply.
async fn quick_task_as(server: &Server, who: &str) -> Value {
    let call = request(
        1,
        "tools/call",
        r#"{"name":"sleep","arguments":{"seconds":0}}"#,
        DECLARED,
    );
    send_as(server, &call, Some(who)).await
}

#[tokio::test]
async fn a_flood_of_ten_thousand_tasks_from_one_principal_leaves_the_others_their_results_and_room()
{
    let server = server_with(TaskOptions::memory());
    let bob = quick_task_as(&server, "bob").await;
    let bob = bob["result"]["taskId"].as_str().unwrap().to_string();
    let get = request(
        2,
        "tasks/get",
        &format!(r#"{{"taskId":"{bob}"}}"#),
        DECLARED,
    );
    let done = async |server: &Server| send_as(server, &get, Some("bob")).await;
    for _ in 0..100 {
        if done(&server).await["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut created = 0;
    for _ in 0..10_000 {
        let r = quick_task_as(&server, "mallory").await;
        if r["result"]["resultType"] == "task" {
            created += 1;
            continue;
        }
        assert_eq!(r["error"]["code"], -32603, "{r}");
        let data = &r["error"]["data"];
        assert_eq!(
            (&data["retryable"], &data["limit"]),
            (&json!(true), &json!(1_000))
        );
        // The oldest of the principal's tasks expires an hour after it began.
        let after = data["retryAfterMs"].as_u64().unwrap();
        assert!((3_000_000..=3_600_000).contains(&after), "{after}");
    }
    assert_eq!(created, snodo::task::DEFAULT_MAX_TASKS_PER_SHARE);
    let kept = done(&server).await;
    assert_eq!(
        kept["result"]["status"], "completed",
        "bob's result stays: {kept}"
    );
    let again = quick_task_as(&server, "bob").await;
    assert_eq!(
        again["result"]["resultType"], "task",
        "bob has room: {again}"
    );
}

#[tokio::test]
async fn task_records_are_bounded_in_size() {
    use snodo::task::{MAX_TASK_ANSWER_BYTES, MAX_TASK_RESULT_BYTES, MAX_TASK_WORK_BYTES};
    assert_eq!(MAX_TASK_WORK_BYTES, 256 * 1024);
    assert_eq!(MAX_TASK_ANSWER_BYTES, 256 * 1024);
    assert_eq!(MAX_TASK_RESULT_BYTES, 1024 * 1024);

    // Arguments over 256 KiB: -32602, and no task.
    let server = server_with(TaskOptions::memory());
    let big = "x".repeat(MAX_TASK_WORK_BYTES);
    let call = request(
        1,
        "tools/call",
        &format!(r#"{{"name":"sleep","arguments":{{"seconds":0,"pad":"{big}"}}}}"#),
        DECLARED,
    );
    let r = send(&server, &call).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 262144 bytes"),
        "{r}"
    );

    // Answers over 256 KiB: -32602, nothing taken, the question still open.
    let created = send(
        &server,
        &request(2, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = poll_until(&server, &id, |r| r["status"] != "working").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let pad = "x".repeat(MAX_TASK_ANSWER_BYTES);
    let r = send(&server, &request(3, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true,"pad":"{pad}"}}}}}}}}"#), DECLARED)).await;
    assert_eq!(
        r["error"],
        json!({"code": -32602,
            "message": "inputResponses would take the task's answers past 262144 bytes"}),
        "{r:.200}"
    );
    let still = poll_until(&server, &id, |_| true).await;
    assert_eq!(still["status"], "input_required", "{still}");
    let r = send(&server, &request(4, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED)).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "confirmed: Some(true)"
    );

    // An outcome over 1 MiB: the task ends failed with -32603.
    let server = Server::builder("tasks", "1.0.0")
        .tool(
            from_fn("huge", |_, _| async {
                Ok(ToolResult::text("x".repeat(MAX_TASK_RESULT_BYTES)))
            })
            .task_support(TaskSupport::Required),
        )
        .tasks(TaskOptions::memory())
        .build()
        .unwrap();
    let created = send(
        &server,
        &request(5, "tools/call", r#"{"name":"huge"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "failed", "{done:.200}");
    assert_eq!(
        done["error"],
        json!({"code": -32603,
            "message": "The task's outcome is larger than 1048576 bytes, the most a task keeps"}),
        "{done:.200}"
    );
    assert!(done.get("result").is_none(), "{done:.200}");
}

#[test]
fn a_task_whose_node_stops_is_resolved_by_another_node() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let options = |node: &str| {
        TaskOptions::shared(store.clone())
            .node_id(node)
            .lease(Duration::from_millis(150))
            .sweep_every(Duration::from_millis(20))
    };
    let node_a = server_with(options("node-a"));
    let rt_a = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let id = rt_a.block_on(async {
        let r = send(
            &node_a,
            &request(
                1,
                "tools/call",
                r#"{"name":"sleep","arguments":{"seconds":60}}"#,
                DECLARED,
            ),
        )
        .await;
        r["result"]["taskId"].as_str().unwrap().to_string()
    });
    // The node stops: its workers and heartbeats die with its runtime.
    rt_a.shutdown_background();

    let node_b = server_with(options("node-b"));
    let rt_b = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt_b.block_on(async {
        // Any request starts node b's sweeper.
        let r = send(
            &node_b,
            &request(2, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED),
        )
        .await;
        assert_eq!(r["result"]["status"], "working", "{r}");
        let done = poll_until(&node_b, &id, terminal).await;
        assert_eq!(done["status"], "failed", "{done}");
        assert_eq!(
            done["error"]["message"],
            "The node running the task stopped"
        );
    });
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
async fn listeners_of_a_task_get_its_status_notifications() {
    use futures_util::StreamExt;
    let server = server();
    let created = send_as(
        &server,
        &request(1, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
        Some("alice"),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();

    let undeclared = send(
        &server,
        &request(
            2,
            "subscriptions/listen",
            &format!(r#"{{"notifications":{{"taskIds":["{id}"]}}}}"#),
            UNDECLARED,
        ),
    )
    .await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");

    let listen = request(
        3,
        "subscriptions/listen",
        &format!(r#"{{"notifications":{{"taskIds":["{id}"]}}}}"#),
        DECLARED,
    );
    let open = |who: &'static str| {
        let server = server.clone();
        let listen = listen.clone();
        async move {
            let transport = TransportInfo {
                principal: Some(Principal::new(who)),
                ..TransportInfo::default()
            };
            match server.dispatch(listen.as_bytes(), transport).await {
                Dispatched::Stream(stream) => stream,
                other => panic!("expected a stream, got {other:?}"),
            }
        }
    };
    let mut mine = open("alice").await;
    let mut theirs = open("mallory").await;
    let frame = |bytes: bytes::Bytes| serde_json::from_slice::<Value>(&bytes).unwrap();
    let ack = frame(mine.next().await.unwrap());
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );
    let _ = theirs.next().await.unwrap();

    // The task asks for input: the listener sees input_required with the request.
    let waiting = tokio::time::timeout(Duration::from_secs(5), mine.next())
        .await
        .expect("a notification")
        .unwrap();
    let waiting = frame(waiting);
    assert_eq!(waiting["method"], "notifications/tasks", "{waiting}");
    assert_eq!(waiting["params"]["taskId"], id.as_str());
    assert_eq!(waiting["params"]["status"], "input_required");
    assert_eq!(
        waiting["params"]["inputRequests"]["ok"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        waiting["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );

    send_as(&server, &request(4, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED), Some("alice")).await;
    let mut last = Value::Null;
    while last["params"]["status"] != "completed" {
        let next = tokio::time::timeout(Duration::from_secs(5), mine.next())
            .await
            .expect("a notification")
            .unwrap();
        last = frame(next);
        assert_eq!(last["method"], "notifications/tasks", "{last}");
    }
    assert_eq!(
        last["params"]["result"]["content"][0]["text"],
        "confirmed: Some(true)"
    );
    // Another principal's listener hears nothing of it.
    let nothing = tokio::time::timeout(Duration::from_millis(200), theirs.next()).await;
    assert!(
        nothing.is_err(),
        "another principal's listener got {nothing:?}"
    );
}

#[tokio::test]
async fn the_handler_sees_the_cancellation() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let saw = Arc::new(AtomicBool::new(false));
    let flag = saw.clone();
    let server = Server::builder("c", "1")
        .tool(
            from_fn("wait", move |_, cx: Context| {
                let flag = flag.clone();
                async move {
                    cx.cancellation().cancelled().await;
                    flag.store(true, Ordering::SeqCst);
                    Ok(ToolResult::text("stopped"))
                }
            })
            .task_support(TaskSupport::Required),
        )
        .build()
        .unwrap();
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"wait"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!saw.load(Ordering::SeqCst), "nothing cancelled yet");
    send(
        &server,
        &request(
            2,
            "tasks/cancel",
            &format!(r#"{{"taskId":"{id}"}}"#),
            DECLARED,
        ),
    )
    .await;
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "cancelled");
    assert!(
        saw.load(Ordering::SeqCst),
        "the handler returned because it saw the cancellation"
    );
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

/// A handler's life as the tests see it: how far it got, and whether it
/// was dropped.
#[derive(Clone, Default)]
struct Life {
    ticks: Arc<std::sync::atomic::AtomicUsize>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Life {
    fn ticks(&self) -> usize {
        self.ticks.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn dropped(&self) -> bool {
        self.dropped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits (boundedly) until the handler ticks past `ticks`.
    async fn ticks_past(&self, ticks: usize) {
        for _ in 0..500 {
            if self.ticks() > ticks {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the handler stopped ticking at {ticks}");
    }
}

/// Marks its handler dropped.
struct DropMark(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropMark {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A server whose task tool `stubborn` ignores cancellation: it ticks every
/// 10 ms for a minute.
fn stubborn_server(options: TaskOptions, life: &Life) -> Server {
    let life = life.clone();
    Server::builder("stubborn", "1")
        .tool(
            from_fn("stubborn", move |_, _cx: Context| {
                let life = life.clone();
                async move {
                    let _mark = DropMark(life.dropped.clone());
                    for _ in 0..6000 {
                        life.ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    Ok(ToolResult::text("ran to the end"))
                }
            })
            .task_support(TaskSupport::Required),
        )
        .tasks(options)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_handler_that_ignores_cancellation_is_dropped_after_the_grace_and_its_task_cancelled() {
    let life = Life::default();
    let server = stubborn_server(
        TaskOptions::memory().cancel_grace(Duration::from_secs(1)),
        &life,
    );
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"stubborn"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    life.ticks_past(0).await;
    let ack = send(
        &server,
        &request(
            2,
            "tasks/cancel",
            &format!(r#"{{"taskId":"{id}"}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    // Within the grace the handler goes on, and the task is still working.
    life.ticks_past(life.ticks()).await;
    assert!(!life.dropped(), "dropped before the grace ran out");
    let during = send(
        &server,
        &request(3, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED),
    )
    .await;
    assert_eq!(during["result"]["status"], "working", "{during}");
    // Then it is dropped, and the task is cancelled.
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "cancelled", "{done}");
    assert!(done.get("result").is_none() && done.get("error").is_none());
    assert!(life.dropped(), "the handler was dropped");
    let stopped_at = life.ticks();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        life.ticks(),
        stopped_at,
        "nothing runs the handler any more"
    );
}

#[tokio::test]
async fn a_handler_that_runs_past_max_runtime_fails_its_task_with_32603() {
    let life = Life::default();
    let server = stubborn_server(
        TaskOptions::memory().max_runtime(Duration::from_millis(300)),
        &life,
    );
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"stubborn"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    life.ticks_past(0).await;
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(done["error"]["message"], "The task ran past its time limit");
    assert_eq!(done["statusMessage"], "The task ran past its time limit");
    assert!(done.get("result").is_none());
    assert!(life.dropped(), "the handler was dropped");
    let stopped_at = life.ticks();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        life.ticks(),
        stopped_at,
        "nothing runs the handler any more"
    );
}
