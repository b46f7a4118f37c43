//! JSON equality and canonical forms, without recursion (an instance may nest
//! deeper than the stack allows).

use std::fmt::Write as _;

use serde_json::Value;

use super::number::*;

/// JSON equality, numbers compared by value.
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
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
pub(super) fn canonical(value: &Value) -> String {
    enum Work<'a> {
        Value(&'a Value),
        Key(&'a str),
        Close(char),
    }
    pub(super) fn string(out: &mut String, s: &str) {
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
