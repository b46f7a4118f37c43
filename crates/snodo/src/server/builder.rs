//! Building a server: registration checks and compile-once work.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::registry::{ToolEntry, ToolRegistry, required_of};
use super::{Inner, Server};
use crate::protocol::CacheHints;
use crate::schema::{PassThrough, Validator};
use crate::tool::{DynTool, Tool, definition};
use crate::wire::Limits;

/// Why a server could not be built. Every variant names the component and
/// the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// A tool broke a definition rule (name, schema shape, `x-mcp-header`).
    Tool {
        /// The tool's name.
        tool: String,
        /// The broken rule.
        rule: String,
    },
    /// Two tools share a name.
    DuplicateTool(String),
    /// The validator could not compile one of a tool's schemas.
    Schema {
        /// The tool's name.
        tool: String,
        /// `"input"` or `"output"`.
        which: &'static str,
        /// The validator's reason.
        message: String,
    },
    /// A server setting is out of range.
    Config(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Tool { tool, rule } => write!(f, "tool `{tool}`: {rule}"),
            BuildError::DuplicateTool(name) => write!(f, "tool `{name}` is registered twice"),
            BuildError::Schema {
                tool,
                which,
                message,
            } => write!(f, "tool `{tool}`: {which} schema refused by the validator: {message}"),
            BuildError::Config(message) => write!(f, "server configuration: {message}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Collects components and settings, then builds an immutable [`Server`].
pub struct ServerBuilder {
    info: Map<String, Value>,
    instructions: Option<String>,
    tools: Vec<Arc<dyn RegisteredTool>>,
    validator: Arc<dyn Validator>,
    discover_cache: CacheHints,
    list_cache: CacheHints,
    page_size: usize,
    limits: Limits,
}

/// A tool as the builder holds it: definition access plus the erased call.
trait RegisteredTool: DynTool {
    fn definition(&self) -> crate::ToolDefinition;
    fn into_dyn(self: Arc<Self>) -> Arc<dyn DynTool>;
}

impl<T: Tool> RegisteredTool for T {
    fn definition(&self) -> crate::ToolDefinition {
        definition(self)
    }
    fn into_dyn(self: Arc<Self>) -> Arc<dyn DynTool> {
        self
    }
}

impl ServerBuilder {
    pub(super) fn new(name: String, version: String) -> Self {
        let mut info = Map::new();
        info.insert("name".into(), name.into());
        info.insert("version".into(), version.into());
        Self {
            info,
            instructions: None,
            tools: Vec::new(),
            validator: Arc::new(PassThrough),
            discover_cache: CacheHints::default(),
            list_cache: CacheHints::default(),
            page_size: 100,
            limits: Limits::default(),
        }
    }

    /// Sets the human-readable title in the server's info.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.insert("title".into(), title.into().into());
        self
    }

    /// Sets the instructions `server/discover` returns.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Registers a tool.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Installs the schema validator (default: [`PassThrough`]).
    pub fn validator<V: Validator>(mut self, validator: V) -> Self {
        self.validator = Arc::new(validator);
        self
    }

    /// Sets the cache hints of `server/discover`.
    pub fn discover_cache(mut self, hints: CacheHints) -> Self {
        self.discover_cache = hints;
        self
    }

    /// Sets the cache hints of the list methods (the same on every page).
    pub fn list_cache(mut self, hints: CacheHints) -> Self {
        self.list_cache = hints;
        self
    }

    /// Sets how many items a list page holds (default 100).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }

    /// Sets the decoding limits (message size, nesting depth, number length).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Checks every component and compiles the server.
    pub fn build(self) -> Result<Server, BuildError> {
        if self.page_size == 0 {
            return Err(BuildError::Config("page size must be at least 1".into()));
        }
        let mut seen = HashSet::new();
        let mut entries = Vec::with_capacity(self.tools.len());
        for tool in self.tools {
            let def = tool.definition();
            let name = def.name.clone();
            let rule = |e: snodo_rules::RuleError| BuildError::Tool {
                tool: name.clone(),
                rule: e.to_string(),
            };
            snodo_rules::check_tool_name(&name).map_err(rule)?;
            if !seen.insert(name.clone()) {
                return Err(BuildError::DuplicateTool(name));
            }
            snodo_rules::check_input_schema(&def.input_schema).map_err(rule)?;
            let headers = snodo_rules::check_header_annotations(&def.input_schema).map_err(rule)?;
            if let Some(out) = &def.output_schema {
                snodo_rules::check_output_schema(out).map_err(rule)?;
            }
            for (field, value) in [("annotations", &def.annotations), ("_meta", &def.meta)] {
                if value.as_ref().is_some_and(|v| !v.is_object()) {
                    return Err(BuildError::Tool {
                        tool: name.clone(),
                        rule: format!("{field} must be a JSON object"),
                    });
                }
            }
            if def.icons.as_ref().is_some_and(|v| !v.is_array()) {
                return Err(BuildError::Tool {
                    tool: name.clone(),
                    rule: "icons must be a JSON array".into(),
                });
            }
            let compile = |schema: &Value, which| {
                self.validator.compile(schema).map_err(|e| BuildError::Schema {
                    tool: name.clone(),
                    which,
                    message: e.message,
                })
            };
            let input = compile(&def.input_schema, "input")?;
            let output = match &def.output_schema {
                Some(schema) => Some(compile(schema, "output")?),
                None => None,
            };
            entries.push(ToolEntry {
                required: required_of(&def.input_schema),
                definition: def,
                tool: tool.into_dyn(),
                input,
                output,
                headers,
            });
        }
        let tools = ToolRegistry::new(entries);
        let mut capabilities = Map::new();
        if !tools.is_empty() {
            capabilities.insert("tools".into(), json!({}));
        }
        Ok(Server {
            inner: Arc::new(Inner {
                info: Value::Object(self.info),
                instructions: self.instructions,
                capabilities: Value::Object(capabilities),
                tools,
                discover_cache: self.discover_cache,
                list_cache: self.list_cache,
                page_size: self.page_size,
                limits: self.limits,
            }),
        })
    }
}
