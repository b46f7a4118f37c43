//! Cancelling a task: the handler sees it, one that ignores it is dropped
//! after the grace, and one that runs too long fails.

use std::sync::Arc;
use std::time::Duration;

use snodo::prelude::*;
use snodo::task::{TaskOptions, TaskSupport};
use snodo::tool::from_fn;

use crate::requests::{DECLARED, poll_until, request, send, terminal};
use crate::server::server;

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
