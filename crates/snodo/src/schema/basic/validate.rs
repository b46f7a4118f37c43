//! Validation: walking the compiled tree over an instance, stopping at the first violation.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::schema::Violation;

use super::equality::*;
use super::number::*;
use super::tree::*;

#[derive(Clone, Copy)]
pub(super) enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Renders `path` as an RFC 6901 JSON pointer.
pub(super) fn pointer(path: &[Segment<'_>]) -> String {
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

pub(super) fn violation(path: &[Segment<'_>], rule: String) -> Violation {
    Violation::new(pointer(path), rule)
}

impl Node {
    pub(super) fn check<'a>(
        &self,
        instance: &'a Value,
        path: &mut Vec<Segment<'a>>,
    ) -> Result<(), Violation> {
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
    pub(super) fn check_child<'a>(
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
    pub(super) fn check<'a>(
        &self,
        instance: &'a Value,
        path: &mut Vec<Segment<'a>>,
    ) -> Result<(), Violation> {
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
    pub(super) fn check<'a>(
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
    pub(super) fn check<'a>(
        &self,
        items: &'a [Value],
        path: &mut Vec<Segment<'a>>,
    ) -> Result<(), Violation> {
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
    pub(super) fn check(&self, s: &str, path: &[Segment<'_>]) -> Result<(), Violation> {
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
    pub(super) fn check(&self, n: &Number, path: &[Segment<'_>]) -> Result<(), Violation> {
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
