//! The Tasks extension (`io.modelcontextprotocol/tasks`): long-running tool
//! calls answered with a task that the client polls, updates and cancels.
//!
//! A tool opts in with [`TaskSupport`] ([`Tool::task_support`](crate::Tool::task_support),
//! or `task = "optional"` in the macro). When a `tools/call` declares the
//! extension in its `_meta` (`io.modelcontextprotocol/clientCapabilities`),
//! the server stores a task, answers with a `CreateTaskResult` at once, and
//! runs the tool detached; `tasks/get` reads it, `tasks/update` answers its
//! input requests, `tasks/cancel` stops it. A request that does not declare
//! the extension never gets a task: an `optional` tool runs inline, a
//! `required` one fails with -32021.
//!
//! Tasks live in a [`TaskStore`]: [`MemoryTaskStore`] by default, or a
//! durable store shared by several nodes. Every store keeps the same rules,
//! and the `snodo-test` crate's `task_store::run` checks them.
//!
//! ```
//! use snodo::prelude::*;
//! use snodo::task::{TaskOptions, TaskSupport};
//!
//! let report = snodo::tool::from_fn("report", |_args, cx: Context| async move {
//!     tokio::select! {
//!         _ = tokio::time::sleep(std::time::Duration::from_secs(5)) => {}
//!         _ = cx.cancellation().cancelled() => return Ok(ToolResult::text("stopped")),
//!     }
//!     Ok(ToolResult::text("done"))
//! })
//! .task_support(TaskSupport::Optional);
//! let server = Server::builder("reports", "1.0.0")
//!     .tool(report)
//!     .tasks(TaskOptions::memory())
//!     .build()
//!     .unwrap();
//! assert!(server.capabilities()["extensions"]["io.modelcontextprotocol/tasks"].is_object());
//! ```

mod memory;
mod model;
mod options;
mod store;
pub mod transition;

pub use memory::{DEFAULT_MAX_TASKS, MemoryTaskStore};
pub use model::{
    DEFAULT_POLL_INTERVAL_MS, DEFAULT_TTL_MS, EXTENSION, Lease, MAX_TASK_ANSWER_BYTES, MAX_TASK_ID,
    MAX_TASK_RESULT_BYTES, MAX_TASK_WORK_BYTES, NewTask, TaskRecord, TaskStatus, TaskSupport,
    declared, iso8601, new_task_id, node_stopped_error, now_ms,
};
pub use options::{DEFAULT_INPUT_WAIT, DEFAULT_MAX_TASKS_PER_SHARE, TaskOptions};
pub use store::{Answered, Cancelled, Renewal, Settle, StoreError, TaskStore};
