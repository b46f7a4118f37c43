//! Tasks: `snodo call --task`, `snodo tasks` and `snodo task`.

use serde_json::{Value, json};
use snodo::client::{Client, ClientError, RequestOptions, Task, TaskCall, TaskWait};
use snodo::task::TaskStatus;

use super::args::{CallArgs, Common, TaskArgs};
use super::failure::{EXIT_RPC, EXIT_TOOL_ERROR, Failure};
use super::output::{print_call_result, print_json};
use super::render::Style;
use super::{render, task_log};
use crate::escape;

/// A task's wire form (for `--json`).
fn task_json(task: &Task) -> Value {
    let mut out = json!({
        "taskId": task.task_id,
        "status": task.status.as_str(),
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttlMs": task.ttl_ms,
    });
    if let Some(message) = &task.status_message {
        out["statusMessage"] = message.clone().into();
    }
    if let Some(interval) = task.poll_interval_ms {
        out["pollIntervalMs"] = interval.into();
    }
    if !task.input_requests.is_empty() {
        out["inputRequests"] = Value::Object(task.input_requests.clone());
    }
    if let Some(result) = &task.result {
        out["result"] = result.to_wire();
    }
    if let Some(error) = &task.error {
        out["error"] = error.clone();
    }
    out
}

/// One line about a task, on stderr while waiting and in listings.
fn task_line(style: &Style, task: &Task) -> String {
    let status = match task.status {
        TaskStatus::Completed => style.bold(task.status.as_str()),
        TaskStatus::Failed | TaskStatus::Cancelled => style.red(task.status.as_str()),
        _ => style.cyan(task.status.as_str()),
    };
    let id = style.dim(&escape::line(&task.task_id));
    match &task.status_message {
        Some(message) => format!("{id} {status}  {}", escape::line(message)),
        None => format!("{id} {status}"),
    }
}

/// `snodo call --task`: the call, then the task's status until its result.
pub(super) async fn call_as_task(
    client: &Client,
    c: &CallArgs,
    args: Value,
    style: &Style,
) -> Result<u8, Failure> {
    let task = match client
        .call_tool_as_task(&c.tool, args, RequestOptions::new())
        .await?
    {
        TaskCall::Done(result) => return Ok(print_call_result(&c.opts, style, &result.to_wire())),
        TaskCall::Task(task) => task,
        _ => unreachable!("TaskCall has two variants"),
    };
    task_log::remember(&c.target, &task.task_id, &c.tool);
    if !c.opts.json {
        eprintln!(
            "{} task {} started",
            style.dim("·"),
            escape::line(&task.task_id)
        );
    }
    let json = c.opts.json;
    let waiting = client.wait_task(&task.task_id, TaskWait::new(), |t| {
        if !json {
            eprintln!("{}", task_line(style, t));
        }
    });
    let result = tokio::select! {
        r = waiting => r?,
        _ = tokio::signal::ctrl_c() => {
            client.cancel_task(&task.task_id).await?;
            eprintln!(
                "{} asked the server to cancel task {}",
                style.dim("·"),
                escape::line(&task.task_id)
            );
            return Err(Failure::task_cancelled(&task.task_id));
        }
    };
    Ok(print_call_result(&c.opts, style, &result.to_wire()))
}

/// `snodo tasks TARGET`.
pub(super) async fn list_tasks(
    client: &Client,
    c: &Common,
    style: &Style,
) -> Result<u8, ClientError> {
    let mut tasks = Vec::new();
    let mut gone = Vec::new();
    for (id, tool) in task_log::list(&c.target) {
        match client.get_task(&id).await {
            Ok(task) => tasks.push((task, tool)),
            Err(e) if e.code() == Some(snodo::error::code::INVALID_PARAMS) => gone.push(id),
            Err(e) => return Err(e),
        }
    }
    task_log::forget(&c.target, &gone);
    if c.opts.json {
        let list: Vec<Value> = tasks
            .iter()
            .map(|(t, tool)| {
                let mut v = task_json(t);
                v["tool"] = tool.clone().into();
                v
            })
            .collect();
        print_json(&json!({ "tasks": list }));
    } else if tasks.is_empty() {
        outln!("no tasks (snodo call --task starts one)");
    } else {
        for (task, tool) in &tasks {
            outln!(
                "{}  {}  {}",
                task_line(style, task),
                style.bold(&escape::line(tool)),
                style.dim(&escape::line(&task.created_at))
            );
        }
    }
    Ok(0)
}

/// `snodo task TARGET ID [--cancel]`.
pub(super) async fn show_task(
    client: &Client,
    c: &TaskArgs,
    style: &Style,
) -> Result<u8, ClientError> {
    if c.cancel {
        client.cancel_task(&c.id).await?;
    }
    let task = client.get_task(&c.id).await?;
    if c.opts.json {
        print_json(&task_json(&task));
    } else {
        outln!("{}", task_line(style, &task));
        outln!(
            "  created {}, updated {}",
            escape::line(&task.created_at),
            escape::line(&task.last_updated_at)
        );
        if let Some(ttl) = task.ttl_ms {
            outln!("  kept {} s from creation", ttl / 1000);
        }
        for (key, request) in &task.input_requests {
            let message = request["params"]["message"].as_str().unwrap_or("");
            outln!(
                "  waits on {}: {} {}",
                escape::line(key),
                escape::line(request["method"].as_str().unwrap_or("?")),
                escape::line(message)
            );
        }
        if let Some(result) = &task.result {
            render::call_result(style, &result.to_wire());
        }
        if let Some(error) = &task.error {
            outln!(
                "  error {}: {}",
                render::json_text(&error["code"]),
                escape::line(error["message"].as_str().unwrap_or(""))
            );
        }
    }
    Ok(match (&task.status, &task.result) {
        (TaskStatus::Completed, Some(r)) if r.is_error() => EXIT_TOOL_ERROR,
        (TaskStatus::Failed, _) | (TaskStatus::Cancelled, _) => EXIT_RPC,
        _ => 0,
    })
}
