//! The store: the memory store against the contract, a full store, bounded
//! records, and a task whose node stops.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use snodo::prelude::*;
use snodo::task::{MemoryTaskStore, TaskOptions, TaskStatus, TaskStore, TaskSupport};
use snodo::tool::from_fn;

use crate::requests::{DECLARED, poll_until, request, send, terminal};
use crate::server::server_with;

#[tokio::test]
async fn the_memory_store_keeps_the_store_contract() {
    snodo_test::task_store::run(MemoryTaskStore::new).await;
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

/// Node `node`'s options on `store`, with a lease short enough that a
/// stopped node's task is taken over within a test.
fn short_leases(store: &Arc<dyn TaskStore>, node: &str) -> TaskOptions {
    TaskOptions::shared(store.clone())
        .node_id(node)
        .lease(Duration::from_millis(150))
        .sweep_every(Duration::from_millis(20))
}

/// A current-thread runtime with its timer and I/O drivers.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The id of a 60 s task started on a node whose runtime then stops (its
/// workers and heartbeats die with it).
fn a_task_on_a_stopped_node(options: TaskOptions) -> String {
    let node_a = server_with(options);
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
    rt_a.shutdown_background();
    id
}

#[test]
fn a_node_built_in_a_runtime_that_ends_sweeps_again_where_it_serves() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let options = |node: &str| short_leases(&store, node);
    let id = a_task_on_a_stopped_node(options("node-a"));
    // Node b is built inside a runtime that ends at once (as a program that
    // sets up in one `block_on` and serves in another): its sweeper ends
    // with it, and the runtime that serves starts it again.
    let node_b = current_thread().block_on(async { server_with(options("node-b")) });
    let rt_b = current_thread();
    rt_b.block_on(async {
        // Served over stdio with no line to read: no request reaches it
        // (a `tasks/get` would resolve the task itself), the store alone
        // shows the sweeper at work.
        node_b
            .serve_lines(
                tokio::io::empty(),
                tokio::io::sink(),
                snodo::transport::StdioOptions::new(),
            )
            .await
            .unwrap();
        resolved_without_a_request(&store, &id).await;
    });
}

/// Waits (10 s at most) until the store shows task `id` failed for its
/// stopped node, reading the store only.
async fn resolved_without_a_request(store: &Arc<dyn TaskStore>, id: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let record = store.get(id).await.unwrap().expect("the task is stored");
        if record.status == TaskStatus::Failed {
            let error = record.error.expect("a failed task keeps its error");
            assert_eq!(error["message"], "The node running the task stopped");
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still {:?} without a request",
            record.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn a_node_recovers_a_stopped_nodes_task_before_its_first_request() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let options = |node: &str| short_leases(&store, node);
    let id = a_task_on_a_stopped_node(options("node-a"));

    let rt_b = current_thread();
    rt_b.block_on(async {
        // Built inside the runtime, node b sweeps at once: it is sent no
        // request, and the store alone shows the task resolved.
        let _node_b = server_with(options("node-b"));
        resolved_without_a_request(&store, &id).await;
    });
}

#[test]
fn a_task_whose_node_stops_is_resolved_by_another_node() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new());
    let options = |node: &str| short_leases(&store, node);
    let id = a_task_on_a_stopped_node(options("node-a"));

    let node_b = server_with(options("node-b"));
    let rt_b = current_thread();
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
