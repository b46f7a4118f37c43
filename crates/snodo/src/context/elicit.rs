//! A user's answer to an elicitation, as a handler reads it on the retry of a
//! multi round-trip request ([`Context::elicitation`](crate::Context::elicitation)).

use serde_json::{Map, Value};

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAction {
    /// Submitted the form (or consented to open the URL).
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// A client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitResponse {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only).
    pub content: Map<String, Value>,
}

impl ElicitResponse {
    /// Reads an answer; `None` when it does not have the `ElicitResult` shape.
    ///
    /// ```
    /// use snodo::handler::{ElicitAction, ElicitResponse};
    /// let r = ElicitResponse::from_value(&serde_json::json!({"action": "accept", "content": {"ok": true}})).unwrap();
    /// assert_eq!(r.action, ElicitAction::Accept);
    /// assert!(ElicitResponse::from_value(&serde_json::json!(12345)).is_none());
    /// ```
    pub fn from_value(value: &Value) -> Option<Self> {
        let action = match value.get("action")?.as_str()? {
            "accept" => ElicitAction::Accept,
            "decline" => ElicitAction::Decline,
            "cancel" => ElicitAction::Cancel,
            _ => return None,
        };
        let content = match value.get("content") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => {
                let primitive = |v: &Value| match v {
                    Value::String(_) | Value::Number(_) | Value::Bool(_) => true,
                    Value::Array(items) => items.iter().all(Value::is_string),
                    _ => false,
                };
                if !map.values().all(primitive) {
                    return None;
                }
                map.clone()
            }
            Some(_) => return None,
        };
        Some(Self { action, content })
    }

    /// A submitted string value.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.content.get(key)?.as_str()
    }

    /// A submitted boolean value.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.content.get(key)?.as_bool()
    }
}
