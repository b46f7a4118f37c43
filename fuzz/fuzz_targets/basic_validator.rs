//! The bundled `Basic` validator: any schema compiles or is refused, and any
//! instance validates or fails, without panicking or overflowing the stack;
//! a violation never repeats the instance's values. Input: schema JSON, a NUL
//! byte, instance JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use snodo::schema::{Basic, ValidationError, Validator};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |&b| b == 0);
    let (Some(schema), Some(instance)) = (parts.next(), parts.next()) else {
        return;
    };
    let (Ok(schema), Ok(instance)) = (
        serde_json::from_slice::<Value>(schema),
        serde_json::from_slice::<Value>(instance),
    ) else {
        return;
    };
    let Ok(compiled) = Basic.compile(&schema) else {
        return;
    };
    if let Err(ValidationError::Invalid(violation)) = compiled.validate(&instance) {
        // The rule is told in words: no string value of the instance shows
        // up in it. Rules are ASCII prose, so only values that rules could
        // never contain by themselves (a non-ASCII or control character) are
        // tested: a value may well read "does not match the declared pattern".
        let schema_text = schema.to_string();
        let mut values = Vec::new();
        let mut keys = Vec::new();
        strings(&instance, &mut values, &mut keys);
        // Property names are not values: a rule may name one.
        let keys = keys.join("\u{0}");
        for value in values {
            if keys.contains(value) {
                continue;
            }
            let foreign = value.chars().any(|c| !c.is_ascii() || c.is_control());
            if foreign && value.chars().count() >= 4 && !schema_text.contains(value) {
                assert!(!violation.rule.contains(value), "value leaked: {violation}");
            }
        }
    }
});

/// The string values of `value` into `out`, and its property names into
/// `keys`.
fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>, keys: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out, keys)),
        Value::Object(map) => {
            for (key, v) in map {
                keys.push(key);
                strings(v, out, keys);
            }
        }
        _ => {}
    }
}
