//! The contract every [`TaskStore`] keeps, as a test suite any store can run.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! snodo_test::task_store::run(|| snodo::task::MemoryTaskStore::new()).await;
//! # });
//! ```
//!
//! [`run`] panics, naming the rule, at the first one broken. It asks for a
//! fresh store for each group of checks and waits on real time (leases and
//! time to live of a quarter of a second at most), about three seconds in all.

use std::future::Future;
use std::time::Duration;

use serde_json::{Map, Value, json};

use snodo::task::{
    Answered, Cancelled, NewTask, Renewal, Settle, StoreError, TaskStatus, TaskStore,
};

const LONG: Duration = Duration::from_secs(30);
const SHORT: Duration = Duration::from_millis(250);

fn task() -> NewTask {
    NewTask::new("alice", "report", json!({"arguments": {"seconds": 1}}))
        .expect("the operating system's random source")
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

async fn settle_later() {
    tokio::time::sleep(SHORT * 2).await;
}

/// Runs every check against stores made by `make` (each group gets a new
/// one; a store that cannot be emptied may return the same one, as long as
/// the tasks of earlier groups do not disturb the later ones: every check
/// uses fresh task ids).
pub async fn run<S, F>(make: F)
where
    S: TaskStore,
    F: Fn() -> S,
{
    create_and_read(&make()).await;
    leases_fence_writers(&make()).await;
    terminal_tasks_never_change(&make()).await;
    input_rounds(&make()).await;
    cancellation(&make()).await;
    recovery(&make()).await;
    expiry(&make()).await;
    many_tasks(&make()).await;
}

async fn must<T>(what: &str, f: impl Future<Output = Result<T, StoreError>>) -> T {
    match f.await {
        Ok(v) => v,
        Err(e) => panic!("task store contract: {what} failed: {e}"),
    }
}

async fn create_and_read<S: TaskStore>(store: &S) {
    let new = task().ttl_ms(Some(600_000)).poll_interval_ms(Some(250));
    let id = new.task_id.clone();
    let created_at = new.created_at_ms;
    let lease = must("create", store.create(new.clone(), "node-a", LONG)).await;
    assert_eq!(lease.task_id, id, "the lease names the task");
    assert_eq!(lease.holder, "node-a", "the lease names its holder");
    assert!(lease.generation >= 1, "a lease has a generation");
    let record = must("get", store.get(&id))
        .await
        .expect("a task is readable as soon as create returns");
    assert_eq!(record.status, TaskStatus::Working, "a new task is working");
    assert_eq!(record.owner, "alice", "the owner is kept");
    assert_eq!(record.tool, "report", "the tool is kept");
    assert_eq!(record.work, new.work, "the work is kept as given");
    assert_eq!(record.ttl_ms, Some(600_000), "the time to live is kept");
    assert_eq!(
        record.poll_interval_ms,
        Some(250),
        "the poll interval is kept"
    );
    assert_eq!(
        record.created_at_ms, created_at,
        "the creation time is kept"
    );
    assert_eq!(record.attempts, 1, "creation counts the first attempt");
    assert!(
        matches!(
            store.create(new, "node-a", LONG).await,
            Err(StoreError::Duplicate)
        ),
        "a second task with the same id is refused"
    );
    assert!(
        must("get", store.get("no-such-task")).await.is_none(),
        "an unknown id reads as missing"
    );
    let mut long = task();
    long.task_id = "x".repeat(snodo::task::MAX_TASK_ID + 1);
    assert!(
        matches!(
            store.create(long, "node-a", LONG).await,
            Err(StoreError::Invalid(_))
        ),
        "an id over MAX_TASK_ID bytes is refused"
    );
}

async fn leases_fence_writers<S: TaskStore>(store: &S) {
    let new = task();
    let id = new.task_id.clone();
    let first = must("create", store.create(new, "node-a", SHORT)).await;
    assert!(
        must("claim", store.claim(&id, "node-b", LONG))
            .await
            .is_none(),
        "a leased task cannot be claimed"
    );
    assert!(
        must("claim_orphans", store.claim_orphans("node-b", LONG, 10))
            .await
            .is_empty(),
        "a task under a current lease is no orphan"
    );
    assert_eq!(
        must("renew", store.renew(&first, SHORT)).await,
        Renewal::Held {
            cancel_requested: false
        },
        "the holder renews its lease"
    );
    settle_later().await;
    assert_eq!(
        must("renew", store.renew(&first, SHORT)).await,
        Renewal::Lost,
        "a lapsed lease cannot be renewed"
    );
    // Out of retries by default: recovering it fails it. Give it one.
    let retried = task().retries(1);
    let rid = retried.task_id.clone();
    let old = must("create", store.create(retried, "node-a", SHORT)).await;
    settle_later().await;
    let claimed = must("claim_orphans", store.claim_orphans("node-b", LONG, 10)).await;
    let Some((record, new_lease)) = claimed.into_iter().find(|(r, _)| r.task_id == rid) else {
        panic!(
            "task store contract: a task whose lease lapsed, with a retry left, is claimed by another node"
        );
    };
    assert_eq!(record.retries, 0, "recovering a lapsed task uses a retry");
    assert!(
        new_lease.generation > old.generation,
        "a new claim has a later generation"
    );
    assert!(
        !must("note", store.note(&old, "stale".into())).await,
        "the old holder cannot set the status message"
    );
    assert!(
        must("note", store.note(&new_lease, "half way".into())).await,
        "the holder sets the status message"
    );
    assert_eq!(
        must("get", store.get(&rid))
            .await
            .and_then(|r| r.status_message)
            .as_deref(),
        Some("half way"),
        "the status message is kept"
    );
    assert!(
        !must(
            "settle",
            store.settle(&old, Settle::Completed(json!({"stale": true})))
        )
        .await,
        "the old holder's write is refused once another node claimed the task"
    );
    assert!(
        must(
            "settle",
            store.settle(&new_lease, Settle::Completed(json!({"content": []})))
        )
        .await,
        "the new holder's write is taken"
    );
    let record = must("get", store.get(&rid))
        .await
        .expect("the task is kept");
    assert_eq!(record.status, TaskStatus::Completed);
    assert_eq!(
        record.result,
        Some(json!({"content": []})),
        "the holder's result is kept"
    );
    assert!(record.lease.is_none(), "settling releases the lease");
    let _ = id;
}

async fn terminal_tasks_never_change<S: TaskStore>(store: &S) {
    for (outcome, status) in [
        (
            Settle::Completed(json!({"content": []})),
            TaskStatus::Completed,
        ),
        (
            Settle::Failed(json!({"code": -32603, "message": "boom"})),
            TaskStatus::Failed,
        ),
        (Settle::Cancelled, TaskStatus::Cancelled),
    ] {
        let new = task();
        let id = new.task_id.clone();
        let lease = must("create", store.create(new, "node-a", LONG)).await;
        assert!(must("settle", store.settle(&lease, outcome.clone())).await);
        let before = must("get", store.get(&id)).await.expect("kept");
        assert_eq!(before.status, status);
        if status == TaskStatus::Failed {
            assert_eq!(
                before.error,
                Some(json!({"code": -32603, "message": "boom"})),
                "a failed task keeps its error"
            );
            assert_eq!(
                before.status_message.as_deref(),
                Some("boom"),
                "and says why"
            );
        }
        assert!(
            !must("settle", store.settle(&lease, Settle::Completed(json!({})))).await,
            "a terminal task takes no second outcome"
        );
        assert_eq!(
            must("cancel", store.cancel(&id)).await,
            Cancelled::AlreadyTerminal,
            "cancelling a terminal task changes nothing"
        );
        assert!(
            !must(
                "fail",
                store.fail(&id, json!({"code": -32603, "message": "x"}))
            )
            .await,
            "failing a terminal task changes nothing"
        );
        assert_eq!(
            must("renew", store.renew(&lease, LONG)).await,
            Renewal::Lost,
            "a terminal task's lease is gone"
        );
        let after = must("get", store.get(&id)).await.expect("kept");
        assert_eq!(after.status, before.status, "the status stays");
        assert_eq!(after.result, before.result, "the result stays");
    }
}

async fn input_rounds<S: TaskStore>(store: &S) {
    let new = task();
    let id = new.task_id.clone();
    let lease = must("create", store.create(new, "node-a", LONG)).await;
    let requests = map(json!({
        "a": {"method": "elicitation/create", "params": {"message": "a?"}},
        "b": {"method": "elicitation/create", "params": {"message": "b?"}},
    }));
    let paused = Settle::InputRequired {
        requests: requests.clone(),
        state: Some("round-1".into()),
    };
    assert!(must("settle", store.settle(&lease, paused)).await);
    let record = must("get", store.get(&id)).await.expect("kept");
    assert_eq!(record.status, TaskStatus::InputRequired);
    assert_eq!(
        record.input_requests, requests,
        "every request is outstanding"
    );
    assert_eq!(
        record.request_state.as_deref(),
        Some("round-1"),
        "the state is kept"
    );
    assert!(
        record.lease.is_none(),
        "a task waiting on input holds no lease"
    );
    let mut used = record.used_keys.clone();
    used.sort();
    assert_eq!(used, ["a", "b"], "issued keys are remembered");
    assert_eq!(
        must(
            "answer",
            store.answer(
                &id,
                map(json!({"a": {"action": "accept"}, "zzz": {"ignored": true}}))
            )
        )
        .await,
        Answered::Accepted { ready: false },
        "a partial answer is taken; the task still waits"
    );
    let record = must("get", store.get(&id)).await.expect("kept");
    assert_eq!(
        record.status,
        TaskStatus::InputRequired,
        "still waiting on b"
    );
    assert!(
        !record.input_requests.contains_key("a"),
        "an answered key is gone at once"
    );
    assert!(
        record.input_requests.contains_key("b"),
        "the other is still outstanding"
    );
    assert_eq!(
        record.input_responses.get("a"),
        Some(&json!({"action": "accept"}))
    );
    assert!(
        !record.input_responses.contains_key("zzz"),
        "unknown keys are ignored"
    );
    assert_eq!(
        must(
            "answer",
            store.answer(&id, map(json!({"a": {"action": "decline"}})))
        )
        .await,
        Answered::Accepted { ready: false },
        "an answered key is not answered twice"
    );
    let record = must("get", store.get(&id)).await.expect("kept");
    assert_eq!(
        record.input_responses.get("a"),
        Some(&json!({"action": "accept"})),
        "the first answer stands"
    );
    assert!(
        must("claim", store.claim(&id, "node-b", LONG))
            .await
            .is_none(),
        "a task waiting on input cannot be claimed"
    );
    assert_eq!(
        must(
            "answer",
            store.answer(&id, map(json!({"b": {"action": "accept"}})))
        )
        .await,
        Answered::Accepted { ready: true },
        "the last answer makes the task ready"
    );
    let record = must("get", store.get(&id)).await.expect("kept");
    assert_eq!(
        record.status,
        TaskStatus::Working,
        "answered: working again"
    );
    let (claimed, _) = must("claim", store.claim(&id, "node-b", LONG))
        .await
        .expect("an answered task is claimed by whoever asks first");
    assert_eq!(
        claimed.input_responses.len(),
        2,
        "the claim carries every answer"
    );
    assert_eq!(claimed.request_state.as_deref(), Some("round-1"));
    assert!(
        must("claim", store.claim(&id, "node-c", LONG))
            .await
            .is_none(),
        "and by one only"
    );
    assert_eq!(
        must("answer", store.answer(&id, map(json!({"b": {}})))).await,
        Answered::Accepted { ready: false },
        "an update for a task that waits on nothing is ignored"
    );
    assert_eq!(
        must("answer", store.answer("no-such-task", Map::new())).await,
        Answered::NotFound
    );
}

async fn cancellation<S: TaskStore>(store: &S) {
    let new = task();
    let id = new.task_id.clone();
    let lease = must("create", store.create(new, "node-a", LONG)).await;
    assert_eq!(
        must("cancel", store.cancel(&id)).await,
        Cancelled::Requested,
        "a running task is asked to stop"
    );
    assert_eq!(
        must("cancel", store.cancel(&id)).await,
        Cancelled::Requested,
        "asking twice is the same"
    );
    assert_eq!(
        must("renew", store.renew(&lease, LONG)).await,
        Renewal::Held {
            cancel_requested: true
        },
        "the worker learns of the cancellation when it renews"
    );
    assert!(must("settle", store.settle(&lease, Settle::Cancelled)).await);
    assert_eq!(
        must("get", store.get(&id)).await.map(|r| r.status),
        Some(TaskStatus::Cancelled)
    );

    let new = task();
    let id = new.task_id.clone();
    let lease = must("create", store.create(new, "node-a", LONG)).await;
    let paused = Settle::InputRequired {
        requests: map(json!({"k": {"method": "roots/list", "params": {}}})),
        state: None,
    };
    assert!(must("settle", store.settle(&lease, paused)).await);
    assert_eq!(
        must("cancel", store.cancel(&id)).await,
        Cancelled::Now,
        "a task waiting on input is cancelled at once"
    );
    let record = must("get", store.get(&id)).await.expect("kept");
    assert_eq!(record.status, TaskStatus::Cancelled);
    assert!(
        record.input_requests.is_empty(),
        "nothing is outstanding once cancelled"
    );
    assert_eq!(
        must("cancel", store.cancel("no-such-task")).await,
        Cancelled::NotFound
    );
}

async fn recovery<S: TaskStore>(store: &S) {
    let plain = task();
    let failed_id = plain.task_id.clone();
    must("create", store.create(plain, "node-a", SHORT)).await;
    let cancelled = task().retries(3);
    let cancelled_id = cancelled.task_id.clone();
    must("create", store.create(cancelled, "node-a", SHORT)).await;
    assert_eq!(
        must("cancel", store.cancel(&cancelled_id)).await,
        Cancelled::Requested
    );
    settle_later().await;
    let claimed = must("claim_orphans", store.claim_orphans("node-b", LONG, 100)).await;
    assert!(
        claimed
            .iter()
            .all(|(r, _)| r.task_id != failed_id && r.task_id != cancelled_id),
        "a lapsed task out of retries, or asked to cancel, is not run again"
    );
    let failed = must("get", store.get(&failed_id)).await.expect("kept");
    assert_eq!(failed.status, TaskStatus::Failed, "out of retries: failed");
    assert_eq!(
        failed.error,
        Some(snodo::task::node_stopped_error()),
        "with the node-stopped error"
    );
    let cancelled = must("get", store.get(&cancelled_id)).await.expect("kept");
    assert_eq!(
        cancelled.status,
        TaskStatus::Cancelled,
        "asked to cancel: cancelled"
    );
}

async fn expiry<S: TaskStore>(store: &S) {
    let new = task().ttl_ms(Some(40));
    let id = new.task_id.clone();
    let lease = must("create", store.create(new, "node-a", LONG)).await;
    let keep = task().ttl_ms(None);
    let keep_id = keep.task_id.clone();
    must("create", store.create(keep, "node-a", LONG)).await;
    settle_later().await;
    assert!(
        must("get", store.get(&id)).await.is_none(),
        "an expired task reads as missing"
    );
    assert_eq!(
        must("answer", store.answer(&id, Map::new())).await,
        Answered::NotFound
    );
    assert_eq!(must("cancel", store.cancel(&id)).await, Cancelled::NotFound);
    assert_eq!(
        must("renew", store.renew(&lease, LONG)).await,
        Renewal::Lost,
        "an expired task's lease is lost"
    );
    let purged = must("purge", store.purge(snodo::task::now_ms(), 1000)).await;
    assert!(purged >= 1, "purge removes expired tasks");
    let kept = must("get", store.get(&keep_id))
        .await
        .expect("a task without a ttl stays");
    assert_eq!(kept.ttl_ms, None);
}

async fn many_tasks<S: TaskStore>(store: &S) {
    let mut ids = Vec::new();
    for _ in 0..200 {
        let new = task().retries(1);
        ids.push(new.task_id.clone());
        must("create", store.create(new, "node-a", SHORT)).await;
    }
    settle_later().await;
    let mut seen = std::collections::HashSet::new();
    loop {
        let batch = must("claim_orphans", store.claim_orphans("node-b", LONG, 50)).await;
        assert!(batch.len() <= 50, "claim_orphans respects its limit");
        if batch.is_empty() {
            break;
        }
        for (record, _) in batch {
            assert!(
                seen.insert(record.task_id.clone()),
                "an orphan is claimed once"
            );
        }
    }
    for id in &ids {
        assert!(seen.contains(id), "every orphan is claimed");
        let record = must("get", store.get(id)).await.expect("kept");
        assert_eq!(record.status, TaskStatus::Working);
        assert_eq!(record.lease.map(|l| l.holder).as_deref(), Some("node-b"));
    }
}
