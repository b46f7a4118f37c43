//! The compiled tree: what each schema node checks.

use serde_json::Value;

use crate::schema::{CompiledSchema, ValidationError};

use super::number::*;

/// Schemas nested deeper than this many levels are refused.
pub(super) const MAX_DEPTH: usize = 64;

pub(super) struct Compiled {
    pub(super) root: Node,
}

impl CompiledSchema for Compiled {
    fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        let mut path = Vec::new();
        self.root
            .check(instance, &mut path)
            .map_err(ValidationError::Invalid)
    }
}

pub(super) enum Node {
    /// `true` (accept everything) or `false` (accept nothing).
    Bool(bool),
    Checks(Box<Checks>),
}

#[derive(Default)]
pub(super) struct Checks {
    pub(super) types: Option<TypeSet>,
    pub(super) constant: Option<Value>,
    pub(super) allowed: Option<Vec<Value>>,
    pub(super) object: Option<ObjectChecks>,
    pub(super) array: Option<ArrayChecks>,
    pub(super) string: Option<StringChecks>,
    pub(super) number: Option<NumberChecks>,
}

pub(super) struct ObjectChecks {
    pub(super) required: Vec<String>,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    /// Sorted by name.
    pub(super) properties: Vec<(String, Node)>,
    /// `None` when absent or `true`.
    pub(super) additional: Option<Node>,
}

pub(super) struct ArrayChecks {
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique: bool,
    pub(super) items: Option<Node>,
}

pub(super) struct StringChecks {
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) pattern: Option<regex_lite::Regex>,
}

pub(super) struct NumberChecks {
    pub(super) minimum: Option<Bound>,
    pub(super) maximum: Option<Bound>,
    pub(super) exclusive_minimum: Option<Bound>,
    pub(super) exclusive_maximum: Option<Bound>,
}

/// A numeric bound: its value for comparison, its JSON text for messages.
pub(super) struct Bound {
    pub(super) value: Num,
    pub(super) text: String,
}

/// The JSON type names, in the order of [`TypeSet`]'s bits.
pub(super) const TYPE_NAMES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];
pub(super) const ARRAY: u8 = 1 << 0;
pub(super) const BOOLEAN: u8 = 1 << 1;
pub(super) const INTEGER: u8 = 1 << 2;
pub(super) const NULL: u8 = 1 << 3;
pub(super) const NUMBER: u8 = 1 << 4;
pub(super) const OBJECT: u8 = 1 << 5;
pub(super) const STRING: u8 = 1 << 6;

/// The declared `type`s: a bit mask, and the names in declared order for
/// messages.
pub(super) struct TypeSet {
    pub(super) mask: u8,
    pub(super) declared: String,
}

impl TypeSet {
    pub(super) fn matches(&self, value: &Value) -> bool {
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
