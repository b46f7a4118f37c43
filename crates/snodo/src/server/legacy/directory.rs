//! Initialize-era sessions shared by several nodes: a [`SessionDirectory`]
//! keeps each session's [`SessionRecord`] where every node can read it.
//!
//! With a directory, the Streamable HTTP service writes a session's record
//! when `initialize` opens it and whenever the session's state changes
//! (`notifications/initialized`, `logging/setLevel`,
//! `resources/subscribe`, `resources/unsubscribe`), reads it on every
//! request that names the session (so a session opened on one node serves
//! requests on any other, and one deleted anywhere is 404 everywhere), and
//! removes it on `DELETE`. Reading refreshes the record's idle expiry. The
//! nodes also tell each other of each change over the
//! [`EventHub`](crate::events::EventHub)'s bus, so that the node holding
//! the session's GET stream filters resource updates with the current
//! subscriptions, and the answer to a server-initiated request reaches the
//! node whose request awaits it.
//!
//! `snodo-redis` and `snodo-postgres` provide directories;
//! [`MemoryDirectory`] is the in-process one (tests, or several services in
//! one process). [`contract`] is the test suite every directory passes.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::future::BoxFuture;
use crate::protocol::{LogLevel, Revision};

/// The largest record a directory stores (1 MiB).
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// What every node needs to serve a session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The `Mcp-Session-Id`.
    pub id: String,
    /// The negotiated revision.
    pub revision: Revision,
    /// What the client declared at `initialize`.
    pub client_capabilities: Value,
    /// The client's `clientInfo`.
    pub client_info: Option<Value>,
    /// The subject of the principal that opened the session.
    pub owner: Option<String>,
    /// Whether `notifications/initialized` arrived.
    pub initialized: bool,
    /// The level `logging/setLevel` set.
    pub log_level: Option<LogLevel>,
    /// The subscribed resource URIs, sorted.
    pub subscriptions: Vec<String>,
}

impl SessionRecord {
    /// A record of a new session.
    pub fn new(id: impl Into<String>, revision: Revision) -> Self {
        Self {
            id: id.into(),
            revision,
            client_capabilities: json!({}),
            client_info: None,
            owner: None,
            initialized: false,
            log_level: None,
            subscriptions: Vec::new(),
        }
    }

    /// The record as JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Map::new();
        out.insert("id".into(), self.id.as_str().into());
        out.insert("revision".into(), self.revision.as_str().into());
        out.insert("capabilities".into(), self.client_capabilities.clone());
        if let Some(info) = &self.client_info {
            out.insert("clientInfo".into(), info.clone());
        }
        if let Some(owner) = &self.owner {
            out.insert("owner".into(), owner.as_str().into());
        }
        out.insert("initialized".into(), self.initialized.into());
        if let Some(level) = self.log_level {
            out.insert("logLevel".into(), level.as_str().into());
        }
        out.insert("subscriptions".into(), json!(self.subscriptions));
        serde_json::to_vec(&Value::Object(out)).unwrap_or_default()
    }

    /// A record from its JSON; `None` for anything malformed or over
    /// [`MAX_RECORD_BYTES`].
    pub fn from_json(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > MAX_RECORD_BYTES {
            return None;
        }
        let value: Value = serde_json::from_slice(bytes).ok()?;
        let text = |key: &str| value.get(key).and_then(Value::as_str);
        let revision = Revision::parse(text("revision")?).filter(|r| r.is_legacy())?;
        let log_level = match value.get("logLevel") {
            None => None,
            Some(level) => Some(LogLevel::parse(level.as_str()?)?),
        };
        let subscriptions = value
            .get("subscriptions")?
            .as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            id: text("id")?.to_string(),
            revision,
            client_capabilities: value.get("capabilities")?.clone(),
            client_info: value.get("clientInfo").cloned(),
            owner: text("owner").map(str::to_string),
            initialized: value.get("initialized")?.as_bool()?,
            log_level,
            subscriptions,
        })
    }
}

/// A directory could not be reached or answered something unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryError(pub String);

impl fmt::Display for DirectoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DirectoryError {}

/// Where the nodes of one service keep their initialize-era sessions.
pub trait SessionDirectory: Send + Sync + 'static {
    /// Stores (creates or replaces) a record; it expires after the
    /// directory's idle time unless read again.
    fn save<'a>(&'a self, record: &'a SessionRecord) -> BoxFuture<'a, Result<(), DirectoryError>>;
    /// The live record of `id`, refreshing its idle expiry.
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, DirectoryError>>;
    /// Removes a record; `true` when there was one.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>>;
}

impl<T: SessionDirectory + ?Sized> SessionDirectory for std::sync::Arc<T> {
    fn save<'a>(&'a self, record: &'a SessionRecord) -> BoxFuture<'a, Result<(), DirectoryError>> {
        (**self).save(record)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, DirectoryError>> {
        (**self).load(id)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        (**self).remove(id)
    }
}

/// A directory in this process's memory, bounded, with idle expiry.
///
/// ```
/// use snodo::server::legacy::{MemoryDirectory, SessionDirectory, SessionRecord};
/// use snodo::protocol::Revision;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = MemoryDirectory::new(100, std::time::Duration::from_secs(60));
/// dir.save(&SessionRecord::new("s1", Revision::V2025_11_25)).await.unwrap();
/// assert!(dir.load("s1").await.unwrap().is_some());
/// assert!(dir.remove("s1").await.unwrap());
/// assert!(dir.load("s1").await.unwrap().is_none());
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryDirectory {
    records: Mutex<HashMap<String, (Vec<u8>, Instant)>>,
    max: usize,
    idle: Duration,
}

impl MemoryDirectory {
    /// A directory of at most `max` records, each expiring `idle` after it
    /// was last read or written.
    pub fn new(max: usize, idle: Duration) -> Self {
        Self {
            records: Mutex::default(),
            max: max.max(1),
            idle,
        }
    }
}

impl SessionDirectory for MemoryDirectory {
    fn save<'a>(&'a self, record: &'a SessionRecord) -> BoxFuture<'a, Result<(), DirectoryError>> {
        Box::pin(async move {
            let mut map = self.records.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            map.retain(|_, (_, at)| now.duration_since(*at) < self.idle);
            if map.len() >= self.max && !map.contains_key(&record.id) {
                return Err(DirectoryError(format!(
                    "too many sessions (at most {})",
                    self.max
                )));
            }
            map.insert(record.id.clone(), (record.to_json(), now));
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, DirectoryError>> {
        Box::pin(async move {
            let mut map = self.records.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let Some((bytes, at)) = map.get_mut(id) else {
                return Ok(None);
            };
            if now.duration_since(*at) >= self.idle {
                map.remove(id);
                return Ok(None);
            }
            *at = now;
            Ok(SessionRecord::from_json(bytes))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        Box::pin(async move {
            let mut map = self.records.lock().unwrap_or_else(|e| e.into_inner());
            Ok(map.remove(id).is_some())
        })
    }
}

pub mod contract {
    //! The contract every [`SessionDirectory`] keeps, as a test suite:
    //! [`run`] panics on the first broken rule. `idle` is the idle time the
    //! directory was made with (keep it short: the suite waits it out).

    use std::time::Duration;

    use serde_json::json;

    use super::{SessionDirectory, SessionRecord};
    use crate::protocol::{LogLevel, Revision};

    fn unique(name: &str) -> String {
        let mut bytes = [0u8; 8];
        let _ = getrandom::fill(&mut bytes);
        let tail: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("contract-{name}-{tail}")
    }

    /// Runs every rule against `directory`.
    pub async fn run(directory: &dyn SessionDirectory, idle: Duration) {
        // Round trip, with every field set.
        let mut record = SessionRecord::new(unique("full"), Revision::V2025_06_18);
        record.client_capabilities = json!({"roots": {"listChanged": true}});
        record.client_info = Some(json!({"name": "contract", "version": "1"}));
        record.owner = Some("alice".into());
        record.initialized = true;
        record.log_level = Some(LogLevel::Notice);
        record.subscriptions = vec!["demo://a".into(), "demo://b/c".into()];
        directory.save(&record).await.expect("save");
        assert_eq!(
            directory.load(&record.id).await.expect("load"),
            Some(record.clone())
        );
        // Replace.
        record.subscriptions.pop();
        record.log_level = None;
        directory.save(&record).await.expect("save again");
        assert_eq!(
            directory.load(&record.id).await.expect("load"),
            Some(record.clone())
        );
        // Unknown ids, removal.
        assert_eq!(directory.load(&unique("never")).await.expect("load"), None);
        assert!(directory.remove(&record.id).await.expect("remove"));
        assert!(!directory.remove(&record.id).await.expect("remove twice"));
        assert_eq!(directory.load(&record.id).await.expect("load"), None);
        // Reading refreshes the idle expiry; an unread record expires.
        let kept = SessionRecord::new(unique("kept"), Revision::V2025_11_25);
        let left = SessionRecord::new(unique("left"), Revision::V2025_11_25);
        directory.save(&kept).await.expect("save");
        directory.save(&left).await.expect("save");
        let step = idle / 3;
        for _ in 0..5 {
            tokio::time::sleep(step).await;
            assert!(directory.load(&kept.id).await.expect("load").is_some());
        }
        assert_eq!(
            directory.load(&left.id).await.expect("load"),
            None,
            "a record nobody read for longer than the idle time expired"
        );
        directory.remove(&kept.id).await.expect("remove");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_refuse_garbage() {
        for bad in [
            &b""[..],
            b"[]",
            br#"{"id":"x","revision":"2026-07-28","capabilities":{},"initialized":true,"subscriptions":[]}"#,
            br#"{"id":"x","revision":"2025-11-25","capabilities":{},"initialized":true,"subscriptions":[1]}"#,
            br#"{"id":"x","revision":"2025-11-25","capabilities":{},"initialized":true,"subscriptions":[],"logLevel":"loud"}"#,
        ] {
            assert!(SessionRecord::from_json(bad).is_none());
        }
        let good = br#"{"id":"x","revision":"2025-11-25","capabilities":{},"initialized":false,"subscriptions":["a"]}"#;
        assert_eq!(SessionRecord::from_json(good).unwrap().subscriptions, ["a"]);
    }

    #[tokio::test]
    async fn the_memory_directory_keeps_the_contract() {
        let idle = Duration::from_millis(600);
        contract::run(&MemoryDirectory::new(100, idle), idle).await;
    }
}
