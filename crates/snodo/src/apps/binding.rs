//! [`ToolUi`]: a tool's binding to its app (`_meta.ui`), as a server
//! writes it and a client reads it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::names::LEGACY_URI_KEY;

/// Who may use a tool bound to an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model sees and calls it.
    Model,
    /// The app calls it (through the host), from this server only.
    App,
}

/// A tool's `_meta.ui`: the app it renders in, and who may use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUi {
    resource_uri: String,
    visibility: Option<Vec<Visibility>>,
}

impl ToolUi {
    /// The tool renders in the app at `resource_uri` (a `ui://` URI; the
    /// `ui` key of `#[snodo::tool]` checks it at compile time).
    pub fn new(resource_uri: impl Into<String>) -> Self {
        Self {
            resource_uri: resource_uri.into(),
            visibility: None,
        }
    }

    /// Who may use the tool (by default the model and the app).
    pub fn visibility(mut self, visibility: impl IntoIterator<Item = Visibility>) -> Self {
        self.visibility = Some(visibility.into_iter().collect());
        self
    }

    /// The binding a tool's `_meta` holds (`ui.resourceUri`, else the
    /// deprecated flat key; `ui.visibility`), as a client reads it.
    pub fn from_meta(meta: &Value) -> Option<Self> {
        let ui = meta.get("ui");
        let uri = ui
            .and_then(|u| u.get("resourceUri"))
            .or_else(|| meta.get(LEGACY_URI_KEY))
            .and_then(Value::as_str)?;
        let visibility = ui
            .and_then(|u| u.get("visibility"))
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        Some(Self {
            resource_uri: uri.to_string(),
            visibility,
        })
    }

    /// The app's URI.
    pub fn resource_uri(&self) -> &str {
        &self.resource_uri
    }

    /// Who may use the tool, when it says.
    pub fn visibility_of(&self) -> Option<&[Visibility]> {
        self.visibility.as_deref()
    }

    /// Whether the tool is meant for the app alone (`["app"]`): a host
    /// keeps it from the model.
    pub fn is_app_only(&self) -> bool {
        self.visibility
            .as_ref()
            .is_some_and(|v| !v.is_empty() && v.iter().all(|x| *x == Visibility::App))
    }

    /// The `_meta.ui` object.
    pub fn to_value(&self) -> Value {
        let mut ui = Map::new();
        ui.insert("resourceUri".into(), self.resource_uri.clone().into());
        if let Some(v) = &self.visibility {
            ui.insert("visibility".into(), json!(v));
        }
        Value::Object(ui)
    }

    /// `meta` (a `_meta` object, or nothing) with `"ui"` set to this.
    pub fn into_meta(&self, meta: Option<Value>) -> Value {
        let mut meta = match meta {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        meta.insert("ui".into(), self.to_value());
        Value::Object(meta)
    }
}

/// What a listed tool's `_meta` says of its app: the URI it names (from
/// `_meta.ui.resourceUri`, else the deprecated flat key), and whether it is
/// meant for the app alone.
pub(crate) fn tool_binding(meta: Option<&Value>) -> Option<(String, bool)> {
    let ui = ToolUi::from_meta(meta?)?;
    let app_only = ui.is_app_only();
    Some((ui.resource_uri, app_only))
}

/// `meta` without what MCP Apps put there (`ui` and the flat key); `None`
/// when nothing else is left.
pub(crate) fn without_ui(meta: &Value) -> Option<Value> {
    let mut m = meta.as_object()?.clone();
    m.remove("ui");
    m.remove(LEGACY_URI_KEY);
    (!m.is_empty()).then_some(Value::Object(m))
}
