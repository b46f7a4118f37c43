//! Two server nodes on one PostgreSQL database: a node stops mid-task, and
//! the other takes the task over within its lease and finishes it.
//!
//! Needs PostgreSQL on 127.0.0.1:5432 (see tests/postgres.rs;
//! `SNODO_SKIP_POSTGRES=1` skips).

use std::time::Duration;

use serde_json::Value;
use snodo::task::{TaskOptions, TaskSupport};
use snodo::tool::{ToolResult, from_fn};
use snodo::{Context, Dispatched, Server, TransportInfo};
use snodo_postgres::PostgresTaskStore;

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

async fn send(server: &Server, method: &str, params: &str) -> Value {
    let params = params.strip_suffix('}').unwrap();
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params},"_meta":{META}}}}}"#
    );
    match server
        .dispatch(text.as_bytes(), TransportInfo::default())
        .await
    {
        Dispatched::Reply(reply) => serde_json::from_slice(&reply.body).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// A node whose `job` runs for `seconds` and says where it ran.
async fn node(url: &str, name: &'static str, seconds: u64) -> Server {
    let store = PostgresTaskStore::connect(url).await.unwrap();
    let job = from_fn("job", move |_, cx: Context| async move {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(seconds)) => {}
            () = cx.cancellation().cancelled() => {}
        }
        Ok(ToolResult::text(format!("finished on {name}")))
    })
    .task_support(TaskSupport::Required)
    .task_retries(1);
    Server::builder("node", "1")
        .tool(job)
        .tasks(
            TaskOptions::new(store)
                .node_id(name)
                .lease(Duration::from_millis(600))
                .sweep_every(Duration::from_millis(50)),
        )
        .build()
        .unwrap()
}

#[test]
fn a_stopped_nodes_task_is_taken_over_and_finished_by_the_other_node() {
    if snodo_test::skip("SNODO_SKIP_POSTGRES") {
        return;
    }
    let base = std::env::var("SNODO_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let url = format!("{base}?options=-csearch_path%3Dsnodo_test_takeover");
    let rt_a = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let id = rt_a.block_on(async {
        let (admin, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
            .await
            .expect("PostgreSQL is reachable on 127.0.0.1:5432 (or set SNODO_SKIP_POSTGRES=1)");
        tokio::spawn(connection);
        admin
            .batch_execute("DROP SCHEMA IF EXISTS snodo_test_takeover CASCADE; CREATE SCHEMA snodo_test_takeover;")
            .await
            .unwrap();
        let a = node(&url, "node-a", 600).await;
        let created = send(&a, "tools/call", r#"{"name":"job"}"#).await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let id = created["result"]["taskId"].as_str().unwrap().to_string();
        // Let node a's worker take up the task before the node stops.
        tokio::time::sleep(Duration::from_millis(300)).await;
        id
    });
    rt_a.shutdown_background();

    let rt_b = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt_b.block_on(async {
        let b = node(&url, "node-b", 0).await;
        let started = std::time::Instant::now();
        let get = format!(r#"{{"taskId":"{id}"}}"#);
        let done = loop {
            let got = send(&b, "tasks/get", &get).await;
            if got["result"]["status"] == "completed" {
                break got;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "not taken over: {got}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "finished on node-b",
            "{done}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "taken over within the lease: {:?}",
            started.elapsed()
        );
    });
}
