//! The tool registry: definitions checked and compiled once.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use snodo_rules::HeaderParam;

use super::error::BuildError;
use super::list::{Listed, Listing, Written};
use crate::schema::{CompiledSchema, Validator};
use crate::tool::{DynTool, Tool, definition};

/// One registered tool with everything computed at build time.
pub(crate) struct ToolEntry {
    pub(crate) tool: Arc<dyn DynTool>,
    /// String entries of the input schema's top-level `required`, in order.
    pub(crate) required: Vec<String>,
    pub(crate) input: Arc<dyn CompiledSchema>,
    pub(crate) output: Option<Arc<dyn CompiledSchema>>,
    /// Arguments mirrored into `Mcp-Param-*` headers.
    pub(crate) headers: Vec<HeaderParam>,
    /// The definition as `tools/list` publishes it, with its schemas as
    /// written (`inputSchema`, `outputSchema`) when the tool gives their text.
    pub(crate) listed: Listed,
    /// The OAuth scopes a call needs (empty: the server's defaults).
    pub(crate) scopes: Vec<String>,
    pub(crate) task: crate::task::TaskSupport,
    pub(crate) task_retries: u32,
    /// The registered state the handler needs.
    pub(crate) needs: Vec<crate::extract::StateNeed>,
    /// Bound to an app and meant for it alone (MCP Apps' visibility
    /// `["app"]`): unknown to a host without MCP Apps.
    pub(crate) app_only: bool,
}

impl ToolEntry {
    /// The tool's name.
    pub(crate) fn name(&self) -> &str {
        &self.listed.key
    }

    /// Checks a tool against the definition rules and compiles its schemas.
    pub(crate) fn new<T: Tool>(tool: T, validator: &dyn Validator) -> Result<Self, BuildError> {
        let def = definition(&tool);
        let name = def.name.clone();
        let rule = |rule: snodo_rules::RuleError| BuildError::Tool {
            tool: name.clone(),
            rule,
        };
        snodo_rules::check_tool_name(&name).map_err(rule)?;
        let headers = snodo_rules::check_input_schema(&def.input_schema).map_err(rule)?;
        if let Some(out) = &def.output_schema {
            snodo_rules::check_output_schema(out).map_err(rule)?;
        }
        for (field, value) in [("annotations", &def.annotations), ("_meta", &def.meta)] {
            if value.as_ref().is_some_and(|v| !v.is_object()) {
                return Err(BuildError::Tool {
                    tool: name.clone(),
                    rule: format!("{field} must be a JSON object").into(),
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
            validator.compile(schema).map_err(|e| BuildError::Schema {
                tool: name.clone(),
                which,
                message: e.message,
            })
        };
        let scopes = tool.required_scopes();
        let (task, task_retries) = (tool.task_support(), tool.task_retries());
        for scope in &scopes {
            snodo_rules::check_scope(scope).map_err(rule)?;
        }
        let input = compile(&def.input_schema, "input")?;
        let output = match &def.output_schema {
            Some(schema) => Some(compile(schema, "output")?),
            None => None,
        };
        let mut written = Written::new();
        for (member, text, schema) in [
            (
                "inputSchema",
                tool.input_schema_text(),
                Some(&def.input_schema),
            ),
            (
                "outputSchema",
                tool.output_schema_text(),
                def.output_schema.as_ref(),
            ),
        ] {
            let Some(text) = text else { continue };
            if serde_json::from_str::<Value>(text).ok().as_ref() != schema {
                return Err(BuildError::Tool {
                    tool: name.clone(),
                    rule: format!("the {member} text does not encode the same JSON as the schema")
                        .into(),
                });
            }
            written.push((member, text.into()));
        }
        let listed = serde_json::to_value(&def).unwrap_or(Value::Null);
        let app_only = crate::apps::tool_binding(def.meta.as_ref()).is_some_and(|(_, only)| only);
        Ok(Self {
            app_only,
            needs: tool.state_needs(),
            required: required_of(&def.input_schema),
            listed: Listed::new(&listed, &written, "name"),
            tool: Arc::new(tool),
            input,
            output,
            headers,
            scopes,
            task,
            task_retries,
        })
    }
}

/// Tools sorted by name, with a name index and the serialized definitions.
#[derive(Default)]
pub(crate) struct ToolRegistry {
    entries: Vec<Arc<ToolEntry>>,
    index: HashMap<String, usize>,
    /// The definitions in `tools/list` order, encoded once.
    pub(crate) listing: Listing,
}

impl ToolRegistry {
    pub(crate) fn new(mut entries: Vec<Arc<ToolEntry>>) -> Result<Self, BuildError> {
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        let mut index = HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            if index.insert(e.name().to_string(), i).is_some() {
                return Err(BuildError::DuplicateTool(e.name().to_string()));
            }
        }
        let listing = Listing::new(entries.iter().map(|e| &e.listed));
        Ok(Self {
            entries,
            index,
            listing,
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    pub(crate) fn entries(&self) -> &[Arc<ToolEntry>] {
        &self.entries
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
