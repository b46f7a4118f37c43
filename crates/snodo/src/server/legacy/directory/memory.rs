//! The session directory in this process's memory.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{
    Changed, Delta, DirectoryError, Loaded, MAX_RECORD_BYTES, MAX_RECORD_MEMBERS, SessionDirectory,
    StoredRecord,
};
use crate::future::BoxFuture;

/// One record and when it was last used.
#[derive(Debug)]
struct Entry {
    head: Vec<u8>,
    state: Vec<u8>,
    members: BTreeMap<String, Vec<u8>>,
    bytes: usize,
    generation: u64,
    at: Instant,
}

/// A directory in this process's memory, bounded, with idle expiry.
///
/// ```
/// use snodo::server::legacy::{Changed, Delta, Loaded, MemoryDirectory, SessionDirectory};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = MemoryDirectory::new(100, std::time::Duration::from_secs(60));
/// assert_eq!(dir.create("k1", b"head", b"state").await.unwrap(), Changed::Done(0));
/// let added = dir.change("k1", Delta::Add { name: "demo://a", value: b"tag" }).await;
/// assert_eq!(added.unwrap(), Changed::Done(1));
/// let Some(Loaded::Whole(record)) = dir.load("k1", None).await.unwrap() else { panic!() };
/// assert_eq!(record.members.len(), 1);
/// let known = dir.load("k1", Some(1)).await.unwrap();
/// assert_eq!(known, Some(Loaded::Unchanged(b"state".to_vec())));
/// assert!(dir.remove("k1").await.unwrap());
/// assert!(dir.load("k1", None).await.unwrap().is_none());
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryDirectory {
    records: Mutex<HashMap<String, Entry>>,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live entry of `key`, if any (an expired one is dropped).
    fn live<'m>(&self, map: &'m mut HashMap<String, Entry>, key: &str) -> Option<&'m mut Entry> {
        if map.get(key).is_some_and(|e| e.at.elapsed() >= self.idle) {
            map.remove(key);
        }
        map.get_mut(key)
    }
}

impl SessionDirectory for MemoryDirectory {
    fn create<'a>(
        &'a self,
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        Box::pin(async move {
            let bytes = head.len() + state.len();
            if bytes > MAX_RECORD_BYTES {
                return Ok(Changed::TooLarge);
            }
            let mut map = self.lock();
            let idle = self.idle;
            map.retain(|_, e| e.at.elapsed() < idle);
            if map.len() >= self.max && !map.contains_key(key) {
                return Err(DirectoryError::new(format!(
                    "too many sessions (at most {})",
                    self.max
                )));
            }
            let entry = Entry {
                head: head.to_vec(),
                state: state.to_vec(),
                members: BTreeMap::new(),
                bytes,
                generation: 0,
                at: Instant::now(),
            };
            map.insert(key.to_string(), entry);
            Ok(Changed::Done(0))
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a str,
        known: Option<u64>,
    ) -> BoxFuture<'a, Result<Option<Loaded>, DirectoryError>> {
        Box::pin(async move {
            let mut map = self.lock();
            let Some(entry) = self.live(&mut map, key) else {
                return Ok(None);
            };
            entry.at = Instant::now();
            if known == Some(entry.generation) {
                return Ok(Some(Loaded::Unchanged(entry.state.clone())));
            }
            Ok(Some(Loaded::Whole(StoredRecord::new(
                entry.head.clone(),
                entry.state.clone(),
                entry
                    .members
                    .iter()
                    .map(|(n, v)| (n.clone(), v.clone()))
                    .collect(),
                entry.generation,
            ))))
        })
    }

    fn change<'a>(
        &'a self,
        key: &'a str,
        delta: Delta<'a>,
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        Box::pin(async move {
            let mut map = self.lock();
            let Some(entry) = self.live(&mut map, key) else {
                return Ok(Changed::Gone);
            };
            match delta {
                Delta::SetState(state) => {
                    let bytes = entry.bytes - entry.state.len() + state.len();
                    if bytes > MAX_RECORD_BYTES {
                        return Ok(Changed::TooLarge);
                    }
                    entry.state = state.to_vec();
                    entry.bytes = bytes;
                }
                Delta::Add { name, value } => {
                    let old = entry.members.get(name).map(|v| name.len() + v.len());
                    if old.is_none() && entry.members.len() >= MAX_RECORD_MEMBERS {
                        return Ok(Changed::TooManyMembers);
                    }
                    let bytes = entry.bytes - old.unwrap_or(0) + name.len() + value.len();
                    if bytes > MAX_RECORD_BYTES {
                        return Ok(Changed::TooLarge);
                    }
                    entry.members.insert(name.to_string(), value.to_vec());
                    entry.bytes = bytes;
                    entry.generation += 1;
                }
                Delta::Remove { name } => {
                    if let Some(value) = entry.members.remove(name) {
                        entry.bytes -= name.len() + value.len();
                        entry.generation += 1;
                    }
                }
            }
            entry.at = Instant::now();
            Ok(Changed::Done(entry.generation))
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        Box::pin(async move {
            let mut map = self.lock();
            Ok(self.live(&mut map, key).is_some() && map.remove(key).is_some())
        })
    }
}
