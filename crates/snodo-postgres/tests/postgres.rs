//! The PostgreSQL store against the server on 127.0.0.1:5432: the store
//! contract, nodes racing for orphaned tasks, a stopped node's task taken
//! over, and the database cut off and back.
//!
//! The server must be reachable (trust auth, database `test`); set
//! `SNODO_SKIP_POSTGRES=1` to skip these tests on a machine without one.
//! `SNODO_POSTGRES_URL` names another server.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use snodo::task::{NewTask, Settle, StoreError, TaskStatus, TaskStore};
use snodo_postgres::PostgresTaskStore;
use tokio::net::{TcpListener, TcpStream};

fn base_url() -> String {
    std::env::var("SNODO_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A fresh schema for one test, so that tests running at once never see
/// each other's tasks; `None` when told to skip.
async fn schema_url(name: &str, base: &str) -> Option<String> {
    if snodo_test::skip("SNODO_SKIP_POSTGRES") {
        return None;
    }
    let schema = format!("snodo_test_{name}");
    let (client, connection) = tokio_postgres::connect(&base_url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "PostgreSQL is not reachable at {} ({e}); start it, or set SNODO_SKIP_POSTGRES=1",
                base_url()
            )
        });
    tokio::spawn(connection);
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
        ))
        .await
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}options=-csearch_path%3D{schema}"))
}

fn task() -> NewTask {
    NewTask::new("alice", "report", json!({"arguments": {}})).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_store_contract() {
    let Some(url) = schema_url("contract", &base_url()).await else {
        return;
    };
    let store = PostgresTaskStore::connect(&url).await.unwrap();
    snodo_test::task_store::run(|| store.clone()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_racing_for_orphans_never_claim_a_task_twice() {
    let Some(url) = schema_url("race", &base_url()).await else {
        return;
    };
    let a = PostgresTaskStore::connect(&url).await.unwrap();
    let b = PostgresTaskStore::connect(&url).await.unwrap();
    let mut ids = HashSet::new();
    for _ in 0..300 {
        let new = task().retries(1);
        ids.insert(new.task_id.clone());
        a.create(new, "gone", Duration::from_millis(50))
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    let race = |store: PostgresTaskStore, node: &'static str| {
        tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let batch = store
                    .claim_orphans(node, Duration::from_secs(30), 7)
                    .await
                    .unwrap();
                if batch.is_empty() {
                    return mine;
                }
                for (record, lease) in batch {
                    assert_eq!(lease.holder, node);
                    mine.push(record.task_id);
                }
            }
        })
    };
    let (left, right) = tokio::join!(race(a.clone(), "node-a"), race(b.clone(), "node-b"));
    let (left, right) = (left.unwrap(), right.unwrap());
    let mut seen = HashSet::new();
    for id in left.iter().chain(&right) {
        assert!(seen.insert(id.clone()), "task {id} claimed twice");
    }
    assert_eq!(seen, ids, "every orphan claimed once");
    assert!(
        !left.is_empty() && !right.is_empty(),
        "both nodes took part: {} and {}",
        left.len(),
        right.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_are_announced_to_every_node() {
    let Some(url) = schema_url("notify", &base_url()).await else {
        return;
    };
    let a = PostgresTaskStore::connect(&url).await.unwrap();
    let b = PostgresTaskStore::connect(&url).await.unwrap();
    let mut heard = b.changes();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let new = task();
    let id = new.task_id.clone();
    let lease = a
        .create(new, "node-a", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        a.settle(&lease, Settle::Completed(json!({"content": []})))
            .await
            .unwrap()
    );
    let got = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let changed = heard.recv().await.unwrap();
            if changed == id {
                return changed;
            }
        }
    })
    .await
    .expect("node b hears node a's change");
    assert_eq!(got, id);
    assert_eq!(
        b.get(&id).await.unwrap().unwrap().status,
        TaskStatus::Completed
    );
}

/// A TCP proxy in front of PostgreSQL that can cut every connection and
/// refuse new ones, as a database restart does.
struct Cut {
    port: u16,
    up: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Cut {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let generation = Arc::new(tokio::sync::watch::channel(0u64).0);
        let (flag, gen_tx) = (up.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !flag.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let mut cut = gen_tx.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect("127.0.0.1:5432").await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Self {
            port,
            up,
            generation,
        }
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_database_gives_clear_errors_and_work_resumes() {
    let cut = Cut::start().await;
    let base = base_url().replace("127.0.0.1:5432", &format!("127.0.0.1:{}", cut.port));
    let Some(url) = schema_url("cut", &base).await else {
        return;
    };
    let store = PostgresTaskStore::connect(&url).await.unwrap();
    let new = task();
    let id = new.task_id.clone();
    store
        .create(new, "node-a", Duration::from_secs(30))
        .await
        .unwrap();

    cut.down();
    for _ in 0..3 {
        match store.get(&id).await {
            Err(StoreError::Backend(e)) => {
                assert!(
                    e.message().starts_with("PostgreSQL: "),
                    "a clear error: {e}"
                );
                // The driver's own error is kept under it.
                let source = std::error::Error::source(&e).map(ToString::to_string);
                assert!(source.is_some(), "no source under {e:?}");
            }
            other => panic!("expected a backend error while the database is away, got {other:?}"),
        }
        let err = store
            .create(task(), "node-a", Duration::from_secs(30))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
    }

    cut.up();
    let mut back = None;
    for _ in 0..50 {
        if let Ok(found) = store.get(&id).await {
            back = Some(found);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let record = back
        .expect("the store reconnects")
        .expect("the task is still there");
    assert_eq!(record.status, TaskStatus::Working);
    store
        .create(task(), "node-a", Duration::from_secs(30))
        .await
        .expect("new work is taken again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_table_refuses_new_tasks() {
    let Some(url) = schema_url("full", &base_url()).await else {
        return;
    };
    let store = PostgresTaskStore::connect(&url)
        .await
        .unwrap()
        .with_capacity(3);
    for _ in 0..3 {
        store
            .create(task(), "n", Duration::from_secs(30))
            .await
            .unwrap();
    }
    let err = store
        .create(task(), "n", Duration::from_secs(30))
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::Full { limit: 3 });
    // Expired tasks do not count.
    let store = store.with_capacity(4);
    store
        .create(task().ttl_ms(Some(30)), "n", Duration::from_secs(30))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(80)).await;
    store
        .create(task(), "n", Duration::from_secs(30))
        .await
        .expect("an expired task leaves room");
}
