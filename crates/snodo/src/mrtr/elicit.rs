//! Elicitation: form schemas and the client's answers.

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
    /// use snodo::mrtr::{ElicitAction, ElicitResponse};
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

const STRING_KEYS: &[&str] = &[
    "type",
    "title",
    "description",
    "minLength",
    "maxLength",
    "format",
    "default",
    "enum",
    "enumNames",
    "oneOf",
];
const NUMBER_KEYS: &[&str] = &[
    "type",
    "title",
    "description",
    "minimum",
    "maximum",
    "default",
];
const BOOLEAN_KEYS: &[&str] = &["type", "title", "description", "default"];
const ARRAY_KEYS: &[&str] = &[
    "type",
    "title",
    "description",
    "minItems",
    "maxItems",
    "items",
    "default",
];

/// Checks a form-mode `requestedSchema`: a flat object of primitive
/// properties (string, number, integer, boolean, string enums, multi-select
/// arrays); unknown keywords are refused.
pub fn check_form_schema(schema: &Value) -> Result<(), String> {
    let Some(root) = schema.as_object() else {
        return Err("requestedSchema must be an object".into());
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err("requestedSchema must have \"type\": \"object\"".into());
    }
    for key in root.keys() {
        if !["$schema", "type", "properties", "required"].contains(&key.as_str()) {
            return Err(format!("requestedSchema may not use {key:?}"));
        }
    }
    let props = match root.get("properties") {
        Some(Value::Object(p)) => p,
        None => return Ok(()),
        Some(_) => return Err("properties must be an object".into()),
    };
    for (name, prop) in props {
        let Some(prop) = prop.as_object() else {
            return Err(format!("property {name:?} must be a schema object"));
        };
        let allowed = match prop.get("type").and_then(Value::as_str) {
            Some("string") => STRING_KEYS,
            Some("number" | "integer") => NUMBER_KEYS,
            Some("boolean") => BOOLEAN_KEYS,
            Some("array") => ARRAY_KEYS,
            _ => {
                return Err(format!(
                    "property {name:?} must be a string, number, integer, boolean or array"
                ));
            }
        };
        if let Some(bad) = prop.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!("property {name:?} may not use {bad:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn form_schemas_are_flat_and_primitive() {
        assert!(check_form_schema(&json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})).is_ok());
        assert!(
            check_form_schema(&json!({"type": "object", "properties": {"a": {"type": "object"}}}))
                .is_err()
        );
        assert!(
            check_form_schema(
                &json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}})
            )
            .is_err()
        );
        assert!(check_form_schema(&json!({"type": "array"})).is_err());
    }
}
