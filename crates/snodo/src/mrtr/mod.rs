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

    /// Reads an `input_required` result as received: its input requests
    /// (each with a string `method`) and its request state.
    pub(crate) fn from_wire(result: &Map<String, Value>) -> Result<Self, String> {
        let mut out = InputRequired::new();
        match result.get("inputRequests") {
            None => {}
            Some(Value::Object(requests)) => {
                for (key, request) in requests {
                    let Some(method) = request.get("method").and_then(Value::as_str) else {
                        return Err(format!("input request {key:?} has no method"));
                    };
                    let params = request.get("params").cloned().unwrap_or(Value::Null);
                    out = out.request(key.clone(), method, params);
                }
            }
            Some(_) => return Err("inputRequests is not an object".into()),
        }
        match result.get("requestState") {
            None => {}
            Some(Value::String(state)) => out = out.state(state.clone()),
            Some(_) => return Err("requestState is not a string".into()),
        }
        Ok(out)
    }
}

mod elicit;
mod state;

/// A result as a client received it: the `input_required` answer it is,
/// else each item of its `member` array read as `T` (an error names the
/// item, `contents[2]: ...`, or says that `what` has no such array).
pub(crate) fn received<T: serde::de::DeserializeOwned>(
    mut result: Map<String, Value>,
    member: &str,
    what: &str,
) -> Result<Result<Vec<T>, InputRequired>, String> {
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        return InputRequired::from_wire(&result).map(Err);
    }
    let Some(Value::Array(items)) = result.remove(member) else {
        return Err(format!("{what} needs a `{member}` array"));
    };
    // Each item moves into its type: nothing is copied.
    let read = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| T::deserialize(item).map_err(|e| format!("{member}[{i}]: {e}")));
    read.collect::<Result<Vec<_>, _>>().map(Ok)
}

pub use elicit::check_form_schema;
pub use state::{DEFAULT_STATE_TTL, MAX_STATE_TTL, StateError, StateSealer};

/// The client capability an input request needs, as a `ClientCapabilities`
/// fragment; `None` when the client declared it.
pub(crate) fn missing_capability(
    request: &Value,
    caps: &Value,
) -> Result<Option<Value>, crate::Error> {
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let params = request.get("params").unwrap_or(&Value::Null);
    let has = |path: &[&str]| {
        let mut node = caps;
        for key in path {
            match node.get(key) {
                Some(v) if !v.is_null() => node = v,
                _ => return false,
            }
        }
        true
    };
    Ok(match method {
        "elicitation/create" => {
            let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
            let elicitation = caps.get("elicitation");
            let declared = match (mode, elicitation) {
                (_, None | Some(Value::Null)) => false,
                ("form", Some(e)) => e
                    .as_object()
                    .is_some_and(|m| m.is_empty() || m.contains_key("form")),
                ("url", Some(e)) => e.get("url").is_some(),
                _ => false,
            };
            (!declared).then(|| json!({"elicitation": {mode: {}}}))
        }
        "sampling/createMessage" => {
            if !has(&["sampling"]) {
                Some(json!({"sampling": {}}))
            } else if params.get("tools").is_some() && !has(&["sampling", "tools"]) {
                Some(json!({"sampling": {"tools": {}}}))
            } else {
                None
            }
        }
        "roots/list" => (!has(&["roots"])).then(|| json!({"roots": {}})),
        other => {
            return Err(crate::Error::internal("Invalid input request").with_cause(format!(
                "input requests may only use elicitation/create, sampling/createMessage or roots/list, not {other:?}"
            )));
        }
    })
}

/// Checks an `input_required` result against the client's capabilities:
/// -32021 naming every missing capability.
pub(crate) fn check_input_required(
    request: &InputRequired,
    caps: &Value,
) -> Result<(), crate::Error> {
    if request.requests.is_empty() && request.state.is_none() {
        return Err(crate::Error::internal(
            "Input required result must carry input requests or request state",
        ));
    }
    let mut missing = Map::new();
    for value in request.requests.values() {
        if value.get("method").and_then(Value::as_str) == Some("elicitation/create")
            && value["params"]
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("form")
                == "form"
        {
            check_form_schema(&value["params"]["requestedSchema"]).map_err(|reason| {
                crate::Error::internal("Invalid elicitation schema").with_cause(reason)
            })?;
        }
        if let Some(Value::Object(need)) = missing_capability(value, caps)? {
            for (k, v) in need {
                missing.insert(k, v);
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(crate::Error::missing_client_capability(Value::Object(
            missing,
        )))
    }
}
