//! Session records as the nodes of a service share them: sealed with the
//! service's keyring, named by a keyed digest of the session id, kept in a
//! [`SessionDirectory`] ([`SessionRecords`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::directory::{Changed, Delta, DirectoryError, Loaded, SessionDirectory, StoredRecord};
use crate::keyring::tag::{self, Purpose};
use crate::keyring::{Key, Keyring};
use crate::protocol::{LogLevel, Revision};

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
    /// Who owns the session: the [`key`](crate::Principal::key) of the principal that opened it
    /// or, for a session several nodes share, its keyed digest.
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
}

/// Where a session's record lives: its key in the directory, and the id of
/// the ring's key that made it (the session's home key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Home {
    pub(crate) key: String,
    pub(crate) kid: String,
}

/// A record read: whole, or its state only (the members are of the
/// generation the reader knows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Opened {
    Whole {
        record: Box<SessionRecord>,
        /// The generation of its members.
        generation: u64,
    },
    Unchanged {
        initialized: bool,
        log_level: Option<LogLevel>,
    },
}

/// How many records were refused in all; the log lines are the limit
/// summaries of [`crate::telemetry::refusals`].
#[derive(Debug, Default)]
struct Refusals {
    total: AtomicU64,
}

impl Refusals {
    fn note(&self) {
        self.total.fetch_add(1, Ordering::Relaxed);
        crate::telemetry::refusals::note(
            "session records",
            &"a session record refused (a part not sealed by a key of the ring, or changed \
              since): treated as absent",
        );
    }
}

/// The records of initialize-era sessions shared by the nodes of a
/// service: sealed with the service's keyring in a [`SessionDirectory`].
/// Cheap to clone; clones share the count of refused records.
///
/// **What is stored.** A record's key is the digest of the session id under
/// a key derived from one key of the ring (HMAC-SHA256, unpadded base64url);
/// the id itself is stored nowhere. Its head (revision, the client's
/// capabilities and `clientInfo`, the owner) and its state (initialized,
/// log level) are JSON, each sealed with the ring's sealing key and bound to
/// the record's key and part; each subscription is a member whose name is
/// its URI and whose value is a stamp binding it to the record. The owner
/// is a keyed digest of the principal's key and the session id: only
/// equality is needed, and two sessions of one principal do not look alike.
///
/// **What is trusted.** Every part of a record read is checked before
/// anything in it is used; a record with a part that does not open (forged,
/// changed, moved from another record, sealed with a key the ring no longer
/// holds) is treated as absent, and counted ([`SessionRecords::refused`],
/// one log line at most every 10 s).
///
/// **Rotation.** A session's record is named by the digest under the key
/// that sealed when the session opened (its *home* key), so that it keeps
/// one name for its life; a node looking up an id tries the sealing key
/// first, then every other key of the ring. Parts written later are sealed
/// with the sealing key of the moment, and open while their key is in the
/// ring. Removing a key from the ring ends the sessions opened while it
/// sealed: their clients get 404 and initialize again.
///
/// ```
/// use snodo::server::keyring::Keyring;
/// use snodo::server::legacy::{MemoryDirectory, SessionRecords};
/// let keys = Keyring::single("k1", [7u8; 32]).unwrap();
/// let dir = MemoryDirectory::new(100, std::time::Duration::from_secs(60));
/// let records = SessionRecords::new(dir, keys);
/// assert_eq!(records.refused(), 0);
/// ```
#[derive(Clone)]
pub struct SessionRecords {
    directory: Arc<dyn SessionDirectory>,
    keys: Keyring,
    refusals: Arc<Refusals>,
}

impl std::fmt::Debug for SessionRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRecords")
            .field("keys", &self.keys)
            .field("refused", &self.refused())
            .finish_non_exhaustive()
    }
}

/// The digest of `id` under `key`: a record's key.
fn session_key(key: &Key, id: &str) -> String {
    tag::tag_text(key, Purpose::SessionKey, &[id.as_bytes()])
}

/// A part's JSON, sealed for the record `key`.
fn seal_part(keys: &[Key], key: &str, part: &str, value: &Value) -> Vec<u8> {
    let json = serde_json::to_vec(value).unwrap_or_default();
    tag::seal(
        keys,
        Purpose::Record,
        &[key.as_bytes(), part.as_bytes()],
        &json,
    )
}

/// A part's JSON, if it opens for the record `key`.
fn open_part(keys: &[Key], key: &str, part: &str, sealed: &[u8]) -> Option<Value> {
    let json = tag::open(
        keys,
        Purpose::Record,
        &[key.as_bytes(), part.as_bytes()],
        sealed,
    )
    .ok()?;
    serde_json::from_slice(json).ok()
}

/// The stamp that makes `uri` a member of the record `key`.
fn member_stamp(keys: &[Key], key: &str, uri: &str) -> Vec<u8> {
    tag::stamp(
        keys,
        Purpose::Record,
        &[key.as_bytes(), b"m", uri.as_bytes()],
    )
    .into_bytes()
}

fn head_value(record: &SessionRecord) -> Value {
    let mut head = Map::new();
    head.insert("r".into(), record.revision.as_str().into());
    head.insert("c".into(), record.client_capabilities.clone());
    if let Some(info) = &record.client_info {
        head.insert("i".into(), info.clone());
    }
    if let Some(owner) = &record.owner {
        head.insert("w".into(), owner.as_str().into());
    }
    Value::Object(head)
}

fn state_value(initialized: bool, log_level: Option<LogLevel>) -> Value {
    let mut state = Map::new();
    state.insert("n".into(), initialized.into());
    if let Some(level) = log_level {
        state.insert("l".into(), level.as_str().into());
    }
    Value::Object(state)
}

/// The state (initialized, log level) sealed in `sealed` for the record
/// `key`, if it opens.
fn open_state(keys: &[Key], key: &str, sealed: &[u8]) -> Option<(bool, Option<LogLevel>)> {
    let state = open_part(keys, key, "s", sealed)?;
    let log_level = match state.get("l") {
        None => None,
        Some(level) => Some(LogLevel::parse(level.as_str()?)?),
    };
    Some((state.get("n")?.as_bool()?, log_level))
}

/// The record of `id` that `stored` holds under `key`, if every part of it
/// opens.
fn open_record(keys: &[Key], key: &str, id: &str, stored: &StoredRecord) -> Option<SessionRecord> {
    let head = open_part(keys, key, "h", &stored.head)?;
    let (initialized, log_level) = open_state(keys, key, &stored.state)?;
    let revision = Revision::parse(head.get("r")?.as_str()?).filter(|r| r.is_legacy())?;
    let owner = match head.get("w") {
        None => None,
        Some(owner) => Some(owner.as_str()?.to_string()),
    };
    let mut subscriptions = Vec::with_capacity(stored.members.len());
    for (uri, stamp) in &stored.members {
        let stamp = std::str::from_utf8(stamp).ok()?;
        tag::check(
            keys,
            Purpose::Record,
            stamp,
            &[key.as_bytes(), b"m", uri.as_bytes()],
        )
        .ok()?;
        subscriptions.push(uri.clone());
    }
    subscriptions.sort();
    Some(SessionRecord {
        id: id.to_string(),
        revision,
        client_capabilities: head.get("c")?.clone(),
        client_info: head.get("i").cloned(),
        owner,
        initialized,
        log_level,
        subscriptions,
    })
}

/// The JSON of a part of the record of the session `id`, sealed with the
/// sealing key of `keys` (the fuzz targets' way in).
#[cfg(feature = "fuzzing")]
pub(crate) fn seal_record_part(keys: &[Key], id: &str, part: &str, json: &[u8]) -> Vec<u8> {
    let key = session_key(keys.last().expect("a key"), id);
    tag::seal(
        keys,
        Purpose::Record,
        &[key.as_bytes(), part.as_bytes()],
        json,
    )
}

/// The stamp that makes `uri` a member of the record of the session `id`.
#[cfg(feature = "fuzzing")]
pub(crate) fn seal_record_member(keys: &[Key], id: &str, uri: &str) -> Vec<u8> {
    let key = session_key(keys.last().expect("a key"), id);
    member_stamp(keys, &key, uri)
}

/// The record of the session `id` stored as `head`, `state` and `members`
/// under its name with the sealing key of `keys`, if every part opens.
#[cfg(feature = "fuzzing")]
pub(crate) fn open_stored_record(
    keys: &[Key],
    id: &str,
    head: &[u8],
    state: &[u8],
    members: &[(String, Vec<u8>)],
) -> Option<SessionRecord> {
    let key = session_key(keys.last().expect("a key"), id);
    let stored = StoredRecord::new(head.to_vec(), state.to_vec(), members.to_vec(), 0);
    open_record(keys, &key, id, &stored)
}

impl SessionRecords {
    /// The records in `directory`, sealed and opened with `keys` (the
    /// keyring every node of the service shares; a reload is seen at once).
    pub fn new(directory: impl SessionDirectory, keys: Keyring) -> Self {
        Self {
            directory: Arc::new(directory),
            keys,
            refusals: Arc::default(),
        }
    }

    /// How many records read from the directory were refused: a part did
    /// not open (forged, changed, moved from another record, or sealed with
    /// a key the ring no longer holds), so the session was treated as
    /// absent.
    pub fn refused(&self) -> u64 {
        self.refusals.total.load(Ordering::Relaxed)
    }

    /// Where a session opening now keeps its record: under the sealing key.
    pub(crate) fn home_for_new(&self, id: &str) -> Home {
        let keys = self.keys.snapshot();
        let key = keys.last().expect("a keyring holds a key");
        Home {
            key: session_key(key, id),
            kid: key.id.clone(),
        }
    }

    /// The keyed digest of `subject` as the owner of the session `id`
    /// homed at `home`; `None` once the home key left the ring.
    pub(crate) fn owner_tag(&self, home: &Home, id: &str, subject: &str) -> Option<String> {
        let keys = self.keys.snapshot();
        let key = keys.iter().find(|k| k.id == home.kid)?;
        Some(tag::tag_text(
            key,
            Purpose::Owner,
            &[id.as_bytes(), subject.as_bytes()],
        ))
    }

    /// Stores the record of a session that just opened (with its
    /// subscriptions, if it has any).
    pub(crate) async fn create(
        &self,
        home: &Home,
        record: &SessionRecord,
    ) -> Result<Changed, DirectoryError> {
        let keys = self.keys.snapshot();
        let head = seal_part(&keys, &home.key, "h", &head_value(record));
        let state = seal_part(
            &keys,
            &home.key,
            "s",
            &state_value(record.initialized, record.log_level),
        );
        let mut changed = self.directory.create(&home.key, &head, &state).await?;
        for uri in &record.subscriptions {
            if let Changed::Done(_) = changed {
                changed = self.subscribe(home, uri).await?;
            }
        }
        Ok(changed)
    }

    /// Finds the record of `id` under every key of the ring, the sealing key
    /// first; with the generation of its members.
    pub(crate) async fn find(
        &self,
        id: &str,
    ) -> Result<Option<(Home, SessionRecord, u64)>, DirectoryError> {
        let keys = self.keys.snapshot();
        for key in keys.iter().rev() {
            let home = Home {
                key: session_key(key, id),
                kid: key.id.clone(),
            };
            if let Some(loaded) = self.directory.load(&home.key, None).await? {
                return Ok(match self.open(&home, id, loaded) {
                    Some(Opened::Whole { record, generation }) => Some((home, *record, generation)),
                    _ => None,
                });
            }
        }
        Ok(None)
    }

    /// The record of `id` at `home`, if it is there and opens: its state
    /// only when its members are of the generation `known`.
    pub(crate) async fn load(
        &self,
        home: &Home,
        id: &str,
        known: Option<u64>,
    ) -> Result<Option<Opened>, DirectoryError> {
        Ok(match self.directory.load(&home.key, known).await? {
            Some(loaded) => self.open(home, id, loaded),
            None => None,
        })
    }

    fn open(&self, home: &Home, id: &str, loaded: Loaded) -> Option<Opened> {
        let keys = self.keys.snapshot();
        // The record must be the one of `id`: named by its digest.
        let named = keys
            .iter()
            .find(|k| k.id == home.kid)
            .is_some_and(|key| session_key(key, id) == home.key);
        let opened = named
            .then(|| match loaded {
                Loaded::Whole(stored) => {
                    open_record(&keys, &home.key, id, &stored).map(|record| Opened::Whole {
                        record: Box::new(record),
                        generation: stored.generation,
                    })
                }
                Loaded::Unchanged(state) => {
                    open_state(&keys, &home.key, &state).map(|(initialized, log_level)| {
                        Opened::Unchanged {
                            initialized,
                            log_level,
                        }
                    })
                }
            })
            .flatten();
        if opened.is_none() {
            self.refusals.note();
        }
        opened
    }

    /// Replaces the record's state.
    pub(crate) async fn set_state(
        &self,
        home: &Home,
        initialized: bool,
        log_level: Option<LogLevel>,
    ) -> Result<Changed, DirectoryError> {
        let state = seal_part(
            &self.keys.snapshot(),
            &home.key,
            "s",
            &state_value(initialized, log_level),
        );
        self.directory
            .change(&home.key, Delta::SetState(&state))
            .await
    }

    /// Adds a subscription.
    pub(crate) async fn subscribe(
        &self,
        home: &Home,
        uri: &str,
    ) -> Result<Changed, DirectoryError> {
        let value = member_stamp(&self.keys.snapshot(), &home.key, uri);
        self.directory
            .change(
                &home.key,
                Delta::Add {
                    name: uri,
                    value: &value,
                },
            )
            .await
    }

    /// Removes a subscription.
    pub(crate) async fn unsubscribe(
        &self,
        home: &Home,
        uri: &str,
    ) -> Result<Changed, DirectoryError> {
        self.directory
            .change(&home.key, Delta::Remove { name: uri })
            .await
    }

    /// Removes the record; `true` when there was one.
    pub(crate) async fn remove(&self, home: &Home) -> Result<bool, DirectoryError> {
        self.directory.remove(&home.key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::legacy::MemoryDirectory;
    use std::time::Duration;

    fn records() -> (SessionRecords, Arc<MemoryDirectory>) {
        let dir = Arc::new(MemoryDirectory::new(16, Duration::from_secs(60)));
        let keys = Keyring::single("k1", [7u8; 32]).unwrap();
        (SessionRecords::new(dir.clone(), keys), dir)
    }

    #[tokio::test]
    async fn a_record_opens_only_whole_and_in_its_place() {
        let (records, dir) = records();
        let mut record = SessionRecord::new("s1", Revision::V2025_11_25);
        record.subscriptions = vec!["demo://a".into()];
        let home = records.home_for_new("s1");
        assert_eq!(
            records.create(&home, &record).await.unwrap(),
            Changed::Done(1)
        );
        let whole = Opened::Whole {
            record: Box::new(record.clone()),
            generation: 1,
        };
        assert_eq!(records.load(&home, "s1", None).await.unwrap(), Some(whole));
        let state = Opened::Unchanged {
            initialized: false,
            log_level: None,
        };
        assert_eq!(
            records.load(&home, "s1", Some(1)).await.unwrap(),
            Some(state)
        );
        // Under another id, the same key opens nothing.
        assert_eq!(records.load(&home, "s2", None).await.unwrap(), None);
        assert_eq!(records.refused(), 1);
        // A member nobody sealed.
        dir.change(
            &home.key,
            Delta::Add {
                name: "demo://b",
                value: b"k1.AAAA",
            },
        )
        .await
        .unwrap();
        assert_eq!(records.find("s1").await.unwrap(), None);
        assert_eq!(records.refused(), 2);
        dir.change(&home.key, Delta::Remove { name: "demo://b" })
            .await
            .unwrap();
        assert!(records.find("s1").await.unwrap().is_some());
    }

    #[test]
    fn garbage_never_opens() {
        let keys = Keyring::single("k1", [7u8; 32]).unwrap().snapshot();
        let head = seal_part(&keys, "k", "h", &json!({"r": "2025-11-25", "c": {}}));
        let state = seal_part(&keys, "k", "s", &json!({"n": false}));
        let good = StoredRecord::new(head.clone(), state.clone(), Vec::new(), 0);
        assert!(open_record(&keys, "k", "id", &good).is_some());
        for (head, state) in [
            (head.clone(), head.clone()),
            (state.clone(), state.clone()),
            (Vec::new(), state.clone()),
            (head.clone(), b"k1.x.{}".to_vec()),
            (
                seal_part(&keys, "k", "h", &json!({"r": "2026-07-28", "c": {}})),
                state.clone(),
            ),
            (
                seal_part(&keys, "k", "h", &json!({"r": "2025-11-25"})),
                state.clone(),
            ),
            (head.clone(), seal_part(&keys, "k", "s", &json!({"n": 1}))),
            (
                head.clone(),
                seal_part(&keys, "k", "s", &json!({"n": true, "l": "loud"})),
            ),
            (seal_part(&keys, "k", "h", &json!([])), state.clone()),
        ] {
            let stored = StoredRecord::new(head, state, Vec::new(), 0);
            assert!(open_record(&keys, "k", "id", &stored).is_none());
        }
    }
}
