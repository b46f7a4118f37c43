//! Compilation: a schema document becomes a tree of checks, once.

use serde_json::{Map, Value};

use crate::schema::SchemaError;

use super::number::*;
use super::tree::*;

/// A schema location (`#/properties/a`) for error messages.
pub(super) fn schema_location(location: &[String]) -> String {
    let mut out = String::from("#");
    for segment in location {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

pub(super) fn schema_error(location: &[String], message: impl std::fmt::Display) -> SchemaError {
    SchemaError::new(format!(
        "{message} (at schema location `{}`)",
        schema_location(location)
    ))
}

/// Compiles the schema at `location` (keywords and names from the root),
/// nested `depth` levels deep (the root is level 1).
pub(super) fn compile_node(
    schema: &Value,
    location: &mut Vec<String>,
    depth: usize,
) -> Result<Node, SchemaError> {
    let map = match schema {
        Value::Bool(b) => return Ok(Node::Bool(*b)),
        Value::Object(map) => map,
        _ => {
            return Err(schema_error(
                location,
                "a schema must be an object or a boolean",
            ));
        }
    };
    let mut checks = Checks {
        types: map
            .get("type")
            .map(|v| compile_type(v, location))
            .transpose()?,
        constant: map.get("const").cloned(),
        ..Checks::default()
    };
    if let Some(allowed) = map.get("enum") {
        match allowed {
            Value::Array(values) => checks.allowed = Some(values.clone()),
            _ => return Err(schema_error(location, "`enum` must be an array")),
        }
    }
    checks.object = compile_object(map, location, depth)?;
    checks.array = compile_array(map, location, depth)?;
    checks.string = compile_string(map, location)?;
    checks.number = compile_number(map, location)?;
    Ok(Node::Checks(Box::new(checks)))
}

/// Compiles the subschema under `segments` (location segments relative to
/// the parent schema), one level deeper than its parent at `depth`.
pub(super) fn compile_child(
    schema: &Value,
    segments: &[&str],
    location: &mut Vec<String>,
    depth: usize,
) -> Result<Node, SchemaError> {
    let parent = location.len();
    location.extend(segments.iter().map(|s| (*s).to_owned()));
    let result = if depth >= MAX_DEPTH {
        Err(schema_error(
            location,
            format!("schema nesting exceeds {MAX_DEPTH} levels"),
        ))
    } else {
        compile_node(schema, location, depth + 1)
    };
    location.truncate(parent);
    result
}

pub(super) fn compile_type(value: &Value, location: &[String]) -> Result<TypeSet, SchemaError> {
    let error = || {
        schema_error(
            location,
            "`type` must name one or more supported JSON types \
             (array, boolean, integer, null, number, object, string)",
        )
    };
    let names: Vec<&Value> = match value {
        Value::String(_) => vec![value],
        Value::Array(names) if !names.is_empty() => names.iter().collect(),
        _ => return Err(error()),
    };
    let mut set = TypeSet {
        mask: 0,
        declared: String::new(),
    };
    for name in names {
        let (index, name) = name
            .as_str()
            .and_then(|name| {
                TYPE_NAMES
                    .iter()
                    .position(|n| *n == name)
                    .map(|i| (i, name))
            })
            .ok_or_else(error)?;
        let bit = 1u8 << index;
        if set.mask & bit == 0 {
            set.mask |= bit;
            if !set.declared.is_empty() {
                set.declared.push_str(", ");
            }
            set.declared.push_str(name);
        }
    }
    Ok(set)
}

/// A non-negative integer keyword value (`2` or `2.0`).
pub(super) fn count(
    map: &Map<String, Value>,
    keyword: &str,
    location: &[String],
) -> Result<Option<u64>, SchemaError> {
    let Some(value) = map.get(keyword) else {
        return Ok(None);
    };
    // Integral floats such as `2.0` are integers to JSON Schema.
    let n = value.as_u64().or_else(|| {
        let f = value.as_f64()?;
        let integral = f.fract() == 0.0 && (0.0..U64_LIMIT).contains(&f);
        // Exact: `f` is integral and inside the u64 range.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        integral.then_some(f as u64)
    });
    match n {
        Some(n) => Ok(Some(n)),
        None => Err(schema_error(
            location,
            format!("`{keyword}` must be a non-negative integer"),
        )),
    }
}

pub(super) fn bound(
    map: &Map<String, Value>,
    keyword: &str,
    location: &[String],
) -> Result<Option<Bound>, SchemaError> {
    match map.get(keyword) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(Some(Bound {
            value: Num::of(n),
            text: n.to_string(),
        })),
        Some(_) => Err(schema_error(
            location,
            format!("`{keyword}` must be a number"),
        )),
    }
}

pub(super) fn compile_object(
    map: &Map<String, Value>,
    location: &mut Vec<String>,
    depth: usize,
) -> Result<Option<ObjectChecks>, SchemaError> {
    let mut required = Vec::new();
    if let Some(value) = map.get("required") {
        let error = || schema_error(location, "`required` must be an array of unique strings");
        let Value::Array(names) = value else {
            return Err(error());
        };
        for name in names {
            let Value::String(name) = name else {
                return Err(error());
            };
            if required.contains(name) {
                return Err(error());
            }
            required.push(name.clone());
        }
    }
    let mut properties = Vec::new();
    if let Some(value) = map.get("properties") {
        let Value::Object(schemas) = value else {
            return Err(schema_error(
                location,
                "`properties` must be an object of schemas",
            ));
        };
        for (name, schema) in schemas {
            let node = compile_child(schema, &["properties", name], location, depth)?;
            properties.push((name.clone(), node));
        }
        properties.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    let additional = match map.get("additionalProperties") {
        None | Some(Value::Bool(true)) => None,
        Some(schema) => Some(compile_child(
            schema,
            &["additionalProperties"],
            location,
            depth,
        )?),
    };
    let min_properties = count(map, "minProperties", location)?;
    let max_properties = count(map, "maxProperties", location)?;
    let empty = required.is_empty()
        && properties.is_empty()
        && additional.is_none()
        && min_properties.is_none()
        && max_properties.is_none();
    Ok((!empty).then_some(ObjectChecks {
        required,
        min_properties,
        max_properties,
        properties,
        additional,
    }))
}

pub(super) fn compile_array(
    map: &Map<String, Value>,
    location: &mut Vec<String>,
    depth: usize,
) -> Result<Option<ArrayChecks>, SchemaError> {
    let items = match map.get("items") {
        None | Some(Value::Bool(true)) => None,
        Some(Value::Array(_)) => {
            return Err(schema_error(
                location,
                "`items` must be a single schema (the array form is not supported)",
            ));
        }
        Some(schema) => Some(compile_child(schema, &["items"], location, depth)?),
    };
    let unique = match map.get("uniqueItems") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(schema_error(location, "`uniqueItems` must be a boolean")),
    };
    let min_items = count(map, "minItems", location)?;
    let max_items = count(map, "maxItems", location)?;
    let empty = items.is_none() && !unique && min_items.is_none() && max_items.is_none();
    Ok((!empty).then_some(ArrayChecks {
        min_items,
        max_items,
        unique,
        items,
    }))
}

pub(super) fn compile_string(
    map: &Map<String, Value>,
    location: &[String],
) -> Result<Option<StringChecks>, SchemaError> {
    let min_length = count(map, "minLength", location)?;
    let max_length = count(map, "maxLength", location)?;
    let pattern = match map.get("pattern") {
        None => None,
        Some(Value::String(source)) => Some(regex_lite::Regex::new(source).map_err(|e| {
            schema_error(
                location,
                format!("`pattern` is not a valid regular expression: {e}"),
            )
        })?),
        Some(_) => return Err(schema_error(location, "`pattern` must be a string")),
    };
    let empty = min_length.is_none() && max_length.is_none() && pattern.is_none();
    Ok((!empty).then_some(StringChecks {
        min_length,
        max_length,
        pattern,
    }))
}

pub(super) fn compile_number(
    map: &Map<String, Value>,
    location: &[String],
) -> Result<Option<NumberChecks>, SchemaError> {
    let checks = NumberChecks {
        minimum: bound(map, "minimum", location)?,
        maximum: bound(map, "maximum", location)?,
        exclusive_minimum: bound(map, "exclusiveMinimum", location)?,
        exclusive_maximum: bound(map, "exclusiveMaximum", location)?,
    };
    let empty = checks.minimum.is_none()
        && checks.maximum.is_none()
        && checks.exclusive_minimum.is_none()
        && checks.exclusive_maximum.is_none();
    Ok((!empty).then_some(checks))
}
