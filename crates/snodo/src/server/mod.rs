//! The server: an immutable registry of components and the dispatch pipeline
//! every transport calls.
//!
//! Everything that can be computed once is computed in [`ServerBuilder::build`]:
//! name and schema checks, compiled validators, the `x-mcp-header` map of each
//! tool, and the serialized `tools/list` pages.

mod builder;
mod call;
mod dispatch;
mod list;
mod registry;
mod reply;

pub use builder::{BuildError, ServerBuilder};
pub use reply::{Dispatched, Reply};

use std::sync::Arc;

use serde_json::Value;

use crate::protocol::CacheHints;
use crate::wire::Limits;
use registry::ToolRegistry;

/// An MCP server: cheap to clone, immutable once built.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    info: Value,
    instructions: Option<String>,
    capabilities: Value,
    tools: ToolRegistry,
    discover_cache: CacheHints,
    list_cache: CacheHints,
    page_size: usize,
    limits: Limits,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.inner.tools.len())
            .finish()
    }
}

impl Server {
    /// Starts building a server with the name and version it reports in
    /// `io.modelcontextprotocol/serverInfo`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name.into(), version.into())
    }

    /// The server's `Implementation` object (`name`, `version`, ...).
    pub fn info(&self) -> &Value {
        &self.inner.info
    }

    /// The capabilities `server/discover` advertises.
    pub fn capabilities(&self) -> &Value {
        &self.inner.capabilities
    }

    /// The decoding limits transports apply to incoming messages.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }
}
