//! The tool registry: definitions checked and compiled once.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use snodo_rules::HeaderParam;

use crate::schema::CompiledSchema;
use crate::tool::{DynTool, ToolDefinition};

/// One registered tool with everything computed at build time.
pub(crate) struct ToolEntry {
    pub(crate) definition: ToolDefinition,
    pub(crate) tool: Arc<dyn DynTool>,
    /// String entries of the input schema's top-level `required`, in order.
    pub(crate) required: Vec<String>,
    pub(crate) input: Arc<dyn CompiledSchema>,
    pub(crate) output: Option<Arc<dyn CompiledSchema>>,
    /// Arguments mirrored into `Mcp-Param-*` headers.
    pub(crate) headers: Vec<HeaderParam>,
}

/// Tools sorted by name, with a name index and the serialized definitions.
#[derive(Default)]
pub(crate) struct ToolRegistry {
    entries: Vec<ToolEntry>,
    index: HashMap<String, usize>,
    /// The JSON definitions in `tools/list` order.
    pub(crate) listed: Vec<Value>,
    /// A digest of `listed`, binding cursors to this catalog.
    pub(crate) digest: u64,
}

impl ToolRegistry {
    pub(crate) fn new(mut entries: Vec<ToolEntry>) -> Self {
        entries.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
        let index = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.definition.name.clone(), i))
            .collect();
        let listed: Vec<Value> = entries
            .iter()
            .map(|e| serde_json::to_value(&e.definition).unwrap_or(Value::Null))
            .collect();
        let digest = super::list::catalog_digest(&listed);
        Self {
            entries,
            index,
            listed,
            digest,
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The string entries of a schema's top-level `required` list.
pub(crate) fn required_of(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
