//! Elicitation: form schemas and the client's answers.

use serde_json::Value;

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
