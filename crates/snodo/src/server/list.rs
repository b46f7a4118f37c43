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
use crate::protocol::{CacheHints, Revision};

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

/// One item as it is listed: the key a policy sees it by (a tool's or a
/// prompt's name, a resource's URI or URI template), its encoded JSON, and
/// its encoded forms for the initialize era where they differ. Only text is
/// kept: a listed item is never looked at as JSON again.
#[derive(Clone, Debug)]
pub(crate) struct Listed {
    pub(crate) key: Box<str>,
    encoded: String,
    /// The item re-encoded for the initialize-era revisions without icons
    /// (`[0]`) and with them (`[1]`), where it must change.
    legacy: [Option<String>; 2],
    /// How a host that did not declare MCP Apps sees it.
    apps: Apps,
}

/// How an item shows to a host without MCP Apps.
#[derive(Clone, Debug)]
enum Apps {
    /// As it is: nothing of MCP Apps in it.
    Same,
    /// Not at all: a tool for the app alone, or an app resource.
    Hidden,
    /// As this item: a tool without its `_meta.ui`.
    Plain(Box<Listed>),
}

impl Listed {
    /// The item `value` keyed by its member `key`, with the members named in
    /// `written` spelled as written.
    pub(crate) fn new(value: &Value, written: &Written, key: &str) -> Self {
        let apps = apps_form(value, key)
            .map(|plain| match plain {
                None => Apps::Hidden,
                Some(v) => Apps::Plain(Box::new(Self::encoded(&v, written, key, Apps::Same))),
            })
            .unwrap_or(Apps::Same);
        Self::encoded(value, written, key, apps)
    }

    fn encoded(value: &Value, written: &Written, key: &str, apps: Apps) -> Self {
        Self {
            key: value.get(key).and_then(Value::as_str).unwrap_or("").into(),
            encoded: encode_item(value, written),
            legacy: super::legacy::listed_forms(value)
                .map(|form| form.map(|v| encode_item(&v, written))),
            apps,
        }
    }
}

/// What MCP Apps change of an item listed by `key` for a host without
/// them: `None` when nothing; `Some(None)` when it is not listed (a tool for
/// the app alone, an app resource); `Some(Some(plain))` for a tool bound to
/// an app, listed without its `_meta.ui`.
fn apps_form(value: &Value, key: &str) -> Option<Option<Value>> {
    match key {
        "name" => {
            let (_, app_only) = crate::apps::tool_binding(value.get("_meta"))?;
            if app_only {
                return Some(None);
            }
            let mut plain = value.clone();
            let meta = value.get("_meta").and_then(crate::apps::without_ui);
            match (plain.as_object_mut(), meta) {
                (Some(m), Some(meta)) => {
                    m.insert("_meta".into(), meta);
                }
                (Some(m), None) => {
                    m.remove("_meta");
                }
                _ => {}
            }
            Some(Some(plain))
        }
        "uri" => {
            let is_app = value.get("mimeType").and_then(Value::as_str)
                == Some(crate::apps::MIME_TYPE)
                && value
                    .get("uri")
                    .and_then(Value::as_str)
                    .is_some_and(|u| u.starts_with(crate::apps::SCHEME));
            is_app.then_some(None)
        }
        _ => None,
    }
}

/// Encoded items and their digest.
#[derive(Default)]
pub(crate) struct Encoded {
    pub(crate) items: Vec<String>,
    pub(crate) digest: u64,
}

impl Encoded {
    fn new(items: Vec<String>) -> Self {
        let digest = catalog_digest(&items);
        Self { items, digest }
    }
}

/// One listed collection: the items' keys (for policies) and their encoded
/// text (spliced into responses, never re-serialized) with its digest, as
/// 2026-07-28 lists them and, where they differ, as the initialize era does.
#[derive(Default)]
pub(crate) struct Listing {
    pub(crate) keys: Vec<Box<str>>,
    pub(crate) current: Encoded,
    /// For the initialize-era revisions without icons (`[0]`) and with them
    /// (`[1]`); `None` where every item is listed as it is.
    legacy: [Option<Encoded>; 2],
    /// The listing a host that did not declare MCP Apps gets, where it
    /// differs.
    without_apps: Option<Box<Listing>>,
}

impl Listing {
    /// The listing of `items`, in their order.
    pub(crate) fn new<'a>(items: impl IntoIterator<Item = &'a Listed>) -> Self {
        Self::of(items.into_iter().collect())
    }

    fn of(items: Vec<&Listed>) -> Self {
        let legacy = [0, 1].map(|form| {
            items
                .iter()
                .any(|item| item.legacy[form].is_some())
                .then(|| {
                    Encoded::new(
                        items
                            .iter()
                            .map(|item| item.legacy[form].as_ref().unwrap_or(&item.encoded).clone())
                            .collect(),
                    )
                })
        });
        let without_apps = items
            .iter()
            .any(|item| !matches!(item.apps, Apps::Same))
            .then(|| {
                Box::new(Self::of(
                    items
                        .iter()
                        .filter_map(|item| match &item.apps {
                            Apps::Same => Some(*item),
                            Apps::Hidden => None,
                            Apps::Plain(plain) => Some(plain.as_ref()),
                        })
                        .collect(),
                ))
            });
        Self {
            keys: items.iter().map(|item| item.key.clone()).collect(),
            current: Encoded::new(items.iter().map(|item| item.encoded.clone()).collect()),
            legacy,
            without_apps,
        }
    }

    /// The listing for a host whose capabilities are `client`: without
    /// what MCP Apps add unless it declared them.
    pub(crate) fn for_client(&self, client: &Value) -> &Listing {
        match &self.without_apps {
            Some(plain) if !crate::apps::declared_by(client) => plain,
            _ => self,
        }
    }

    /// Whether any item differs for a host without MCP Apps.
    pub(crate) fn uses_apps(&self) -> bool {
        self.without_apps.is_some()
    }

    /// The items as `revision` lists them: an initialize-era revision may
    /// need icons or output schemas left out.
    pub(crate) fn in_revision(&self, revision: Option<Revision>) -> &Encoded {
        revision
            .filter(|r| r.is_legacy())
            .and_then(|r| self.legacy[usize::from(r.has_icons())].as_ref())
            .unwrap_or(&self.current)
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

    #[test]
    fn icons_are_2025_11_25_and_non_object_outputs_are_left_out() {
        use crate::protocol::Revision;
        let items = [
            json!({"name": "a", "icons": [{"src": "https://x/i.png"}]}),
            json!({"name": "b", "outputSchema": {"type": "array"}}),
            json!({"name": "c"}),
        ]
        .map(|v| Listed::new(&v, &Written::new(), "name"));
        let listing = Listing::new(&items);
        let listed = |r| listing.in_revision(r).items.clone();
        assert_eq!(
            listing.keys.as_slice(),
            ["a".into(), "b".into(), "c".into()]
        );
        assert_eq!(
            listed(Some(Revision::V2026_07_28)),
            [
                r#"{"icons":[{"src":"https://x/i.png"}],"name":"a"}"#,
                r#"{"name":"b","outputSchema":{"type":"array"}}"#,
                r#"{"name":"c"}"#
            ]
        );
        assert_eq!(listed(None), listed(Some(Revision::V2026_07_28)));
        assert_eq!(
            listed(Some(Revision::V2025_06_18)),
            [r#"{"name":"a"}"#, r#"{"name":"b"}"#, r#"{"name":"c"}"#]
        );
        assert_eq!(
            listed(Some(Revision::V2025_11_25)),
            [
                r#"{"icons":[{"src":"https://x/i.png"}],"name":"a"}"#,
                r#"{"name":"b"}"#,
                r#"{"name":"c"}"#
            ]
        );
        let plain = Listed::new(&json!({"name": "c"}), &Written::new(), "name");
        let plain = Listing::new([&plain]);
        assert!(std::ptr::eq(
            plain.in_revision(Some(Revision::V2025_06_18)),
            &plain.current
        ));
    }

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
