//! `x-mcp-header` annotations: which arguments are mirrored into `Mcp-Param-*` headers.

use serde_json::{Map, Value};

use crate::{RuleError, escape_pointer_token};

/// The annotation keyword.
pub(crate) const KEYWORD: &str = "x-mcp-header";

/// Keywords whose values are data, not subschemas: never searched for annotations.
const DATA_KEYWORDS: [&str; 4] = ["const", "default", "enum", "examples"];

/// The JSON type of an argument mirrored into a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderType {
    /// `"type": "string"`
    String,
    /// `"type": "integer"`
    Integer,
    /// `"type": "boolean"`
    Boolean,
}

/// One argument mirrored into an `Mcp-Param-{header}` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The annotation's value: the header is `Mcp-Param-{header}`.
    pub header: String,
    /// The property names leading from the arguments object to the value.
    pub path: Vec<String>,
    /// The declared type of the value.
    pub ty: HeaderType,
}

/// True when `s` is a non-empty RFC 9110 token (`1*tchar`).
///
/// ```
/// assert!(snodo_rules::is_token("Region"));
/// assert!(!snodo_rules::is_token("two words"));
/// assert!(!snodo_rules::is_token(""));
/// ```
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Checks every `x-mcp-header` annotation of an input schema and returns the
/// mirrored arguments, in schema order.
///
/// An annotation is valid when its value is a non-empty RFC 9110 token, the
/// property's `type` is exactly `"string"`, `"integer"` or `"boolean"`, the value is
/// unique ignoring case, and the property is reached from the root through
/// `properties` keywords only.
pub fn check_header_annotations(schema: &Value) -> Result<Vec<HeaderParam>, RuleError> {
    let mut found = Vec::new();
    if let Value::Object(root) = schema {
        if root.contains_key(KEYWORD) {
            return Err(RuleError::new(
                format!("/{KEYWORD}"),
                "x-mcp-header may not annotate the root schema",
            ));
        }
        collect_reachable(root, &mut Vec::new(), "", &mut found)?;
    }
    // Anything annotated but not reached through `properties` alone is misplaced.
    let mut reachable = Vec::new();
    for param in &found {
        reachable.push(pointer_of(&param.path));
    }
    find_misplaced(schema, &mut String::new(), &reachable)?;
    for (i, a) in found.iter().enumerate() {
        if found[..i]
            .iter()
            .any(|b| b.header.eq_ignore_ascii_case(&a.header))
        {
            return Err(RuleError::new(
                format!("{}/{KEYWORD}", pointer_of(&a.path)),
                format!(
                    "x-mcp-header values must be unique ignoring case ({:?} repeats)",
                    a.header
                ),
            ));
        }
    }
    Ok(found)
}

fn pointer_of(path: &[String]) -> String {
    let mut out = String::new();
    for name in path {
        out.push_str("/properties/");
        out.push_str(&escape_pointer_token(name));
    }
    out
}

fn collect_reachable(
    node: &Map<String, Value>,
    path: &mut Vec<String>,
    pointer: &str,
    found: &mut Vec<HeaderParam>,
) -> Result<(), RuleError> {
    let Some(Value::Object(props)) = node.get("properties") else {
        return Ok(());
    };
    for (name, sub) in props {
        let Value::Object(sub) = sub else { continue };
        let here = format!("{pointer}/properties/{}", escape_pointer_token(name));
        path.push(name.clone());
        if let Some(annotation) = sub.get(KEYWORD) {
            let header = match annotation {
                Value::String(s) if is_token(s) => s.clone(),
                _ => {
                    return Err(RuleError::new(
                        format!("{here}/{KEYWORD}"),
                        "x-mcp-header must be a non-empty RFC 9110 token",
                    ));
                }
            };
            let ty = match sub.get("type") {
                Some(Value::String(t)) if t == "string" => HeaderType::String,
                Some(Value::String(t)) if t == "integer" => HeaderType::Integer,
                Some(Value::String(t)) if t == "boolean" => HeaderType::Boolean,
                _ => {
                    return Err(RuleError::new(
                        format!("{here}/type"),
                        "an x-mcp-header property must have type \"string\", \"integer\" or \"boolean\"",
                    ));
                }
            };
            found.push(HeaderParam {
                header,
                path: path.clone(),
                ty,
            });
        }
        collect_reachable(sub, path, &here, found)?;
        path.pop();
    }
    Ok(())
}

/// Appends one escaped reference token to a JSON pointer.
fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Walks every subschema (containers only; the pointer is built in place,
/// and only an error allocates).
fn find_misplaced(
    node: &Value,
    pointer: &mut String,
    reachable: &[String],
) -> Result<(), RuleError> {
    let descend = |value: &Value| value.is_object() || value.is_array();
    match node {
        Value::Object(map) => {
            if map.contains_key(KEYWORD)
                && !pointer.is_empty()
                && !reachable.iter().any(|r| r == pointer)
            {
                return Err(RuleError::new(
                    format!("{pointer}/{KEYWORD}"),
                    "x-mcp-header is allowed only on properties reached from the root through `properties`",
                ));
            }
            for (key, value) in map {
                if DATA_KEYWORDS.contains(&key.as_str()) || key == KEYWORD || !descend(value) {
                    continue;
                }
                let len = pointer.len();
                push_token(pointer, key);
                find_misplaced(value, pointer, reachable)?;
                pointer.truncate(len);
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                if !descend(value) {
                    continue;
                }
                let len = pointer.len();
                push_token(pointer, &i.to_string());
                find_misplaced(value, pointer, reachable)?;
                pointer.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collects_nested_properties() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {
                    "n": {"type": "integer", "x-mcp-header": "N"},
                    "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}
                }}
            }
        });
        let params = check_header_annotations(&schema).unwrap();
        let mut names: Vec<_> = params.iter().map(|p| p.header.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["Dry-Run", "N", "Region"]);
        let n = params.iter().find(|p| p.header == "N").unwrap();
        assert_eq!(n.path, ["opts", "n"]);
        assert_eq!(n.ty, HeaderType::Integer);
    }

    #[test]
    fn refuses_each_broken_rule() {
        let cases = [
            (
                json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}),
                "/properties/a/x-mcp-header",
            ),
            (
                json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"a b"}}}),
                "/properties/a/x-mcp-header",
            ),
            (
                json!({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
                "/properties/a/type",
            ),
            (
                json!({"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}),
                "/properties/a/type",
            ),
            (
                json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}),
                "/properties/b/x-mcp-header",
            ),
            (
                json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
                "/properties/a/items/x-mcp-header",
            ),
            (
                json!({"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
                "/oneOf/0/properties/a/x-mcp-header",
            ),
            (
                json!({"type":"object","x-mcp-header":"Root"}),
                "/x-mcp-header",
            ),
        ];
        for (schema, pointer) in cases {
            let err = check_header_annotations(&schema).unwrap_err();
            assert_eq!(err.pointer, pointer, "{schema}");
        }
    }

    #[test]
    fn data_keywords_are_not_searched() {
        let schema = json!({"type":"object","properties":{"a":{"type":"string","default":{"x-mcp-header": 1},"examples":[{"x-mcp-header":"x"}]}}});
        assert!(check_header_annotations(&schema).unwrap().is_empty());
    }
}
