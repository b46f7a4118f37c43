//! Tasks through the demo and the CLI: `snodo call --task`, `snodo tasks`,
//! `snodo task [--cancel]`; a SQLite-backed demo killed with SIGKILL and
//! restarted still answers for its tasks; two demos on one PostgreSQL
//! database, one killed mid-task, the other resolving its task.
//!
//! The PostgreSQL test needs the server on 127.0.0.1:5432 (database
//! `test`); `SNODO_SKIP_POSTGRES=1` skips it.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use snodo::Client;
use snodo::client::{RequestOptions, TaskCall};
use snodo::task::TaskStatus;
use tokio::process::{Child, Command};

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snodo-cli-tasks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `snodo demo --http 127.0.0.1:0 --tasks STORE --keys FILE` and its URL
/// (a durable store needs keys that outlive the process).
async fn demo(store: &str) -> (Child, String) {
    let keys = std::env::temp_dir().join(format!("snodo-cli-tasks-{}.keys", std::process::id()));
    std::fs::write(&keys, "k1=YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=\n").unwrap();
    support::spawn_demo(&["--tasks", store, "--keys", keys.to_str().unwrap()]).await
}

/// A client command with its own config folder: exit code, stdout, stderr.
async fn snodo(config: &Path, args: &[&str]) -> (i32, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(SNODO)
            .args(args)
            .env("SNODO_CONFIG_DIR", config)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the command ends")
    .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn start_task(url: &str, seconds: u64) -> String {
    let client = Client::http(url).await.unwrap();
    match client
        .call_tool_as_task("report", json!({"seconds": seconds}), RequestOptions::new())
        .await
        .unwrap()
    {
        TaskCall::Task(task) => {
            assert_eq!(task.status, TaskStatus::Working);
            task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_runs_lists_shows_and_cancels_tasks() {
    let dir = temp_dir("cli");
    let (_demo, url) = demo("memory").await;

    let (code, out, err) = snodo(
        &dir,
        &["call", &url, "report", "seconds=2", "--task", "--json"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Report ready after 2 s (task "), "{text}");
    let id = text
        .trim_end_matches(')')
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();

    // Without --task the same tool runs inline.
    let (code, out, _) = snodo(&dir, &["call", &url, "report", "seconds=1"]).await;
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "Report ready after 1 s");

    let (code, out, _) = snodo(&dir, &["tasks", &url, "--json"]).await;
    assert_eq!(code, 0);
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["tasks"][0]["taskId"], id.as_str(), "{listed}");
    assert_eq!(listed["tasks"][0]["status"], "completed");
    assert_eq!(listed["tasks"][0]["tool"], "report");
    assert_eq!(
        listed["tasks"][0]["statusMessage"],
        "Writing the report (2/2)"
    );

    let running = start_task(&url, 30).await;
    let (code, out, _) = snodo(&dir, &["task", &url, &running, "--json"]).await;
    assert_eq!(code, 0);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["status"],
        "working"
    );
    let (code, _, _) = snodo(&dir, &["task", &url, &running, "--cancel"]).await;
    assert!(code == 0 || code == 3, "cancel answered: {code}");
    let mut status = String::new();
    for _ in 0..50 {
        let (_, out, _) = snodo(&dir, &["task", &url, &running, "--json"]).await;
        status = serde_json::from_str::<Value>(&out).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string();
        if status == "cancelled" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, "cancelled");
    let (code, _, err) = snodo(&dir, &["task", &url, &running]).await;
    assert_eq!(code, 3, "a cancelled task exits 3: {err}");

    let (code, _, err) = snodo(&dir, &["task", &url, "no-such-task"]).await;
    assert_eq!(code, 3, "an unknown task is a JSON-RPC error: {err}");
    assert!(err.contains("Task not found"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_demo_killed_mid_task_answers_for_its_tasks_after_a_restart() {
    let dir = temp_dir("sqlite");
    let store = format!("sqlite:{}", dir.join("tasks.db").display());
    let (mut first, url) = demo(&store).await;
    let done = start_task(&url, 1).await;
    let client = Client::http(&url).await.unwrap();
    let result = client
        .wait_task(&done, snodo::client::TaskWait::new(), |_| {})
        .await
        .unwrap();
    assert!(result.text_content().starts_with("Report ready after 1 s"));
    let cut = start_task(&url, 60).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    first.kill().await.unwrap(); // SIGKILL: nothing is flushed on the way out
    first.wait().await.unwrap();

    let (_second, url) = demo(&store).await;
    let client = Client::http(&url).await.unwrap();
    let kept = client
        .get_task(&done)
        .await
        .expect("the finished task survives");
    assert_eq!(kept.status, TaskStatus::Completed);
    assert!(
        kept.result
            .unwrap()
            .text_content()
            .starts_with("Report ready after 1 s")
    );
    let cut_now = client
        .get_task(&cut)
        .await
        .expect("the interrupted task survives");
    assert_eq!(
        cut_now.status,
        TaskStatus::Working,
        "its lease has not lapsed yet"
    );
    // Once its lease lapses (15 s), the restarted node fails it: the
    // report tool is not retried.
    let failed = loop {
        let t = client.get_task(&cut).await.unwrap();
        if t.status != TaskStatus::Working {
            break t;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(
        failed.error.unwrap()["message"],
        "The node running the task stopped"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_demos_on_postgres_one_killed_mid_task() {
    if snodo_test::skip("SNODO_SKIP_POSTGRES") {
        return;
    }
    let base = std::env::var("SNODO_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let (admin, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL is not reachable at {base} ({e}); start it, or set SNODO_SKIP_POSTGRES=1"));
    tokio::spawn(connection);
    admin
        .batch_execute(
            "DROP SCHEMA IF EXISTS snodo_test_cli CASCADE; CREATE SCHEMA snodo_test_cli;",
        )
        .await
        .unwrap();
    let store = format!("{base}?options=-csearch_path%3Dsnodo_test_cli");
    let (mut a, url_a) = demo(&store).await;
    let (_b, url_b) = demo(&store).await;
    let on_a = start_task(&url_a, 60).await;
    let on_b = start_task(&url_b, 1).await;
    let b = Client::http(&url_b).await.unwrap();
    assert_eq!(
        b.get_task(&on_a).await.unwrap().status,
        TaskStatus::Working,
        "b reads a's task"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.kill().await.unwrap();
    a.wait().await.unwrap();
    let done = b
        .wait_task(&on_b, snodo::client::TaskWait::new(), |_| {})
        .await
        .unwrap();
    assert!(done.text_content().starts_with("Report ready after 1 s"));
    let started = std::time::Instant::now();
    let resolved = loop {
        let t = b.get_task(&on_a).await.unwrap();
        if t.status != TaskStatus::Working {
            break t;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "b never resolved a's task"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(
        resolved.status,
        TaskStatus::Failed,
        "resolved by b within the lease"
    );
    assert_eq!(
        resolved.error.unwrap()["message"],
        "The node running the task stopped"
    );
}

#[tokio::test]
async fn a_durable_store_without_lasting_keys_is_refused_with_the_reason() {
    let dir = temp_dir("no-keys");
    let store = format!("sqlite:{}", dir.join("tasks.db").display());
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        Command::new(SNODO)
            .args(["demo", "--http", "127.0.0.1:0", "--tasks", &store])
            .env_remove("SNODO_KEYS")
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the demo refuses at once")
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("keeps tasks across restarts") && err.contains("--keys"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
