//! The JSON Schema 2020-12 meta-schema, as rules: every keyword a vocabulary
//! defines must have a value of the shape the meta-schema allows, and every
//! subschema must be a schema (an object or a boolean).
//!
//! Keywords no vocabulary defines (`x-mcp-header`, annotations of one's own)
//! are left alone, as the meta-schema does. Values of `const`, `enum`,
//! `default` and `examples` are data, not schemas, and are not walked.

use serde_json::{Map, Value};

use crate::{RuleError, escape_pointer_token};

/// The simple types `type` may name.
const SIMPLE_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// What one keyword's value must be.
#[derive(Clone, Copy)]
enum Shape {
    /// A schema (object or boolean).
    Schema,
    /// An object whose values are schemas.
    SchemaMap,
    /// A non-empty array of schemas.
    SchemaArray,
    /// A string.
    String,
    /// A boolean.
    Bool,
    /// Any number.
    Number,
    /// A number greater than 0.
    PositiveNumber,
    /// An integer (a number without a fractional part) of at least 0.
    NonNegativeInteger,
    /// An array (of anything).
    Array,
    /// An array of unique strings.
    StringSet,
    /// An object whose values are arrays of unique strings.
    StringSetMap,
    /// A simple type name or a non-empty array of unique ones.
    Type,
    /// An object whose values are booleans.
    BoolMap,
    /// An anchor name: `^[A-Za-z_][-A-Za-z0-9._]*$`.
    Anchor,
    /// `dependencies` (pre-2019 keyword): an object of schemas or string sets.
    Dependencies,
    /// Any JSON value.
    Any,
}

/// The keywords of the 2020-12 vocabularies (core, applicator, unevaluated,
/// validation, meta-data, format-annotation, content) and the deprecated ones
/// its meta-schema still describes.
fn shape_of(keyword: &str) -> Option<Shape> {
    use Shape::*;
    Some(match keyword {
        // Core.
        "$id" | "$schema" | "$ref" | "$dynamicRef" | "$comment" | "$recursiveRef" => String,
        "$anchor" | "$dynamicAnchor" => Anchor,
        "$recursiveAnchor" => Bool,
        "$vocabulary" => BoolMap,
        "$defs" | "definitions" => SchemaMap,
        // Applicator.
        "prefixItems" | "allOf" | "anyOf" | "oneOf" => SchemaArray,
        "items"
        | "contains"
        | "additionalProperties"
        | "propertyNames"
        | "if"
        | "then"
        | "else"
        | "not"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "contentSchema" => Schema,
        "properties" | "patternProperties" | "dependentSchemas" => SchemaMap,
        "dependencies" => Dependencies,
        // Validation.
        "type" => Type,
        "const" | "default" => Any,
        "enum" | "examples" => Array,
        "multipleOf" => PositiveNumber,
        "maximum" | "exclusiveMaximum" | "minimum" | "exclusiveMinimum" => Number,
        "maxLength" | "minLength" | "maxItems" | "minItems" | "maxContains" | "minContains"
        | "maxProperties" | "minProperties" => NonNegativeInteger,
        "pattern" | "format" | "contentEncoding" | "contentMediaType" | "title" | "description" => {
            String
        }
        "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => Bool,
        "required" => StringSet,
        "dependentRequired" => StringSetMap,
        _ => return None,
    })
}

/// Checks `schema` and every subschema against the 2020-12 meta-schema's
/// keyword shapes. The error's pointer names the offending keyword.
///
/// ```
/// use serde_json::json;
/// let err = snodo_rules::check_schema_keywords(&json!({
///     "type": "object",
///     "properties": {"name": {"type": "string", "minLength": "one"}}
/// }))
/// .unwrap_err();
/// assert_eq!(err.pointer, "/properties/name/minLength");
/// assert_eq!(err.message, "`minLength` must be a non-negative integer");
/// ```
pub fn check_schema_keywords(schema: &Value) -> Result<(), RuleError> {
    let mut pointer = String::new();
    check_schema(schema, &mut pointer, 0)
}

/// How deep subschemas may nest before the document is refused (the walk is
/// recursive; a schema this deep is a mistake or an attack).
pub const MAX_SCHEMA_DEPTH: usize = 64;

fn check_schema(schema: &Value, pointer: &mut String, depth: usize) -> Result<(), RuleError> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(RuleError::new(
            pointer.clone(),
            format!("schemas nest more than {MAX_SCHEMA_DEPTH} levels deep"),
        ));
    }
    match schema {
        Value::Bool(_) => Ok(()),
        Value::Object(map) => {
            for (keyword, value) in map {
                let Some(shape) = shape_of(keyword) else {
                    continue;
                };
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape_pointer_token(keyword));
                check_keyword(keyword, shape, value, pointer, depth)?;
                pointer.truncate(len);
            }
            Ok(())
        }
        other => Err(RuleError::new(
            pointer.clone(),
            format!(
                "a schema must be a JSON object or a boolean, found {}",
                type_name(other)
            ),
        )),
    }
}

fn check_keyword(
    keyword: &str,
    shape: Shape,
    value: &Value,
    pointer: &mut String,
    depth: usize,
) -> Result<(), RuleError> {
    let fail = |what: &str| {
        Err(RuleError::new(
            pointer.clone(),
            format!("`{keyword}` {what}"),
        ))
    };
    match shape {
        Shape::Any => Ok(()),
        Shape::Schema => match value {
            Value::Object(_) | Value::Bool(_) => check_schema(value, pointer, depth + 1),
            _ => fail("must be a schema (a JSON object or a boolean)"),
        },
        Shape::SchemaMap => match value {
            Value::Object(map) => each_member(map, pointer, |v, p| check_schema(v, p, depth + 1)),
            _ => fail("must be an object whose values are schemas"),
        },
        Shape::SchemaArray => match value {
            Value::Array(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    check_schema(item, pointer, depth + 1)?;
                    pointer.truncate(len);
                }
                Ok(())
            }
            _ => fail("must be a non-empty array of schemas"),
        },
        Shape::String => match value {
            Value::String(_) => Ok(()),
            _ => fail("must be a string"),
        },
        Shape::Bool => match value {
            Value::Bool(_) => Ok(()),
            _ => fail("must be a boolean"),
        },
        Shape::Number => match value {
            Value::Number(_) => Ok(()),
            _ => fail("must be a number"),
        },
        Shape::PositiveNumber => match value.as_f64() {
            Some(n) if n > 0.0 => Ok(()),
            _ => fail("must be a number greater than 0"),
        },
        Shape::NonNegativeInteger => {
            if is_non_negative_integer(value) {
                Ok(())
            } else {
                fail("must be a non-negative integer")
            }
        }
        Shape::Array => match value {
            Value::Array(_) => Ok(()),
            _ => fail("must be an array"),
        },
        Shape::StringSet => match string_set(value) {
            Ok(()) => Ok(()),
            Err(why) => fail(why),
        },
        Shape::StringSetMap => match value {
            Value::Object(map) => each_member(map, pointer, |v, p| {
                string_set(v).map_err(|why| {
                    RuleError::new(p.clone(), format!("each value of `{keyword}` {why}"))
                })
            }),
            _ => fail("must be an object whose values are arrays of unique strings"),
        },
        Shape::Type => match value {
            Value::String(t) if SIMPLE_TYPES.contains(&t.as_str()) => Ok(()),
            Value::Array(items)
                if !items.is_empty()
                    && items
                        .iter()
                        .all(|t| t.as_str().is_some_and(|t| SIMPLE_TYPES.contains(&t)))
                    && all_unique(items) =>
            {
                Ok(())
            }
            _ => fail(&format!(
                "must be one of {} or a non-empty array of unique ones",
                SIMPLE_TYPES.map(|t| format!("\"{t}\"")).join(", ")
            )),
        },
        Shape::BoolMap => match value {
            Value::Object(map) if map.values().all(Value::is_boolean) => Ok(()),
            _ => fail("must be an object whose values are booleans"),
        },
        Shape::Anchor => match value {
            Value::String(name) if is_anchor(name) => Ok(()),
            _ => fail(
                "must be a name of letters, digits, `-`, `_` and `.` not starting with a digit, `-` or `.`",
            ),
        },
        Shape::Dependencies => match value {
            Value::Object(map) => each_member(map, pointer, |v, p| match v {
                Value::Array(_) => string_set(v).map_err(|why| {
                    RuleError::new(p.clone(), format!("each array of `{keyword}` {why}"))
                }),
                _ => check_schema(v, p, depth + 1),
            }),
            _ => fail("must be an object of schemas or arrays of strings"),
        },
    }
}

fn each_member(
    map: &Map<String, Value>,
    pointer: &mut String,
    mut check: impl FnMut(&Value, &mut String) -> Result<(), RuleError>,
) -> Result<(), RuleError> {
    for (key, value) in map {
        let len = pointer.len();
        pointer.push('/');
        pointer.push_str(&escape_pointer_token(key));
        check(value, pointer)?;
        pointer.truncate(len);
    }
    Ok(())
}

fn string_set(value: &Value) -> Result<(), &'static str> {
    match value {
        Value::Array(items) if items.iter().all(Value::is_string) => {
            if all_unique(items) {
                Ok(())
            } else {
                Err("must not list a string twice")
            }
        }
        _ => Err("must be an array of strings"),
    }
}

fn all_unique(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(i, a)| items[..i].iter().all(|b| a != b))
}

fn is_non_negative_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.as_u64().is_some()
                || n.as_f64()
                    .is_some_and(|f| f >= 0.0 && f.fract() == 0.0 && f.is_finite())
        }
        _ => false,
    }
}

fn is_anchor(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointer_of(schema: Value) -> String {
        check_schema_keywords(&schema).unwrap_err().pointer
    }

    #[test]
    fn well_formed_schemas_pass() {
        for schema in [
            json!(true),
            json!({}),
            serde_json::from_str::<Value>(
                r#"{
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": "urn:x", "$anchor": "a_1", "$comment": "c",
                "type": ["string", "null"], "minLength": 1, "maxLength": 2.0,
                "pattern": "^a", "format": "email", "enum": [], "const": {"any": [1]},
                "default": 3, "examples": [1], "title": "t", "description": "d",
                "deprecated": false, "readOnly": true, "writeOnly": false,
                "multipleOf": 0.5, "minimum": -1, "exclusiveMaximum": 1e3,
                "required": ["a", "b"], "dependentRequired": {"a": ["b"]},
                "properties": {"a": {"items": false}}, "patternProperties": {"^x": true},
                "additionalProperties": {"type": "integer"}, "propertyNames": {"maxLength": 3},
                "prefixItems": [true], "items": {}, "contains": {}, "minContains": 0,
                "allOf": [{}], "anyOf": [true], "oneOf": [false], "not": {},
                "if": {}, "then": {}, "else": {}, "$defs": {"d": {}}, "definitions": {},
                "dependentSchemas": {"a": {}}, "dependencies": {"a": ["b"], "c": {}},
                "unevaluatedItems": false, "unevaluatedProperties": {},
                "contentEncoding": "base64", "contentMediaType": "image/png",
                "contentSchema": {}, "$vocabulary": {"urn:v": true},
                "x-mcp-header": 42, "x-anything": {"minLength": "ignored"}
            }"#,
            )
            .unwrap(),
        ] {
            assert_eq!(check_schema_keywords(&schema), Ok(()), "{schema}");
        }
    }

    #[test]
    fn a_keyword_of_the_wrong_shape_is_named_by_its_pointer() {
        let cases = [
            (json!({"minLength": "one"}), "/minLength"),
            (json!({"minLength": -1}), "/minLength"),
            (json!({"maxItems": 1.5}), "/maxItems"),
            (json!({"required": 3}), "/required"),
            (json!({"required": ["a", "a"]}), "/required"),
            (json!({"enum": {}}), "/enum"),
            (json!({"type": "text"}), "/type"),
            (json!({"type": []}), "/type"),
            (json!({"type": ["string", "string"]}), "/type"),
            (json!({"multipleOf": 0}), "/multipleOf"),
            (json!({"minimum": "0"}), "/minimum"),
            (json!({"pattern": 1}), "/pattern"),
            (json!({"uniqueItems": "yes"}), "/uniqueItems"),
            (json!({"allOf": []}), "/allOf"),
            (json!({"anyOf": [1]}), "/anyOf/0"),
            (json!({"properties": []}), "/properties"),
            (
                json!({"properties": {"a/b": {"type": 1}}}),
                "/properties/a~1b/type",
            ),
            (json!({"items": [{}]}), "/items"),
            (json!({"$anchor": "1a"}), "/$anchor"),
            (
                json!({"dependentRequired": {"a": [1]}}),
                "/dependentRequired/a",
            ),
            (json!({"$defs": {"x": {"not": 3}}}), "/$defs/x/not"),
            (json!({"description": null}), "/description"),
        ];
        for (schema, pointer) in cases {
            assert_eq!(pointer_of(schema.clone()), pointer, "{schema}");
        }
    }

    #[test]
    fn messages_name_the_keyword_and_what_it_must_be() {
        let err = check_schema_keywords(&json!({"required": 3})).unwrap_err();
        assert_eq!(err.message, "`required` must be an array of strings");
        let err = check_schema_keywords(&json!({"enum": {}})).unwrap_err();
        assert_eq!(err.message, "`enum` must be an array");
        let err = check_schema_keywords(&json!(3)).unwrap_err();
        assert_eq!(
            err.message,
            "a schema must be a JSON object or a boolean, found a number"
        );
    }

    #[test]
    fn depth_is_bounded() {
        let mut schema = json!({});
        for _ in 0..=MAX_SCHEMA_DEPTH {
            schema = json!({ "not": schema });
        }
        let err = check_schema_keywords(&schema).unwrap_err();
        assert!(err.message.contains("nest more than"), "{err}");
    }
}
