//! The server under test: tools that sleep, need input or insist on a task.

use std::time::Duration;

use serde_json::json;
use snodo::prelude::*;
use snodo::task::{TaskOptions, TaskSupport};
use snodo::tool::from_fn;

async fn wait(seconds: f64, cx: &Context) -> bool {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => false,
        () = cx.cancellation().cancelled() => true,
    }
}

pub(crate) fn server_with(options: TaskOptions) -> Server {
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

pub(crate) fn server() -> Server {
    server_with(TaskOptions::memory())
}
