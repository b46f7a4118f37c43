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

const PREFIX: &str = "mcp1.";
const MAX_CURSOR: usize = 2048;

/// A digest of a catalog's listed definitions; any change changes it.
pub(crate) fn catalog_digest(items: &[Value]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for item in items {
        item.to_string().hash(&mut hasher);
    }
    hasher.finish()
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
    if parts.0 != method || parts.2 != page || parts.1 == 0 || parts.1 % page != 0 {
        return Err(invalid());
    }
    if parts.3 != digest.to_string() {
        return Err(Error::invalid_params("Pagination cursor has expired"));
    }
    Ok(parts.1)
}

/// One page of `items` under `key`, with `nextCursor` when more remain.
pub(crate) fn page(
    method: &str,
    key: &str,
    items: &[Value],
    digest: u64,
    page_size: usize,
    params: &Map<String, Value>,
) -> Result<Map<String, Value>, Error> {
    let offset = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => decode_cursor(c, method, page_size, digest)?,
        Some(_) => return Err(Error::invalid_params("Invalid pagination cursor")),
    };
    if offset > items.len() {
        return Err(Error::invalid_params("Invalid pagination cursor"));
    }
    let end = (offset + page_size).min(items.len());
    let mut out = Map::new();
    out.insert(key.into(), Value::Array(items[offset..end].to_vec()));
    if end < items.len() {
        out.insert(
            "nextCursor".into(),
            encode_cursor(method, end, page_size, digest).into(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
