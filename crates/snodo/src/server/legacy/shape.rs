//! Shaping what the router produced for an initialize-era session: nothing
//! of 2026-07-28 leaks out (`resultType`, cache hints, server info in
//! `_meta`), and nothing newer than the negotiated revision either (icons and
//! `Implementation` extras are 2025-11-25's).

use serde_json::{Map, Value};

use super::super::list::{Listing, encode_item};
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

/// A listed item as the revision can express it: no icons before
/// 2025-11-25, and no output schema that is not an object schema (the tool
/// is listed and callable; its non-object structured content is left out of
/// its results, see [`tool_result`]).
fn item(value: &Value, revision: Revision) -> Value {
    let Some(map) = value.as_object() else {
        return value.clone();
    };
    let mut map = map.clone();
    if inexpressible_output(&map) {
        map.remove("outputSchema");
    }
    if !revision.has_icons() {
        map.remove("icons");
    }
    Value::Object(map)
}

fn needs_change(value: &Value, revision: Revision) -> bool {
    let Some(map) = value.as_object() else {
        return false;
    };
    (!revision.has_icons() && map.contains_key("icons")) || inexpressible_output(map)
}

/// A `tools/call` result as the initialize era can express it:
/// `structuredContent` only when it is an object (the text block that
/// carries the same JSON stays).
pub(crate) fn tool_result(map: &mut Map<String, Value>) {
    if map.get("structuredContent").is_some_and(|v| !v.is_object()) {
        map.remove("structuredContent");
    }
}

/// The items of a listing adapted to an initialize-era revision, with their
/// encoded text; `None` when every item is listed as it is.
pub(crate) fn adapt_listing(listing: &Listing, revision: Revision) -> Option<Vec<(Value, String)>> {
    if !listing.items.iter().any(|v| needs_change(v, revision)) {
        return None;
    }
    Some(
        listing
            .items
            .iter()
            .zip(&listing.written)
            .map(|(v, written)| {
                let v = item(v, revision);
                let text = encode_item(&v, written);
                (v, text)
            })
            .collect(),
    )
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

    #[test]
    fn icons_are_2025_11_25_and_non_object_outputs_are_left_out() {
        let listing = Listing::new(vec![
            json!({"name": "a", "icons": [{"src": "https://x/i.png"}]}),
            json!({"name": "b", "outputSchema": {"type": "array"}}),
            json!({"name": "c"}),
        ]);
        let old = adapt_listing(&listing, Revision::V2025_06_18).unwrap();
        let names: Vec<&str> = old
            .iter()
            .map(|(v, _)| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(old[0].0.get("icons").is_none());
        assert!(old[1].0.get("outputSchema").is_none());
        let new = adapt_listing(&listing, Revision::V2025_11_25).unwrap();
        assert!(new[0].0.get("icons").is_some());
        let plain = Listing::new(vec![json!({"name": "c"})]);
        assert!(adapt_listing(&plain, Revision::V2025_06_18).is_none());
        let mut result = json!({"content": [], "structuredContent": [1, 2]});
        tool_result(result.as_object_mut().unwrap());
        assert_eq!(result, json!({"content": []}));
    }
}
