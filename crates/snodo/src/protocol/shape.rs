//! Result shaping: `resultType`, server info, cache hints.

use serde_json::{Map, Value};

use super::keys;

/// Who may cache a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CacheScope {
    /// Any cache, shared between users.
    Public,
    /// Only the requesting client's cache.
    #[default]
    Private,
}

impl CacheScope {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// `ttlMs` and `cacheScope`, as carried by discover, lists and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheHints {
    /// How long the result stays fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl CacheHints {
    /// Hints: fresh for `ttl_ms` milliseconds, cacheable by `scope`.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }

    /// Writes `ttlMs` and `cacheScope` into a result object.
    pub fn apply(&self, result: &mut Map<String, Value>) {
        result.insert("ttlMs".into(), self.ttl_ms.into());
        result.insert("cacheScope".into(), self.scope.as_str().into());
    }
}

/// Adds `resultType` (unless present) and `_meta[serverInfo]` to a result.
pub(crate) fn stamp_result(result: &mut Map<String, Value>, server_info: &Value) {
    if !result.contains_key("resultType") {
        result.insert("resultType".into(), "complete".into());
    }
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(keys::SERVER_INFO.into(), server_info.clone());
    }
}
