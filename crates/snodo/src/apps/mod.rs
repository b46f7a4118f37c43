//! MCP Apps (`io.modelcontextprotocol/ui`, the extension as
//! `@modelcontextprotocol/ext-apps` 2.x publishes it): a tool names a
//! `ui://` resource holding an HTML app that the host renders beside the
//! tool's result.
//!
//! A tool points at its app with [`ToolUi`] (`#[snodo::tool(ui =
//! "ui://…")]`, or [`FnTool::ui`](crate::tool::FnTool::ui)); the app is an
//! [`AppResource`] registered with
//! [`ServerBuilder::app`](crate::ServerBuilder::app). The server then
//! declares the extension, and negotiates: a host that did not declare it
//! (with the app MIME type in `mimeTypes`) sees the tools without their
//! `_meta.ui`, no tool meant for the app alone, and no app resource; it
//! gets each tool's text content as any host does.
//!
//! ```
//! use snodo::apps::{AppResource, ToolUi};
//! use snodo::prelude::*;
//!
//! let server = Server::builder("clock", "1.0.0")
//!     .tool(
//!         snodo::tool::from_fn("now", |_, _| async { Ok(ToolResult::text("12:00")) })
//!             .ui(ToolUi::new("ui://clock/app.html")),
//!     )
//!     .app(AppResource::html("ui://clock/app.html", "Clock", "<!doctype html><p>12:00</p>").prefers_border(true))
//!     .build()
//!     .unwrap();
//! ```

mod binding;
mod names;
mod resource;

pub use binding::{ToolUi, Visibility};
pub(crate) use binding::{tool_binding, without_ui};
pub use names::{EXTENSION, LEGACY_URI_KEY, MIME_TYPE, SCHEME, client_settings, declared_by};
pub use resource::{AppResource, Csp, Permissions};

#[cfg(test)]
mod tests;
