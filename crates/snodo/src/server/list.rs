//! Paged list results with opaque cursors bound to the catalog.
//!
//! A cursor is `mcp1.` + base64url of `[method, offset, page size, digest]`,
//! the digest covering the catalog as listed and the protocol revision. A
//! cursor issued for another method, page size, revision or catalog is
//! refused with -32602, as is anything malformed or longer than 2 048 bytes.

use std::hash::{DefaultHasher, Hash, Hasher};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

use crate::Error;
use crate::protocol::CacheHints;

const PREFIX: &str = "mcp1.";
const MAX_CURSOR: usize = 2048;

/// A digest of listed items (their encoded JSON); any change changes it.
pub(crate) fn catalog_digest<T: AsRef<str>>(encoded: &[T]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for item in encoded {
        item.as_ref().hash(&mut hasher);
    }
    hasher.finish()
}

/// Members of a listed item published as written rather than re-encoded
/// from its `Value` (a tool's schemas, whose key order a `Value` does not
/// keep): member name and JSON text.
pub(crate) type Written = Vec<(&'static str, Box<str>)>;

/// One listed collection: the items as JSON (for policies), the members
/// published as written, their encoded text (spliced into responses, never
/// re-serialized) and their digest.
#[derive(Default)]
pub(crate) struct Listing {
    pub(crate) items: Vec<Value>,
    pub(crate) written: Vec<Written>,
    pub(crate) encoded: Vec<String>,
    pub(crate) digest: u64,
}

impl Listing {
    /// Items encoded from their values alone.
    pub(crate) fn new(items: Vec<Value>) -> Self {
        Self::with_written(items.into_iter().map(|v| (v, Written::new())).collect())
    }

    /// Items with members published as written.
    pub(crate) fn with_written(items: Vec<(Value, Written)>) -> Self {
        let (items, written): (Vec<Value>, Vec<Written>) = items.into_iter().unzip();
        let encoded: Vec<String> = items
            .iter()
            .zip(&written)
            .map(|(item, written)| encode_item(item, written))
            .collect();
        let digest = catalog_digest(&encoded);
        Self {
            items,
            written,
            encoded,
            digest,
        }
    }
}

/// Compact JSON for `item`, with each top-level member named in `written`
/// spelled as its written text.
pub(crate) fn encode_item(item: &Value, written: &Written) -> String {
    let Some(map) = item.as_object().filter(|_| !written.is_empty()) else {
        return item.to_string();
    };
    let mut out = String::from("{");
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(key.as_str()).to_string());
        out.push(':');
        match written.iter().find(|(name, _)| name == key) {
            Some((_, text)) => out.push_str(text),
            None => out.push_str(&value.to_string()),
        }
    }
    out.push('}');
    out
}

/// Binds a catalog digest to the protocol revision the list is served in.
pub(crate) fn for_revision(digest: u64, revision: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    digest.hash(&mut hasher);
    revision.hash(&mut hasher);
    hasher.finish()
}

fn encode_cursor(method: &str, offset: usize, page: usize, digest: u64) -> String {
    let body = json!([method, offset, page, digest.to_string()]).to_string();
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(body))
}

fn decode_cursor(cursor: &str, method: &str, page: usize, digest: u64) -> Result<usize, Error> {
    let invalid = || Error::invalid_params("Invalid pagination cursor");
    if cursor.len() > MAX_CURSOR {
        return Err(invalid());
    }
    let encoded = cursor.strip_prefix(PREFIX).ok_or_else(invalid)?;
    let bytes = URL_SAFE_NO_PAD.decode(encoded).map_err(|_| invalid())?;
    let parts: (String, usize, usize, String) =
        serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if parts.0 != method || parts.2 != page || parts.1 == 0 || !parts.1.is_multiple_of(page) {
        return Err(invalid());
    }
    if parts.3 != digest.to_string() {
        return Err(Error::invalid_params("Pagination cursor has expired"));
    }
    Ok(parts.1)
}

/// The encoded result object of one page of `encoded` items under `key`:
/// the items, `nextCursor` when more remain, the cache hints (2026-07-28
/// only), and `tail` (the pre-encoded `resultType` and `_meta` members; empty
/// for the initialize-era revisions).
#[allow(clippy::too_many_arguments)]
pub(crate) fn page<T: AsRef<str>>(
    method: &str,
    key: &str,
    encoded: &[T],
    digest: u64,
    page_size: usize,
    params: &Map<String, Value>,
    cache: Option<&CacheHints>,
    tail: &str,
) -> Result<Vec<u8>, Error> {
    let offset = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => decode_cursor(c, method, page_size, digest)?,
        Some(_) => return Err(Error::invalid_params("Invalid pagination cursor")),
    };
    if offset > encoded.len() {
        return Err(Error::invalid_params("Invalid pagination cursor"));
    }
    let end = (offset + page_size).min(encoded.len());
    let items = &encoded[offset..end];
    let size: usize = items.iter().map(|i| i.as_ref().len() + 1).sum();
    let mut out = Vec::with_capacity(size + tail.len() + 128);
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_ref().as_bytes());
    }
    out.push(b']');
    if end < encoded.len() {
        let cursor = encode_cursor(method, end, page_size, digest);
        out.extend_from_slice(b",\"nextCursor\":");
        out.extend_from_slice(Value::String(cursor).to_string().as_bytes());
    }
    if let Some(cache) = cache {
        out.extend_from_slice(
            format!(
                ",\"ttlMs\":{},\"cacheScope\":\"{}\"",
                cache.ttl_ms,
                cache.scope.as_str()
            )
            .as_bytes(),
        );
    }
    if !tail.is_empty() {
        out.push(b',');
        out.extend_from_slice(tail.as_bytes());
    }
    out.push(b'}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(
        method: &str,
        key: &str,
        items: &[Value],
        digest: u64,
        size: usize,
        params: &Map<String, Value>,
    ) -> Result<Map<String, Value>, Error> {
        let encoded: Vec<String> = items.iter().map(Value::to_string).collect();
        let bytes = super::page(
            method,
            key,
            &encoded,
            digest,
            size,
            params,
            Some(&CacheHints::default()),
            "\"resultType\":\"complete\"",
        )?;
        Ok(serde_json::from_slice(&bytes).unwrap())
    }

    fn catalog_digest(items: &[Value]) -> u64 {
        let encoded: Vec<String> = items.iter().map(Value::to_string).collect();
        super::catalog_digest(&encoded)
    }

    #[test]
    fn pages_follow_cursors_to_the_end() {
        let items: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let digest = catalog_digest(&items);
        let first = page("tools/list", "tools", &items, digest, 2, &Map::new()).unwrap();
        assert_eq!(first["tools"], json!([0, 1]));
        let mut params = Map::new();
        params.insert("cursor".into(), first["nextCursor"].clone());
        let second = page("tools/list", "tools", &items, digest, 2, &params).unwrap();
        assert_eq!(second["tools"], json!([2, 3]));
        params.insert("cursor".into(), second["nextCursor"].clone());
        let last = page("tools/list", "tools", &items, digest, 2, &params).unwrap();
        assert_eq!(last["tools"], json!([4]));
        assert!(!last.contains_key("nextCursor"));
    }

    #[test]
    fn cursors_are_bound_to_the_revision() {
        let items: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let digest = catalog_digest(&items);
        let (now, older) = (
            for_revision(digest, "2026-07-28"),
            for_revision(digest, "2025-11-25"),
        );
        assert_ne!(now, older);
        let first = page("tools/list", "tools", &items, now, 2, &Map::new()).unwrap();
        let mut params = Map::new();
        params.insert("cursor".into(), first["nextCursor"].clone());
        assert!(page("tools/list", "tools", &items, now, 2, &params).is_ok());
        assert_eq!(
            page("tools/list", "tools", &items, older, 2, &params)
                .unwrap_err()
                .code(),
            -32602
        );
    }

    #[test]
    fn foreign_stale_and_malformed_cursors_are_refused() {
        let items: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let digest = catalog_digest(&items);
        let first = page("tools/list", "tools", &items, digest, 2, &Map::new()).unwrap();
        let cursor = first["nextCursor"].clone();
        let mut params = Map::new();
        params.insert("cursor".into(), cursor);
        for (method, size, dig) in [
            ("prompts/list", 2, digest),
            ("tools/list", 3, digest),
            ("tools/list", 2, digest + 1),
        ] {
            let err = page(method, "x", &items, dig, size, &params).unwrap_err();
            assert_eq!(err.code(), -32602);
        }
        for bad in [
            json!("nope"),
            json!("mcp1.!!!"),
            json!(7),
            json!("a".repeat(3000)),
        ] {
            params.insert("cursor".into(), bad);
            assert_eq!(
                page("tools/list", "tools", &items, digest, 2, &params)
                    .unwrap_err()
                    .code(),
                -32602
            );
        }
    }
}
