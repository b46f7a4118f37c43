//! The store contract against a SQLite file, and a reopened file keeping
//! its tasks.

use std::time::Duration;

use serde_json::json;
use snodo::task::{NewTask, Settle, TaskStatus, TaskStore};
use snodo_sqlite::SqliteTaskStore;

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("snodo-sqlite-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("tasks.db")
}

#[tokio::test]
async fn a_sqlite_file_keeps_the_store_contract() {
    let path = temp_path("contract");
    snodo_test::task_store::run(|| SqliteTaskStore::open(&path).unwrap()).await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn an_in_memory_database_keeps_the_store_contract() {
    snodo_test::task_store::run(|| SqliteTaskStore::open_in_memory().unwrap()).await;
}

#[tokio::test]
async fn tasks_and_results_survive_reopening_the_file() {
    let path = temp_path("reopen");
    let task = NewTask::new("alice", "report", json!({"arguments": {"seconds": 1}})).unwrap();
    let id = task.task_id.clone();
    {
        let store = SqliteTaskStore::open(&path).unwrap();
        let lease = store
            .create(task, "node-a", Duration::from_secs(30))
            .await
            .unwrap();
        let result =
            json!({"content": [{"type": "text", "text": "done"}], "resultType": "complete"});
        assert!(
            store
                .settle(&lease, Settle::Completed(result))
                .await
                .unwrap()
        );
    }
    let store = SqliteTaskStore::open(&path).unwrap();
    let record = store
        .get(&id)
        .await
        .unwrap()
        .expect("the task is still there");
    assert_eq!(record.status, TaskStatus::Completed);
    assert_eq!(record.owner, "alice");
    assert_eq!(record.result.unwrap()["content"][0]["text"], "done");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn a_full_database_refuses_new_tasks() {
    let store = SqliteTaskStore::open_in_memory().unwrap().with_capacity(3);
    for _ in 0..3 {
        store
            .create(
                NewTask::new("", "t", json!({})).unwrap(),
                "n",
                Duration::from_secs(30),
            )
            .await
            .unwrap();
    }
    let err = store
        .create(
            NewTask::new("", "t", json!({})).unwrap(),
            "n",
            Duration::from_secs(30),
        )
        .await
        .unwrap_err();
    assert_eq!(err, snodo::task::StoreError::Full { limit: 3 });
}

#[cfg(unix)]
#[tokio::test]
async fn the_database_and_its_journal_are_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let path = temp_path("private");
    let store = SqliteTaskStore::open(&path).unwrap();
    let task = NewTask::new(
        "alice",
        "report",
        json!({"arguments": {"secret": "s3cr3t"}}),
    )
    .unwrap();
    store
        .create(task, "node-1", Duration::from_secs(30))
        .await
        .unwrap();
    let dir = path.parent().unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}: {mode:o}", entry.path().display());
        seen += 1;
    }
    assert!(
        seen >= 2,
        "the database and its write-ahead log: {seen} files"
    );
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}
