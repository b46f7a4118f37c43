//! The tools of the Tasks extension's scenarios (`tasks-*`).

use std::time::Duration;

use serde_json::json;
use snodo::Error;
use snodo::prelude::*;
use snodo::task::TaskSupport;
use snodo::tool::from_fn;

/// Waits `seconds`, or until the task is cancelled; whether it was.
async fn wait(seconds: f64, cx: &Context) -> bool {
    let seconds = seconds.clamp(0.0, 300.0);
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => false,
        () = cx.cancellation().cancelled() => true,
    }
}

fn confirm_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
}

/// Registers `greet`, `slow_compute`, `failing_job`, `protocol_error_job`,
/// `confirm_delete`, `multi_input` and `test_tool_with_task`.
pub(crate) fn register(builder: snodo::ServerBuilder) -> snodo::ServerBuilder {
    builder
        .tool(
            from_fn("greet", |args: Arguments, _| async move {
                let name = args.str("name").unwrap_or("World").to_string();
                Ok(ToolResult::text(format!("Hello, {name}!")))
            })
            .description("Greets inline; never a task")
            .input_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}})),
        )
        .tool(
            from_fn("slow_compute", |args: Arguments, cx: Context| async move {
                let seconds = args.f64("seconds").unwrap_or(1.0);
                let label = args.str("label").unwrap_or("compute").to_string();
                if wait(seconds, &cx).await {
                    return Ok(ToolResult::text(format!("{label}: cancelled")));
                }
                Ok(ToolResult::text(format!("{label}: done after {seconds} s")))
            })
            .description("Waits `seconds`; a task when the client allows it, settles cancelled when cancelled")
            .input_schema(json!({"type": "object", "properties": {
                "seconds": {"type": "number"}, "label": {"type": "string"}}}))
            .task_support(TaskSupport::Optional),
        )
        .tool(
            from_fn("failing_job", |_, cx: Context| async move {
                wait(1.0, &cx).await;
                Ok(ToolResult::error("The job failed"))
            })
            .description("A task only; ends completed with an isError result")
            .input_schema(json!({"type": "object", "properties": {}}))
            .task_support(TaskSupport::Required),
        )
        .tool(
            from_fn("protocol_error_job", |_, cx: Context| async move {
                wait(0.5, &cx).await;
                Err(Error::internal("The job hit a protocol error").into())
            })
            .description("A task only; ends failed with a JSON-RPC error")
            .input_schema(json!({"type": "object", "properties": {}}))
            .task_support(TaskSupport::Required),
        )
        .tool(
            from_fn("confirm_delete", |args: Arguments, cx: Context| async move {
                let file = args.str("filename").unwrap_or("the file").to_string();
                if cx.task_id().is_none() {
                    // Inline (a client without the extension): no question
                    // outside a task. It is the first tool listed, which the
                    // header scenarios call with no capabilities at all.
                    return Ok(ToolResult::error(format!(
                        "Deleting {file} asks for a confirmation inside a task: declare the Tasks extension"
                    )));
                }
                Ok(match cx.elicitation("confirm") {
                    Some(answer) if answer.bool("confirm") == Some(true) => {
                        ToolResult::text(format!("Deleted {file}"))
                    }
                    Some(_) => ToolResult::text(format!("Kept {file}")),
                    None => ToolResult::input_required(InputRequired::new().elicit_form(
                        "confirm",
                        &format!("Delete {file}?"),
                        confirm_schema(),
                    )),
                })
            })
            .description("A task that asks for a confirmation mid-task")
            .input_schema(json!({"type": "object", "properties": {"filename": {"type": "string"}}}))
            .task_support(TaskSupport::Optional),
        )
        .tool(
            from_fn("multi_input", |_, cx: Context| async move {
                let first = cx.elicitation("first");
                let second = cx.elicitation("second");
                Ok(match (first, second) {
                    (Some(a), Some(b)) => ToolResult::text(format!(
                        "got {} and {}",
                        a.str("name").unwrap_or("?"),
                        b.str("name").unwrap_or("?")
                    )),
                    _ => ToolResult::input_required(
                        InputRequired::new()
                            .elicit_form("first", "First input", name_schema())
                            .elicit_form("second", "Second input", name_schema()),
                    ),
                })
            })
            .description("A task that waits on two inputs at once")
            .input_schema(json!({"type": "object", "properties": {}}))
            .task_support(TaskSupport::Required),
        )
        .tool(
            from_fn("test_tool_with_task", |_, cx: Context| async move {
                let name = cx
                    .elicitation("user_name")
                    .and_then(|r| r.str("name").map(str::to_string))
                    .unwrap_or_else(|| "stranger".into());
                wait(0.2, &cx).await;
                Ok(ToolResult::text(format!("Hello, {name}, from a task")))
            })
            .description("Asks for a name before it becomes a task, then greets from the task")
            .input_schema(json!({"type": "object", "properties": {}}))
            .task_support(TaskSupport::Required)
            .before_task(|_, cx| {
                cx.elicitation("user_name").is_none().then(|| {
                    InputRequired::new().elicit_form("user_name", "What is your name?", name_schema())
                })
            }),
        )
}

fn name_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}})
}
