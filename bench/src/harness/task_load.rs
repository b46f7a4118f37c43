//! The task workloads: each connection creates a task (`tools/call
//! echo_task`, the request declaring the Tasks extension), then polls
//! `tasks/get` (1 ms apart) until the task is `completed` with its text, and
//! starts the next. A task counts once its result is read; the histogram holds
//! create-to-result times. Every answer is checked: a wrong status, a missing
//! task or another text is an error.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use serde_json::Value;

use super::http_load::{Outcome, Target, connect, request, spread};

const META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"snodo-bench","version":"0.1.0"}}"#
);

/// Sends one request; the JSON-RPC result.
async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    target: &Target,
    method: &'static str,
    name: &str,
    body: String,
) -> Result<Value, String> {
    sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    let response = sender
        .send_request(request(target, method, Some(name), body))
        .await
        .map_err(|e| format!("request: {e}"))?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    if status != StatusCode::OK {
        return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body)));
    }
    let value: Value = serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))?;
    value
        .get("result")
        .cloned()
        .ok_or_else(|| format!("no result: {value}"))
}

/// One task from creation to result.
async fn one_task(
    sender: &mut SendRequest<Full<Bytes>>,
    target: &Target,
    id: u64,
) -> Result<u64, String> {
    let text = format!("task-{id}");
    let create = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo_task","arguments":{{"text":"{text}"}},{META}}}}}"#
    );
    let created = send(sender, target, "tools/call", "echo_task", create).await?;
    if created["resultType"] != "task" {
        return Err(format!("not a task: {created}"));
    }
    let task_id = created["taskId"]
        .as_str()
        .ok_or_else(|| format!("no taskId: {created}"))?
        .to_string();
    let get = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"taskId":"{task_id}",{META}}}}}"#
    );
    let mut polls = 0u64;
    loop {
        let task = send(sender, target, "tasks/get", &task_id, get.clone()).await?;
        polls += 1;
        match task["status"].as_str() {
            Some("completed") => {
                return if task["result"]["content"][0]["text"] == text.as_str() {
                    Ok(polls)
                } else {
                    Err(format!("wrong result: {task}"))
                };
            }
            Some("working") => tokio::time::sleep(Duration::from_millis(1)).await,
            _ => return Err(format!("unexpected task state: {task}")),
        }
    }
}

async fn connection(
    target: Rc<Target>,
    index: u64,
    measure_from: Instant,
    end: Instant,
) -> Outcome {
    let mut out = Outcome::default();
    let mut seq = 0u64;
    while Instant::now() < end {
        let (mut sender, driver) = match connect(&target).await {
            Ok(c) => c,
            Err(e) => {
                out.errors += 1;
                out.first_error.get_or_insert(e);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        while Instant::now() < end {
            seq += 1;
            let started = Instant::now();
            match one_task(&mut sender, &target, index * 1_000_000_000 + seq).await {
                Ok(_) => {
                    if started >= measure_from && Instant::now() <= end {
                        out.completed += 1;
                        out.hist.record(started.elapsed().as_nanos() as u64);
                    }
                }
                Err(e) => {
                    out.errors += 1;
                    out.first_error.get_or_insert(e);
                    break;
                }
            }
        }
        driver.abort();
    }
    out
}

/// Runs `concurrency` connections for `warmup` then `measure`.
pub(crate) async fn run(
    target: &Target,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    let target = Rc::new(target.clone());
    spread(concurrency, warmup, measure, |index, measure_from, end| {
        connection(Rc::clone(&target), index, measure_from, end)
    })
    .await
}
