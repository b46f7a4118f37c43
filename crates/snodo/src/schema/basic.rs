//! The bundled validator: a dependency-free subset of JSON Schema.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

use super::{CompiledSchema, SchemaError, ValidationError, Validator, Violation};

/// Schemas nested deeper than this many levels are refused.
const MAX_DEPTH: usize = 64;

/// The bundled validator: a dependency-free subset of JSON Schema.
///
/// [`Basic`] compiles a schema once into a tree of checks and never reads the
/// schema JSON again when validating. It supports:
///
/// - `type`: one name or a list (union) of `array`, `boolean`, `integer`,
///   `null`, `number`, `object`, `string`. `integer` is a JSON number parsed as
///   an integer (`1` is one, `1.0` is not); `number` is any number.
/// - `const` and `enum`, with JSON equality where numbers compare by value
///   (`1 == 1.0`).
/// - objects: `required`, `properties`, `additionalProperties` (`true`,
///   `false` or a schema), `minProperties`, `maxProperties`;
/// - arrays: `items` (one schema for every element), `minItems`, `maxItems`,
///   `uniqueItems`;
/// - strings: `minLength`, `maxLength` (counted in Unicode scalar values, not
///   bytes), `pattern` (an unanchored search, compiled with `regex-lite`: no
///   look-around, back-references or `\p{..}` classes);
/// - numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`
///   (the numeric, draft-6+ form);
/// - the boolean schemas `true` and `false`.
///
/// Each node checks `type`, then `const`, then `enum`, then the keywords of
/// the instance's shape, and validation stops at the first violation. Objects
/// check `required` (in declared order), `minProperties`, `maxProperties`,
/// `properties` (in sorted name order), then `additionalProperties` (extra
/// names in sorted order); arrays check `minItems`, `maxItems`, `uniqueItems`,
/// then `items` (in index order); strings `minLength`, `maxLength`, `pattern`;
/// numbers `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
///
/// Other keywords (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`, `format`,
/// `multipleOf`, `patternProperties`, `prefixItems`, ...) are ignored, and so
/// are the schemas inside them. A supported keyword with a value of the wrong
/// type, an invalid `pattern`, or a schema nested deeper than 64 levels is
/// refused at compile time with a [`SchemaError`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Basic;

impl Validator for Basic {
    fn compile(&self, schema: &Value) -> Result<Arc<dyn CompiledSchema>, SchemaError> {
        let mut location = Vec::new();
        let root = compile_node(schema, &mut location, 1)?;
        Ok(Arc::new(Compiled { root }))
    }
}

// ---------------------------------------------------------------------------
// The compiled tree.

struct Compiled {
    root: Node,
}

impl CompiledSchema for Compiled {
    fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        let mut path = Vec::new();
        self.root
            .check(instance, &mut path)
            .map_err(ValidationError::Invalid)
    }
}

enum Node {
    /// `true` (accept everything) or `false` (accept nothing).
    Bool(bool),
    Checks(Box<Checks>),
}

#[derive(Default)]
struct Checks {
    types: Option<TypeSet>,
    constant: Option<Value>,
    allowed: Option<Vec<Value>>,
    object: Option<ObjectChecks>,
    array: Option<ArrayChecks>,
    string: Option<StringChecks>,
    number: Option<NumberChecks>,
}

struct ObjectChecks {
    required: Vec<String>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    /// Sorted by name.
    properties: Vec<(String, Node)>,
    /// `None` when absent or `true`.
    additional: Option<Node>,
}

struct ArrayChecks {
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique: bool,
    items: Option<Node>,
}

struct StringChecks {
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<regex_lite::Regex>,
}

struct NumberChecks {
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    exclusive_minimum: Option<Bound>,
    exclusive_maximum: Option<Bound>,
}

/// A numeric bound: its value for comparison, its JSON text for messages.
struct Bound {
    value: Num,
    text: String,
}

/// The JSON type names, in the order of [`TypeSet`]'s bits.
const TYPE_NAMES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];
const ARRAY: u8 = 1 << 0;
const BOOLEAN: u8 = 1 << 1;
const INTEGER: u8 = 1 << 2;
const NULL: u8 = 1 << 3;
const NUMBER: u8 = 1 << 4;
const OBJECT: u8 = 1 << 5;
const STRING: u8 = 1 << 6;

/// The declared `type`s: a bit mask, and the names in declared order for
/// messages.
struct TypeSet {
    mask: u8,
    declared: String,
}

impl TypeSet {
    fn matches(&self, value: &Value) -> bool {
        let wanted = match value {
            Value::Null => NULL,
            Value::Bool(_) => BOOLEAN,
            // `1.0` is parsed as a float, so it is a number but not an integer.
            Value::Number(n) if n.is_i64() || n.is_u64() => NUMBER | INTEGER,
            Value::Number(_) => NUMBER,
            Value::String(_) => STRING,
            Value::Array(_) => ARRAY,
            Value::Object(_) => OBJECT,
        };
        self.mask & wanted != 0
    }
}

// ---------------------------------------------------------------------------
// Validation.

#[derive(Clone, Copy)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Renders `path` as an RFC 6901 JSON pointer.
fn pointer(path: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for segment in path {
        out.push('/');
        match segment {
            Segment::Key(key) => {
                for c in key.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
            Segment::Index(index) => {
                let _ = write!(out, "{index}");
            }
        }
    }
    out
}

fn violation(path: &[Segment<'_>], rule: String) -> Violation {
    Violation::new(pointer(path), rule)
}

impl Node {
    fn check<'a>(&self, instance: &'a Value, path: &mut Vec<Segment<'a>>) -> Result<(), Violation> {
        match self {
            Node::Bool(true) => Ok(()),
            Node::Bool(false) => Err(violation(
                path,
                "false schema: no value is allowed here".to_owned(),
            )),
            Node::Checks(checks) => checks.check(instance, path),
        }
    }

    /// Checks a child instance reached through `segment`.
    fn check_child<'a>(
        &self,
        instance: &'a Value,
        segment: Segment<'a>,
        path: &mut Vec<Segment<'a>>,
    ) -> Result<(), Violation> {
        path.push(segment);
        let result = self.check(instance, path);
        path.pop();
        result
    }
}

impl Checks {
    fn check<'a>(&self, instance: &'a Value, path: &mut Vec<Segment<'a>>) -> Result<(), Violation> {
        if let Some(types) = &self.types
            && !types.matches(instance)
        {
            return Err(violation(
                path,
                format!(
                    "type: value is not one of the declared JSON types ({})",
                    types.declared
                ),
            ));
        }
        if let Some(constant) = &self.constant
            && !json_eq(instance, constant)
        {
            return Err(violation(
                path,
                "const: value is not the declared constant".to_owned(),
            ));
        }
        if let Some(allowed) = &self.allowed
            && !allowed.iter().any(|option| json_eq(instance, option))
        {
            return Err(violation(
                path,
                "enum: value is not one of the allowed values".to_owned(),
            ));
        }
        match instance {
            Value::Object(map) => match &self.object {
                Some(object) => object.check(map, path),
                None => Ok(()),
            },
            Value::Array(items) => match &self.array {
                Some(array) => array.check(items, path),
                None => Ok(()),
            },
            Value::String(s) => match &self.string {
                Some(string) => string.check(s, path),
                None => Ok(()),
            },
            Value::Number(n) => match &self.number {
                Some(number) => number.check(n, path),
                None => Ok(()),
            },
            Value::Null | Value::Bool(_) => Ok(()),
        }
    }
}

impl ObjectChecks {
    fn check<'a>(
        &self,
        map: &'a Map<String, Value>,
        path: &mut Vec<Segment<'a>>,
    ) -> Result<(), Violation> {
        for name in &self.required {
            if !map.contains_key(name) {
                return Err(violation(
                    path,
                    format!("required: missing property `{name}`"),
                ));
            }
        }
        let count = map.len() as u64;
        if let Some(min) = self.min_properties
            && count < min
        {
            return Err(violation(
                path,
                format!("minProperties: must have at least {min} properties"),
            ));
        }
        if let Some(max) = self.max_properties
            && count > max
        {
            return Err(violation(
                path,
                format!("maxProperties: must have at most {max} properties"),
            ));
        }
        for (name, node) in &self.properties {
            if let Some((key, value)) = map.get_key_value(name) {
                node.check_child(value, Segment::Key(key), path)?;
            }
        }
        if let Some(additional) = &self.additional {
            let mut extras: Vec<(&'a String, &'a Value)> = map
                .iter()
                .filter(|(key, _)| {
                    self.properties
                        .binary_search_by(|(name, _)| name.as_str().cmp(key.as_str()))
                        .is_err()
                })
                .collect();
            extras.sort_unstable_by(|a, b| a.0.cmp(b.0));
            for (key, value) in extras {
                match additional {
                    Node::Bool(false) => {
                        return Err(violation(
                            path,
                            format!("additionalProperties: property `{key}` is not allowed"),
                        ));
                    }
                    node => node.check_child(value, Segment::Key(key), path)?,
                }
            }
        }
        Ok(())
    }
}

impl ArrayChecks {
    fn check<'a>(&self, items: &'a [Value], path: &mut Vec<Segment<'a>>) -> Result<(), Violation> {
        let count = items.len() as u64;
        if let Some(min) = self.min_items
            && count < min
        {
            return Err(violation(
                path,
                format!("minItems: must have at least {min} items"),
            ));
        }
        if let Some(max) = self.max_items
            && count > max
        {
            return Err(violation(
                path,
                format!("maxItems: must have at most {max} items"),
            ));
        }
        if self.unique && items.len() > 1 {
            let mut seen = HashSet::with_capacity(items.len());
            for item in items {
                if !seen.insert(canonical(item)) {
                    return Err(violation(
                        path,
                        "uniqueItems: items must be unique".to_owned(),
                    ));
                }
            }
        }
        if let Some(node) = &self.items {
            for (index, item) in items.iter().enumerate() {
                node.check_child(item, Segment::Index(index), path)?;
            }
        }
        Ok(())
    }
}

impl StringChecks {
    fn check(&self, s: &str, path: &[Segment<'_>]) -> Result<(), Violation> {
        if self.min_length.is_some() || self.max_length.is_some() {
            let length = s.chars().count() as u64;
            if let Some(min) = self.min_length
                && length < min
            {
                return Err(violation(
                    path,
                    format!("minLength: must be at least {min} characters long"),
                ));
            }
            if let Some(max) = self.max_length
                && length > max
            {
                return Err(violation(
                    path,
                    format!("maxLength: must be at most {max} characters long"),
                ));
            }
        }
        if let Some(pattern) = &self.pattern
            && !pattern.is_match(s)
        {
            return Err(violation(
                path,
                "pattern: does not match the declared pattern".to_owned(),
            ));
        }
        Ok(())
    }
}

impl NumberChecks {
    fn check(&self, n: &Number, path: &[Segment<'_>]) -> Result<(), Violation> {
        let value = Num::of(n);
        if let Some(bound) = &self.minimum
            && value.cmp_to(bound.value) == Ordering::Less
        {
            return Err(violation(
                path,
                format!("minimum: must be at least {}", bound.text),
            ));
        }
        if let Some(bound) = &self.maximum
            && value.cmp_to(bound.value) == Ordering::Greater
        {
            return Err(violation(
                path,
                format!("maximum: must be at most {}", bound.text),
            ));
        }
        if let Some(bound) = &self.exclusive_minimum
            && value.cmp_to(bound.value) != Ordering::Greater
        {
            return Err(violation(
                path,
                format!("exclusiveMinimum: must be greater than {}", bound.text),
            ));
        }
        if let Some(bound) = &self.exclusive_maximum
            && value.cmp_to(bound.value) != Ordering::Less
        {
            return Err(violation(
                path,
                format!("exclusiveMaximum: must be less than {}", bound.text),
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Numbers compared by value.

/// 2^127 as a float: integral floats strictly inside ±2^127 convert to `i128`
/// exactly.
const I128_LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;

/// 2^64 as a float: integral floats in `0.0..2^64` convert to `u64` exactly.
const U64_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// A JSON number normalised so that numerically equal numbers are equal:
/// every integral value that fits an `i128` is `Int`, whatever its JSON form.
#[derive(Clone, Copy, Debug)]
enum Num {
    Int(i128),
    /// Non-integral, or too large for `i128`; never NaN (JSON has none).
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
        if let Some(u) = n.as_u64() {
            Num::Int(i128::from(u))
        } else if let Some(i) = n.as_i64() {
            Num::Int(i128::from(i))
        } else {
            let f = n.as_f64().unwrap_or(0.0);
            if f.is_finite() && f.fract() == 0.0 && (-I128_LIMIT..I128_LIMIT).contains(&f) {
                // Exact: `f` is integral and inside the i128 range.
                #[allow(clippy::cast_possible_truncation)]
                Num::Int(f as i128)
            } else {
                Num::Float(f)
            }
        }
    }

    fn cmp_to(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (Num::Int(a), Num::Float(b)) => int_cmp_float(a, b),
            (Num::Float(a), Num::Int(b)) => int_cmp_float(b, a).reverse(),
        }
    }
}

/// Compares an integer with a float that is non-integral or outside the
/// `i128` range (so the two are never equal).
fn int_cmp_float(i: i128, f: f64) -> Ordering {
    if f >= I128_LIMIT {
        Ordering::Less
    } else if f < -I128_LIMIT {
        Ordering::Greater
    } else {
        // `f` is non-integral and in range: `i <= floor(f)` means `i < f`.
        #[allow(clippy::cast_possible_truncation)]
        let floor = f.floor() as i128;
        if i <= floor {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }
}

fn num_eq(a: &Number, b: &Number) -> bool {
    Num::of(a).cmp_to(Num::of(b)) == Ordering::Equal
}

// ---------------------------------------------------------------------------
// JSON equality and canonical forms, without recursion (an instance may nest
// arbitrarily deep).

/// JSON equality, numbers compared by value.
fn json_eq(a: &Value, b: &Value) -> bool {
    let mut pending = vec![(a, b)];
    while let Some((a, b)) = pending.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if num_eq(x, y) => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                pending.extend(x.iter().zip(y));
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for (key, value) in x {
                    match y.get(key) {
                        Some(other) => pending.push((value, other)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// A string that two values share exactly when they are JSON-equal (numbers
/// by value, object keys in any order).
fn canonical(value: &Value) -> String {
    enum Work<'a> {
        Value(&'a Value),
        Key(&'a str),
        Close(char),
    }
    fn string(out: &mut String, s: &str) {
        let _ = write!(out, "s{}:", s.len());
        out.push_str(s);
    }
    let mut out = String::new();
    let mut pending = vec![Work::Value(value)];
    while let Some(work) = pending.pop() {
        match work {
            Work::Close(c) => out.push(c),
            Work::Key(key) => string(&mut out, key),
            Work::Value(Value::Null) => out.push('n'),
            Work::Value(Value::Bool(b)) => out.push(if *b { 't' } else { 'f' }),
            Work::Value(Value::Number(n)) => {
                let _ = match Num::of(n) {
                    Num::Int(i) => write!(out, "i{i};"),
                    Num::Float(f) => write!(out, "x{:x};", f.to_bits()),
                };
            }
            Work::Value(Value::String(s)) => string(&mut out, s),
            Work::Value(Value::Array(items)) => {
                out.push('[');
                pending.push(Work::Close(']'));
                pending.extend(items.iter().rev().map(Work::Value));
            }
            Work::Value(Value::Object(map)) => {
                out.push('{');
                pending.push(Work::Close('}'));
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_unstable_by(|a, b| b.0.cmp(a.0));
                for (key, value) in entries {
                    pending.push(Work::Value(value));
                    pending.push(Work::Key(key));
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Compilation.

/// A schema location (`#/properties/a`) for error messages.
fn schema_location(location: &[String]) -> String {
    let mut out = String::from("#");
    for segment in location {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

fn schema_error(location: &[String], message: impl std::fmt::Display) -> SchemaError {
    SchemaError::new(format!(
        "{message} (at schema location `{}`)",
        schema_location(location)
    ))
}

/// Compiles the schema at `location` (keywords and names from the root),
/// nested `depth` levels deep (the root is level 1).
fn compile_node(
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
fn compile_child(
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

fn compile_type(value: &Value, location: &[String]) -> Result<TypeSet, SchemaError> {
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
fn count(
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

fn bound(
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

fn compile_object(
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

fn compile_array(
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

fn compile_string(
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

fn compile_number(
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn compile(schema: Value) -> Arc<dyn CompiledSchema> {
        match Basic.compile(&schema) {
            Ok(compiled) => compiled,
            Err(e) => panic!("schema {schema} refused: {e}"),
        }
    }

    fn accepts(schema: Value, instance: Value) {
        let compiled = compile(schema.clone());
        if let Err(e) = compiled.validate(&instance) {
            panic!("{instance} against {schema}: {e:?}");
        }
    }

    fn violation(schema: Value, instance: Value) -> Violation {
        match compile(schema.clone()).validate(&instance) {
            Err(ValidationError::Invalid(v)) => v,
            other => panic!("{instance} against {schema}: expected a violation, got {other:?}"),
        }
    }

    fn rejects(schema: Value, instance: Value, location: &str, rule: &str) {
        let v = violation(schema, instance);
        assert_eq!((v.location.as_str(), v.rule.as_str()), (location, rule));
    }

    fn refused(schema: Value) -> String {
        match Basic.compile(&schema) {
            Ok(_) => panic!("schema {schema} was accepted"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn type_single_name() {
        accepts(json!({"type": "string"}), json!("x"));
        accepts(json!({"type": "null"}), json!(null));
        accepts(json!({"type": "boolean"}), json!(false));
        accepts(json!({"type": "object"}), json!({}));
        accepts(json!({"type": "array"}), json!([]));
        rejects(
            json!({"type": "string"}),
            json!(1),
            "",
            "type: value is not one of the declared JSON types (string)",
        );
        rejects(
            json!({"type": "object"}),
            json!([]),
            "",
            "type: value is not one of the declared JSON types (object)",
        );
    }

    #[test]
    fn type_integer_is_not_a_float_one() {
        accepts(json!({"type": "integer"}), json!(1));
        accepts(json!({"type": "integer"}), json!(-7));
        accepts(json!({"type": "integer"}), json!(u64::MAX));
        let float_one: Value = serde_json::from_str("1.0").unwrap();
        rejects(
            json!({"type": "integer"}),
            float_one.clone(),
            "",
            "type: value is not one of the declared JSON types (integer)",
        );
        accepts(json!({"type": "number"}), float_one);
        accepts(json!({"type": "number"}), json!(1));
        rejects(
            json!({"type": "integer"}),
            json!("1"),
            "",
            "type: value is not one of the declared JSON types (integer)",
        );
    }

    #[test]
    fn type_union() {
        let schema = json!({"type": ["integer", "null"]});
        accepts(schema.clone(), json!(3));
        accepts(schema.clone(), json!(null));
        rejects(
            schema,
            json!(2.5),
            "",
            "type: value is not one of the declared JSON types (integer, null)",
        );
        // Duplicates are tolerated and named once.
        rejects(
            json!({"type": ["string", "string"]}),
            json!(true),
            "",
            "type: value is not one of the declared JSON types (string)",
        );
    }

    #[test]
    fn type_empty_list_or_unknown_name_is_refused() {
        for schema in [
            json!({"type": []}),
            json!({"type": "float"}),
            json!({"type": ["string", "date"]}),
            json!({"type": 1}),
            json!({"type": [1]}),
        ] {
            let message = refused(schema);
            assert!(
                message.contains("`type` must name one or more supported JSON types"),
                "{message}"
            );
        }
    }

    #[test]
    fn const_compares_numbers_by_value() {
        accepts(json!({"const": 1}), serde_json::from_str("1.0").unwrap());
        accepts(json!({"const": 1.0}), json!(1));
        accepts(
            json!({"const": {"a": [1, null], "b": "x"}}),
            serde_json::from_str(r#"{"b": "x", "a": [1.0, null]}"#).unwrap(),
        );
        rejects(
            json!({"const": 1}),
            json!(1.5),
            "",
            "const: value is not the declared constant",
        );
        rejects(
            json!({"const": {"a": 1}}),
            json!({"a": 1, "b": 2}),
            "",
            "const: value is not the declared constant",
        );
        rejects(
            json!({"const": [1, 2]}),
            json!([2, 1]),
            "",
            "const: value is not the declared constant",
        );
        rejects(
            json!({"const": null}),
            json!(false),
            "",
            "const: value is not the declared constant",
        );
        // Large integers keep their precision.
        rejects(
            json!({"const": 9_007_199_254_740_993_u64}),
            json!(9_007_199_254_740_992.0),
            "",
            "const: value is not the declared constant",
        );
    }

    #[test]
    fn enum_compares_numbers_by_value() {
        let schema = json!({"enum": [1, "one", [2], {"k": 3}]});
        accepts(schema.clone(), serde_json::from_str("1.0").unwrap());
        accepts(schema.clone(), json!("one"));
        accepts(schema.clone(), serde_json::from_str("[2.0]").unwrap());
        accepts(
            schema.clone(),
            serde_json::from_str(r#"{"k": 3.0}"#).unwrap(),
        );
        rejects(
            schema.clone(),
            json!(2),
            "",
            "enum: value is not one of the allowed values",
        );
        rejects(
            schema,
            json!("One"),
            "",
            "enum: value is not one of the allowed values",
        );
    }

    #[test]
    fn enum_must_be_an_array() {
        assert!(refused(json!({"enum": "a"})).contains("`enum` must be an array"));
        assert!(refused(json!({"enum": {"a": 1}})).contains("`enum` must be an array"));
    }

    #[test]
    fn required_names_the_missing_property() {
        let schema = json!({"required": ["a", "b"]});
        accepts(schema.clone(), json!({"a": 1, "b": null}));
        accepts(schema.clone(), json!("not an object"));
        rejects(
            schema,
            json!({"a": 1}),
            "",
            "required: missing property `b`",
        );
        rejects(
            json!({"properties": {"o": {"required": ["z"]}}}),
            json!({"o": {}}),
            "/o",
            "required: missing property `z`",
        );
    }

    #[test]
    fn required_must_be_unique_strings() {
        for schema in [
            json!({"required": "a"}),
            json!({"required": ["a", 1]}),
            json!({"required": ["a", "a"]}),
        ] {
            assert!(refused(schema).contains("`required` must be an array of unique strings"));
        }
    }

    #[test]
    fn properties_are_checked_in_sorted_name_order() {
        let schema = json!({
            "properties": {
                "b": {"type": "string"},
                "a": {"type": "string"},
                "c": {"type": "string"}
            }
        });
        accepts(schema.clone(), json!({"a": "x", "z": 1}));
        rejects(
            schema.clone(),
            json!({"c": 3, "b": 2, "a": 1}),
            "/a",
            "type: value is not one of the declared JSON types (string)",
        );
        rejects(
            schema,
            json!({"c": 3, "b": 2}),
            "/b",
            "type: value is not one of the declared JSON types (string)",
        );
    }

    #[test]
    fn additional_properties_false_names_the_first_extra_in_sorted_order() {
        let schema = json!({"properties": {"a": {}}, "additionalProperties": false});
        accepts(schema.clone(), json!({"a": 1}));
        rejects(
            schema,
            json!({"zz": 1, "a": 1, "m": 2}),
            "",
            "additionalProperties: property `m` is not allowed",
        );
    }

    #[test]
    fn additional_properties_schema_applies_to_extras() {
        let schema = json!({
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "integer", "maximum": 10}
        });
        accepts(schema.clone(), json!({"a": "x", "n": 3, "m": 10}));
        rejects(
            schema.clone(),
            json!({"a": "x", "y": 11, "x": "str"}),
            "/x",
            "type: value is not one of the declared JSON types (integer)",
        );
        rejects(
            schema,
            json!({"y": 11}),
            "/y",
            "maximum: must be at most 10",
        );
        accepts(
            json!({"additionalProperties": true}),
            json!({"anything": [1, 2]}),
        );
    }

    #[test]
    fn min_and_max_properties() {
        let schema = json!({"minProperties": 1, "maxProperties": 2});
        accepts(schema.clone(), json!({"a": 1}));
        rejects(
            schema.clone(),
            json!({}),
            "",
            "minProperties: must have at least 1 properties",
        );
        rejects(
            schema,
            json!({"a": 1, "b": 2, "c": 3}),
            "",
            "maxProperties: must have at most 2 properties",
        );
    }

    #[test]
    fn items_applies_to_every_element() {
        let schema = json!({"items": {"type": "integer"}});
        accepts(schema.clone(), json!([]));
        accepts(schema.clone(), json!([1, 2, 3]));
        rejects(
            schema,
            json!([1, 2, "three", null]),
            "/2",
            "type: value is not one of the declared JSON types (integer)",
        );
        rejects(
            json!({"items": {"items": {"minimum": 0}}}),
            json!([[0], [1, -1]]),
            "/1/1",
            "minimum: must be at least 0",
        );
    }

    #[test]
    fn items_array_form_is_refused() {
        assert!(refused(json!({"items": [{"type": "string"}]})).contains("`items`"));
    }

    #[test]
    fn min_and_max_items() {
        let schema = json!({"minItems": 1, "maxItems": 2});
        accepts(schema.clone(), json!([1, 2]));
        rejects(
            schema.clone(),
            json!([]),
            "",
            "minItems: must have at least 1 items",
        );
        rejects(
            schema,
            json!([1, 2, 3]),
            "",
            "maxItems: must have at most 2 items",
        );
    }

    #[test]
    fn unique_items_uses_json_equality() {
        let schema = json!({"uniqueItems": true});
        accepts(
            schema.clone(),
            json!([1, "1", [1], {"a": 1}, null, true, 1.5]),
        );
        accepts(schema.clone(), json!([{"a": 1}, {"a": 1, "b": 2}]));
        accepts(schema.clone(), json!([[1, 2], [2, 1]]));
        accepts(json!({"uniqueItems": false}), json!([1, 1]));
        for duplicated in [
            serde_json::from_str::<Value>("[1, 1.0]").unwrap(),
            json!(["a", "b", "a"]),
            json!([{"a": 1, "b": [2]}, {"b": [2], "a": 1}]),
            json!([null, null]),
            json!([0, -0.0]),
        ] {
            rejects(
                schema.clone(),
                duplicated,
                "",
                "uniqueItems: items must be unique",
            );
        }
    }

    #[test]
    fn unique_items_must_be_a_boolean() {
        assert!(refused(json!({"uniqueItems": "yes"})).contains("`uniqueItems` must be a boolean"));
        assert!(refused(json!({"uniqueItems": 1})).contains("`uniqueItems` must be a boolean"));
    }

    #[test]
    fn min_length_counts_characters_not_bytes() {
        assert_eq!("héllo".len(), 6);
        accepts(json!({"minLength": 5, "maxLength": 5}), json!("héllo"));
        accepts(json!({"maxLength": 2}), json!("日本"));
        rejects(
            json!({"minLength": 6}),
            json!("héllo"),
            "",
            "minLength: must be at least 6 characters long",
        );
        rejects(
            json!({"minLength": 1}),
            json!(""),
            "",
            "minLength: must be at least 1 characters long",
        );
    }

    #[test]
    fn max_length() {
        rejects(
            json!({"maxLength": 4}),
            json!("héllo"),
            "",
            "maxLength: must be at most 4 characters long",
        );
        // Length keywords only apply to strings.
        accepts(json!({"maxLength": 1}), json!([1, 2, 3]));
    }

    #[test]
    fn pattern_is_an_unanchored_search() {
        let schema = json!({"pattern": "[0-9]{3}"});
        accepts(schema.clone(), json!("abc123def"));
        rejects(
            schema.clone(),
            json!("abc12"),
            "",
            "pattern: does not match the declared pattern",
        );
        accepts(schema, json!(42));
        let anchored = json!({"pattern": "^[a-z]+$"});
        accepts(anchored.clone(), json!("abc"));
        rejects(
            anchored,
            json!("abc1"),
            "",
            "pattern: does not match the declared pattern",
        );
    }

    #[test]
    fn invalid_regex_is_refused() {
        let message = refused(json!({"properties": {"p": {"pattern": "(unclosed"}}}));
        assert!(
            message.contains("`pattern` is not a valid regular expression"),
            "{message}"
        );
        assert!(message.contains("#/properties/p"), "{message}");
        assert!(refused(json!({"pattern": 5})).contains("`pattern` must be a string"));
    }

    #[test]
    fn minimum_and_maximum() {
        let schema = json!({"minimum": 1, "maximum": 10});
        accepts(schema.clone(), json!(1));
        accepts(schema.clone(), json!(10));
        accepts(schema.clone(), json!(10.0));
        accepts(schema.clone(), json!(5.5));
        rejects(
            schema.clone(),
            json!(0.5),
            "",
            "minimum: must be at least 1",
        );
        rejects(schema.clone(), json!(-3), "", "minimum: must be at least 1");
        rejects(
            schema.clone(),
            json!(10.5),
            "",
            "maximum: must be at most 10",
        );
        rejects(schema, json!(u64::MAX), "", "maximum: must be at most 10");
        rejects(
            json!({"maximum": 2.5}),
            json!(3),
            "",
            "maximum: must be at most 2.5",
        );
        accepts(json!({"maximum": 2.5}), json!(2));
        rejects(
            json!({"minimum": -1e300}),
            json!(-1e301),
            "",
            "minimum: must be at least -1e+300",
        );
        accepts(json!({"minimum": -1e300}), json!(i64::MIN));
    }

    #[test]
    fn exclusive_minimum_and_maximum() {
        let schema = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5});
        accepts(schema.clone(), json!(1));
        accepts(schema.clone(), json!(0.001));
        rejects(
            schema.clone(),
            json!(0),
            "",
            "exclusiveMinimum: must be greater than 0",
        );
        rejects(
            schema.clone(),
            json!(0.0),
            "",
            "exclusiveMinimum: must be greater than 0",
        );
        rejects(
            schema.clone(),
            json!(1.5),
            "",
            "exclusiveMaximum: must be less than 1.5",
        );
        rejects(
            schema,
            json!(2),
            "",
            "exclusiveMaximum: must be less than 1.5",
        );
    }

    #[test]
    fn keyword_values_of_the_wrong_type_are_refused() {
        for (schema, expected) in [
            (
                json!({"minLength": "x"}),
                "`minLength` must be a non-negative integer",
            ),
            (
                json!({"maxLength": -1}),
                "`maxLength` must be a non-negative integer",
            ),
            (
                json!({"minItems": 1.5}),
                "`minItems` must be a non-negative integer",
            ),
            (
                json!({"maxItems": null}),
                "`maxItems` must be a non-negative integer",
            ),
            (
                json!({"minProperties": true}),
                "`minProperties` must be a non-negative integer",
            ),
            (
                json!({"maxProperties": [1]}),
                "`maxProperties` must be a non-negative integer",
            ),
            (json!({"minimum": "3"}), "`minimum` must be a number"),
            (json!({"maximum": null}), "`maximum` must be a number"),
            (
                json!({"exclusiveMinimum": true}),
                "`exclusiveMinimum` must be a number",
            ),
            (
                json!({"exclusiveMaximum": "1"}),
                "`exclusiveMaximum` must be a number",
            ),
            (
                json!({"properties": []}),
                "`properties` must be an object of schemas",
            ),
            (
                json!({"properties": {"a": 1}}),
                "a schema must be an object or a boolean",
            ),
            (
                json!({"additionalProperties": 1}),
                "a schema must be an object or a boolean",
            ),
            (
                json!({"items": "string"}),
                "a schema must be an object or a boolean",
            ),
            (json!("string"), "a schema must be an object or a boolean"),
            (json!(null), "a schema must be an object or a boolean"),
        ] {
            let message = refused(schema.clone());
            assert!(message.contains(expected), "{schema}: {message}");
        }
        // Integral floats are integers to JSON Schema.
        accepts(json!({"minLength": 2.0}), json!("ab"));
    }

    #[test]
    fn schema_errors_name_the_schema_location() {
        let message = refused(json!({
            "properties": {"a/b": {"items": {"minItems": "x"}}}
        }));
        assert_eq!(
            message,
            "`minItems` must be a non-negative integer \
             (at schema location `#/properties/a~1b/items`)"
        );
    }

    #[test]
    fn boolean_schemas() {
        accepts(json!(true), json!({"anything": [1]}));
        rejects(
            json!(false),
            json!(null),
            "",
            "false schema: no value is allowed here",
        );
        let schema = json!({"properties": {"gone": false, "any": true}});
        accepts(schema.clone(), json!({"any": 1}));
        rejects(
            schema,
            json!({"gone": 1}),
            "/gone",
            "false schema: no value is allowed here",
        );
        rejects(
            json!({"items": false}),
            json!([1]),
            "/0",
            "false schema: no value is allowed here",
        );
        accepts(json!({"items": false}), json!([]));
    }

    #[test]
    fn checks_type_then_const_then_enum_then_shape() {
        let schema = json!({
            "minLength": 10,
            "enum": ["a", "bb"],
            "const": "bb",
            "type": "string"
        });
        rejects(
            schema.clone(),
            json!(5),
            "",
            "type: value is not one of the declared JSON types (string)",
        );
        rejects(
            schema.clone(),
            json!("a"),
            "",
            "const: value is not the declared constant",
        );
        rejects(
            json!({"enum": ["a", "bb"], "minLength": 10}),
            json!("c"),
            "",
            "enum: value is not one of the allowed values",
        );
        rejects(
            schema,
            json!("bb"),
            "",
            "minLength: must be at least 10 characters long",
        );
    }

    #[test]
    fn stops_at_the_first_error() {
        let schema = json!({
            "required": ["r"],
            "properties": {"a": {"type": "string"}},
            "additionalProperties": false
        });
        rejects(
            schema.clone(),
            json!({"a": 1, "x": 1}),
            "",
            "required: missing property `r`",
        );
        rejects(
            schema,
            json!({"r": 1, "a": 1, "x": 1}),
            "/a",
            "type: value is not one of the declared JSON types (string)",
        );
    }

    #[test]
    fn unknown_keywords_are_ignored() {
        accepts(
            json!({
                "$ref": "https://example.com/never-fetched",
                "anyOf": [{"type": "string"}],
                "format": "email",
                "multipleOf": 7,
                "x-mcp-header": "Name",
                "title": "t",
                "description": "d",
                "default": 1
            }),
            json!(3),
        );
    }

    #[test]
    fn locations_are_escaped_json_pointers() {
        rejects(
            json!({"properties": {"a/b": {"properties": {"m~n": {"type": "null"}}}}}),
            json!({"a/b": {"m~n": 1}}),
            "/a~1b/m~0n",
            "type: value is not one of the declared JSON types (null)",
        );
        rejects(
            json!({"additionalProperties": {"items": {"type": "string"}}}),
            json!({"~/": ["a", 0]}),
            "/~0~1/1",
            "type: value is not one of the declared JSON types (string)",
        );
    }

    fn nested(levels: usize) -> Value {
        let mut schema = json!({"type": "string"});
        for _ in 1..levels {
            schema = json!({"properties": {"p": schema}});
        }
        schema
    }

    #[test]
    fn schemas_deeper_than_64_levels_are_refused() {
        let compiled = compile(nested(64));
        let mut instance = json!(1);
        for _ in 1..64 {
            instance = json!({"p": instance});
        }
        let Err(ValidationError::Invalid(v)) = compiled.validate(&instance) else {
            panic!("expected a violation");
        };
        assert_eq!(v.location, "/p".repeat(63));
        let message = refused(nested(65));
        assert!(
            message.contains("schema nesting exceeds 64 levels"),
            "{message}"
        );
        let mut items = json!({});
        for _ in 0..64 {
            items = json!({"items": items});
        }
        assert!(refused(items).contains("schema nesting exceeds 64 levels"));
    }

    #[test]
    fn very_deep_instances_do_not_overflow_the_stack() {
        let mut deep = json!(0);
        for _ in 0..200_000 {
            deep = Value::Array(vec![deep]);
        }
        let pair = Value::Array(vec![deep.clone_shallow(), deep]);
        let compiled = compile(json!({"uniqueItems": true, "const": [[1]]}));
        let result = compiled.validate(&pair);
        assert!(matches!(result, Err(ValidationError::Invalid(_))));
        let compiled = compile(json!({"uniqueItems": true}));
        let result = compiled.validate(&pair);
        assert_eq!(
            result,
            Err(ValidationError::Invalid(Violation::new(
                "",
                "uniqueItems: items must be unique"
            )))
        );
        // serde_json drops values recursively; leak this one instead.
        std::mem::forget(pair);
    }

    /// Builds an equal copy of a deeply nested single-element array without
    /// recursion.
    trait CloneShallow {
        fn clone_shallow(&self) -> Value;
    }

    impl CloneShallow for Value {
        fn clone_shallow(&self) -> Value {
            let mut depth = 0;
            let mut cursor = self;
            while let Value::Array(items) = cursor {
                depth += 1;
                cursor = &items[0];
            }
            let mut copy = cursor.clone();
            for _ in 0..depth {
                copy = Value::Array(vec![copy]);
            }
            copy
        }
    }

    const SECRET: &str = "SECRET-123";

    #[test]
    fn violations_never_contain_the_value() {
        let cases = [
            (json!({"type": "integer"}), json!(SECRET)),
            (json!({"const": "x"}), json!(SECRET)),
            (json!({"enum": ["x", 1]}), json!(SECRET)),
            (json!({"minLength": 11}), json!(SECRET)),
            (json!({"maxLength": 3}), json!(SECRET)),
            (json!({"pattern": "^[a-z]+$"}), json!(SECRET)),
            (json!({"uniqueItems": true}), json!([SECRET, SECRET])),
            (json!({"maxItems": 1}), json!([SECRET, SECRET])),
            (json!({"items": {"type": "null"}}), json!([SECRET])),
            (json!({"maximum": 10}), json!(123_456_789)),
            (json!({"exclusiveMinimum": 200_000_000}), json!(123_456_789)),
            (json!({"additionalProperties": false}), json!({"k": SECRET})),
            (
                json!({"properties": {"k": {"type": "object"}}}),
                json!({"k": SECRET}),
            ),
            (json!({"required": ["r"]}), json!({"k": SECRET})),
            (json!({"maxProperties": 0}), json!({"k": SECRET})),
            (json!(false), json!(SECRET)),
        ];
        for (schema, instance) in cases {
            let v = violation(schema.clone(), instance);
            for text in [&v.rule, &v.location] {
                assert!(
                    !text.contains(SECRET) && !text.contains("123456789"),
                    "{schema}: {v:?}"
                );
            }
        }
    }

    #[test]
    fn basic_is_usable_as_a_trait_object() {
        let validator: Box<dyn Validator> = Box::new(Basic);
        let compiled = validator.compile(&json!({"type": "string"})).unwrap();
        assert!(compiled.validate(&json!("ok")).is_ok());
    }

    fn arbitrary_json() -> impl Strategy<Value = Value> {
        // Keys may appear in rules (`additionalProperties` names them); the
        // secret is only ever a value.
        let key = prop_oneof![
            any::<String>(),
            prop::sample::select(vec!["", "a", "b", "x/y", "m~n", "héllo"]).prop_map(str::to_owned),
        ];
        let string = prop_oneof![key.clone(), Just(SECRET.to_owned()),];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-20i64..20).prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            (-40i32..40).prop_map(|n| Value::from(f64::from(n) / 4.0)),
            string.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 96, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(key.clone(), inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    fn rich_schemas() -> Vec<Arc<dyn CompiledSchema>> {
        let scalar = json!({
            "type": ["integer", "string", "number", "null", "boolean"],
            "minimum": -5, "maximum": 5.5,
            "exclusiveMinimum": -10, "exclusiveMaximum": 10,
            "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"
        });
        let collection = json!({
            "minItems": 1, "maxItems": 4, "uniqueItems": true,
            "items": {"enum": [1, "a", null, [1], {"a": 1.0}]},
            "minProperties": 1, "maxProperties": 4,
            "additionalProperties": {"items": {"uniqueItems": true}}
        });
        let recursive = {
            let mut schema = json!({"uniqueItems": true, "not": "checked"});
            for _ in 0..8 {
                schema = json!({
                    "items": schema.clone(),
                    "additionalProperties": schema,
                    "properties": {"a": {"const": {"k": [1, 2.0]}}, "b": false}
                });
            }
            schema
        };
        vec![
            compile(json!({
                "required": ["a"],
                "properties": {
                    "a": scalar.clone(),
                    "b": collection.clone(),
                    "x/y": {"const": {"k": [1, 2.0]}},
                    "SECRET-123": false
                },
                "additionalProperties": scalar.clone()
            })),
            compile(scalar),
            compile(collection),
            compile(recursive),
            compile(json!({"additionalProperties": false, "items": false})),
            compile(json!({"type": "object", "properties": {"": true}})),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_instances_never_panic(instance in arbitrary_json()) {
            for compiled in rich_schemas() {
                match compiled.validate(&instance) {
                    Ok(()) => {}
                    Err(ValidationError::Invalid(v)) => {
                        // The location always points into the instance.
                        prop_assert!(instance.pointer(&v.location).is_some(), "{:?}", v);
                        prop_assert!(!v.rule.contains(SECRET), "{:?}", v);
                    }
                    Err(ValidationError::Failed(reason)) => {
                        prop_assert!(false, "validator failed: {}", reason);
                    }
                }
            }
        }
    }
}
