//! Shape rules for tool input and output schemas.

use serde_json::Value;

use crate::{HeaderParam, RuleError, check_header_annotations, check_schema_keywords};

/// Checks a tool's input schema: a JSON object whose keywords have the values
/// the JSON Schema 2020-12 meta-schema allows, whose root declares
/// `"type": "object"`, with valid `x-mcp-header` annotations; returns the
/// arguments mirrored into `Mcp-Param-*` headers.
pub fn check_input_schema(schema: &Value) -> Result<Vec<HeaderParam>, RuleError> {
    let Value::Object(map) = schema else {
        return Err(RuleError::new("", "input schema must be a JSON object"));
    };
    check_schema_keywords(schema)?;
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(_) => {
            return Err(RuleError::new(
                "/type",
                "input schema must declare \"type\": \"object\" at its root",
            ));
        }
        None => {
            return Err(RuleError::new(
                "",
                "input schema must declare \"type\": \"object\" at its root",
            ));
        }
    }
    check_header_annotations(schema)
}

/// Checks a tool's output schema: any JSON Schema document (an object or a
/// boolean) whose keywords have the values the 2020-12 meta-schema allows.
pub fn check_output_schema(schema: &Value) -> Result<(), RuleError> {
    match schema {
        Value::Object(_) | Value::Bool(_) => check_schema_keywords(schema),
        _ => Err(RuleError::new(
            "",
            "output schema must be a JSON object or a boolean",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_root_must_be_an_object_type() {
        assert!(check_input_schema(&json!({"type": "object"})).is_ok());
        assert_eq!(
            check_input_schema(&json!({"type": "string"}))
                .unwrap_err()
                .pointer,
            "/type"
        );
        assert_eq!(check_input_schema(&json!({})).unwrap_err().pointer, "");
        assert!(check_input_schema(&json!(true)).is_err());
        assert!(check_input_schema(&json!(null)).is_err());
    }

    #[test]
    fn output_schema_may_be_any_schema() {
        assert!(check_output_schema(&json!({"type": "array"})).is_ok());
        assert!(check_output_schema(&json!(true)).is_ok());
        assert!(check_output_schema(&json!("object")).is_err());
    }
}
