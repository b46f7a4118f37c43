//! Shaping what the router produced for an initialize-era session: nothing
//! of 2026-07-28 leaks out (`resultType`, cache hints, server info in
//! `_meta`), and nothing newer than the negotiated revision either (icons and
//! `Implementation` extras are 2025-11-25's).

use serde_json::{Map, Value};

use crate::protocol::{Revision, keys};

/// An internal code for "the client could not give the input": tools turn it
/// into an `isError` result, other methods into -32603.
pub(crate) const CLIENT_FAILED: i64 = -32099;

/// Removes the 2026-07-28 members from a result object.
pub(crate) fn result(map: &mut Map<String, Value>) {
    map.remove("resultType");
    map.remove("ttlMs");
    map.remove("cacheScope");
    let empty_meta = match map.get_mut("_meta") {
        Some(Value::Object(meta)) => {
            meta.remove(keys::SERVER_INFO);
            meta.is_empty()
        }
        _ => false,
    };
    if empty_meta {
        map.remove("_meta");
    }
}

/// The server's `Implementation` as the revision knows it.
pub(crate) fn implementation(info: &Value, revision: Revision) -> Value {
    let mut info = info.clone();
    if !revision.has_icons()
        && let Value::Object(map) = &mut info
    {
        map.remove("icons");
        map.remove("description");
        map.remove("websiteUrl");
    }
    info
}

/// The server capabilities as an initialize-era session sees them: no
/// `extensions` map (these revisions have none).
pub(crate) fn capabilities(caps: &Value) -> Value {
    let mut caps = caps.clone();
    if let Value::Object(map) = &mut caps {
        map.remove("extensions");
    }
    caps
}

/// Whether a listed tool's output schema is one the initialize era can
/// express (its `structuredContent` must be an object).
fn inexpressible_output(map: &Map<String, Value>) -> bool {
    map.get("outputSchema")
        .is_some_and(|o| o.get("type").and_then(Value::as_str) != Some("object"))
}

/// A listed item as an initialize-era revision with or without icons can
/// express it, or `None` when it is listed as it is: no icons before
/// 2025-11-25, and no output schema that is not an object schema (the tool
/// is listed and callable; its non-object structured content is left out of
/// its results, see [`tool_result`]).
fn item(value: &Value, icons: bool) -> Option<Value> {
    let map = value.as_object()?;
    let drop_output = inexpressible_output(map);
    let drop_icons = !icons && map.contains_key("icons");
    if !drop_output && !drop_icons {
        return None;
    }
    let mut map = map.clone();
    if drop_output {
        map.remove("outputSchema");
    }
    if drop_icons {
        map.remove("icons");
    }
    Some(Value::Object(map))
}

/// A listed item's forms for the initialize-era revisions without icons
/// (`[0]`) and with them (`[1]`), where they differ from its own.
pub(crate) fn listed_forms(value: &Value) -> [Option<Value>; 2] {
    [false, true].map(|icons| item(value, icons))
}

/// A `tools/call` result as the initialize era can express it:
/// `structuredContent` only when it is an object (the text block that
/// carries the same JSON stays).
pub(crate) fn tool_result(map: &mut Map<String, Value>) {
    if map.get("structuredContent").is_some_and(|v| !v.is_object()) {
        map.remove("structuredContent");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_lose_every_2026_member() {
        let mut map = json!({
            "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}},
            "content": []
        });
        result(map.as_object_mut().unwrap());
        assert_eq!(map, json!({"content": []}));
        let mut kept = json!({"_meta": {"app/x": 1}, "resultType": "complete"});
        result(kept.as_object_mut().unwrap());
        assert_eq!(kept, json!({"_meta": {"app/x": 1}}));
    }

    /// A tool result said to fit the initialize era is written out as the
    /// object that revision's shaping leaves unchanged.
    #[test]
    fn a_result_that_fits_needs_no_shaping() {
        use crate::tool::{Content, ToolResult};
        let mut raw = Map::new();
        raw.insert("content".into(), json!([]));
        raw.insert("resultType".into(), json!("complete"));
        let results = [
            (ToolResult::text("a \"b\""), true),
            (ToolResult::structured(json!({"sum": 3})), true),
            (ToolResult::structured(json!([1, 2])), false),
            (ToolResult::content([Content::text("x")]), true),
            (ToolResult::error("failed"), true),
            (ToolResult::text("m").with_meta("k", json!(1)), false),
            (ToolResult::raw(raw), false),
        ];
        for (result, fits) in results {
            assert_eq!(result.fits_initialize_era(), fits, "{result:?}");
            if !fits {
                continue;
            }
            let mut map = result.to_wire().as_object().cloned().unwrap();
            let before = map.clone();
            super::result(&mut map);
            tool_result(&mut map);
            assert_eq!(map, before, "{result:?}");
            assert_eq!(
                serde_json::to_string(&result).unwrap(),
                serde_json::to_string(&map).unwrap()
            );
        }
    }

    #[test]
    fn non_object_structured_content_is_left_out() {
        let mut result = json!({"content": [], "structuredContent": [1, 2]});
        tool_result(result.as_object_mut().unwrap());
        assert_eq!(result, json!({"content": []}));
    }
}
