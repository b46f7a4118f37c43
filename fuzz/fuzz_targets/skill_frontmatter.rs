//! A skill's `SKILL.md` frontmatter and its `skills/list` entry, as a client
//! reads them from a server: any text reads into a bounded JSON object or an
//! error, never a panic; any bytes decode into an entry or are refused, and
//! an entry that decodes writes out and reads back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use snodo::skills::{MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_VALUES, Skill, frontmatter};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(map) = frontmatter(text)
    {
        let value = Value::Object(map);
        let (count, depth) = measure(&value, 0);
        assert!(count <= MAX_FRONTMATTER_VALUES + 1, "{count} values");
        assert!(depth <= MAX_FRONTMATTER_DEPTH + 1, "{depth} levels");
    }
    if let Ok(skill) = serde_json::from_slice::<Skill>(data) {
        let again: Skill = serde_json::from_value(serde_json::to_value(&skill).unwrap()).unwrap();
        assert_eq!(again, skill);
    }
});

/// The values in `value` and its depth.
fn measure(value: &Value, depth: usize) -> (usize, usize) {
    match value {
        Value::Array(items) => items.iter().fold((1, depth + 1), |(n, d), v| {
            let (m, e) = measure(v, depth + 1);
            (n + m, d.max(e))
        }),
        Value::Object(map) => map.values().fold((1, depth + 1), |(n, d), v| {
            let (m, e) = measure(v, depth + 1);
            (n + m, d.max(e))
        }),
        _ => (1, depth),
    }
}
