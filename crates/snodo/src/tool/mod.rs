//! The `Tool` behaviour: what a tool declares and how it is called.
//!
//! A tool is any type implementing [`Tool`]: a name, plain JSON Schema
//! documents, and an async `call`. The `#[snodo::tool]` macro writes such a type
//! from an async function and checks its schemas when the code compiles.
//!
//! ```
//! use snodo::{Arguments, CallResult, Context, Tool, ToolResult};
//! use serde_json::{json, Value};
//!
//! struct Echo;
//!
//! impl Tool for Echo {
//!     fn name(&self) -> &str { "echo" }
//!     fn description(&self) -> Option<&str> { Some("Returns its text") }
//!     fn input_schema(&self) -> Value {
//!         json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
//!     }
//!     async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
//!         Ok(ToolResult::text(args.str("text")?))
//!     }
//! }
//!
//! let def = snodo::tool::definition(&Echo);
//! assert_eq!(def.name, "echo");
//! ```

mod arguments;
mod behaviour;
mod content;
mod function;
#[doc(hidden)]
pub mod output;
mod result;

pub use crate::future::BoxFuture;
pub use arguments::{Args, ArgsError, ArgumentError, Arguments};
pub(crate) use behaviour::DynTool;
pub use behaviour::{Tool, ToolDefinition, definition};
pub use content::Content;
pub use function::{FnTool, from_fn};
pub use result::{CallResult, IntoCallResult, Json, ResultShape, ToolResult};
