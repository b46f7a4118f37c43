//! Multi round-trip requests: asking the client for input mid-call.
//!
//! A handler returns [`ToolResult::input_required`](crate::ToolResult::input_required)
//! with the input requests; the client fulfils them and retries the original
//! request with `inputResponses` (and the echoed `requestState`).

use serde_json::{Map, Value, json};

/// An `input_required` result: input requests keyed by a name the handler
/// chooses, and/or opaque request state.
///
/// ```
/// use snodo::InputRequired;
/// let ask = InputRequired::new()
///     .elicit_form("confirm", "Delete it?", serde_json::json!({
///         "type": "object",
///         "properties": {"ok": {"type": "boolean"}},
///         "required": ["ok"]
///     }))
///     .state("step-1");
/// assert_eq!(ask.to_wire()["resultType"], "input_required");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    requests: Map<String, Value>,
    state: Option<String>,
}

impl InputRequired {
    /// An empty set of input requests.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an input request with any method and params.
    pub fn request(mut self, key: impl Into<String>, method: &str, params: Value) -> Self {
        self.requests
            .insert(key.into(), json!({"method": method, "params": params}));
        self
    }

    /// Asks the user to fill a form (`elicitation/create`, form mode).
    pub fn elicit_form(self, key: impl Into<String>, message: &str, schema: Value) -> Self {
        self.request(
            key,
            "elicitation/create",
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
        )
    }

    /// Asks the user to visit a URL (`elicitation/create`, url mode).
    pub fn elicit_url(self, key: impl Into<String>, message: &str, url: &str) -> Self {
        self.request(
            key,
            "elicitation/create",
            json!({"mode": "url", "message": message, "url": url}),
        )
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub fn sample(self, key: impl Into<String>, params: Value) -> Self {
        self.request(key, "sampling/createMessage", params)
    }

    /// Asks for the client's roots (`roots/list`).
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, "roots/list", json!({}))
    }

    /// Sets the opaque state the client echoes on retry.
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// The input requests, by key.
    pub fn requests(&self) -> &Map<String, Value> {
        &self.requests
    }

    /// The request state, if any.
    pub fn request_state(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The wire form: `{"resultType": "input_required", "inputRequests"?, "requestState"?}`.
    pub fn to_wire(&self) -> Value {
        let mut out = Map::new();
        out.insert("resultType".into(), "input_required".into());
        if !self.requests.is_empty() {
            out.insert("inputRequests".into(), Value::Object(self.requests.clone()));
        }
        if let Some(state) = &self.state {
            out.insert("requestState".into(), state.clone().into());
        }
        Value::Object(out)
    }
}
