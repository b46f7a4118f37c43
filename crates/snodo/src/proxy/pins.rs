//! Pinned definitions: the first definition seen of each tool, prompt and
//! resource template is recorded as a hash; a later, different one is
//! withdrawn until an operator approves it. Kept in memory or in a JSON
//! file that a running proxy and an approving command share.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::ProxyError;

/// The largest pin file read.
pub const MAX_PIN_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most definitions one store pins; past it a new definition is
/// withdrawn, not pinned.
pub const MAX_PINS: usize = 65_536;
/// How long a writer waits for another's lock on the pin file before it
/// takes a lock older than that as abandoned.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Where pinned definitions are kept: in memory, or in a file
/// ([`PinStore::open`]). Cheap to clone; clones share the pins. Set on a
/// backend with [`Shaping::pin`](super::Shaping::pin).
#[derive(Clone)]
pub struct PinStore {
    inner: Arc<Mutex<State>>,
}

impl std::fmt::Debug for PinStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("PinStore")
            .field("path", &state.path)
            .field("pins", &state.pins.len())
            .finish()
    }
}

impl PartialEq for PinStore {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

#[derive(Debug, Default)]
struct State {
    path: Option<PathBuf>,
    pins: BTreeMap<String, Pin>,
    /// The file's modification time and length when last read or written.
    seen: Option<Stamp>,
    /// The cap was reached and said so.
    full_warned: bool,
}

/// One pinned definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pin {
    /// The hash approved (the first seen, or the last approved).
    hash: String,
    /// A different hash seen since, withdrawn until approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<String>,
}

/// The file's form.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    #[serde(default)]
    pins: BTreeMap<String, Pin>,
}

/// A definition whose change waits for approval.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingChange {
    /// `tool:<name>`, `prompt:<name>` or `template:<uri template>`, under
    /// the names the proxy serves.
    pub key: String,
    /// The hash approved.
    pub pinned: String,
    /// The hash seen since.
    pub seen: String,
}

impl PinStore {
    /// Pins kept in memory only.
    pub fn memory() -> Self {
        PinStore {
            inner: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Pins kept in the JSON file at `path` (created on the first pin; a
    /// file that is not there is an empty store). A file that cannot be
    /// read, is larger than [`MAX_PIN_FILE_BYTES`] or is not a pin file is
    /// an error naming it.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, ProxyError> {
        let path = path.into();
        let (pins, seen) = read(&path)?;
        Ok(PinStore {
            inner: Arc::new(Mutex::new(State {
                path: Some(path),
                pins,
                seen,
                full_warned: false,
            })),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the file again if it changed on disk since it was last read or
    /// written (an approval made by another process) and takes in its new
    /// pins and its approvals; what is held here and not written yet is
    /// kept, and no pin is dropped by a reload. Returns whether the pins
    /// changed.
    pub fn reload(&self) -> Result<bool, ProxyError> {
        let Some(path) = self.lock().path.clone() else {
            return Ok(false);
        };
        if stamp(&path) == self.lock().seen {
            return Ok(false);
        }
        let (disk, seen) = read(&path)?;
        let mut state = self.lock();
        state.seen = seen;
        let before = state.pins.clone();
        merge(&mut state.pins, disk);
        Ok(state.pins != before)
    }

    /// The changes waiting for approval.
    pub fn pending(&self) -> Vec<PendingChange> {
        self.lock()
            .pins
            .iter()
            .filter_map(|(key, pin)| {
                Some(PendingChange {
                    key: key.clone(),
                    pinned: pin.hash.clone(),
                    seen: pin.pending.clone()?,
                })
            })
            .collect()
    }

    /// Approves the pending changes of `names` (a key, or a name or URI
    /// template of any kind), or all of them when `names` is empty; returns
    /// the keys approved. A name with no pending change is an error, and
    /// then nothing is approved.
    pub fn approve(&self, names: &[&str]) -> Result<Vec<String>, ProxyError> {
        let matches = |key: &str, name: &str| {
            key == name || key.split_once(':').is_some_and(|(_, n)| n == name)
        };
        self.sync_file(|pins| {
            for name in names {
                let waiting = pins
                    .iter()
                    .any(|(k, p)| p.pending.is_some() && matches(k, name));
                if !waiting {
                    return Err(ProxyError::config(format!(
                        "{name:?}: no change waits for approval under that name"
                    )));
                }
            }
            let mut approved = Vec::new();
            for (key, pin) in pins.iter_mut() {
                if (names.is_empty() || names.iter().any(|n| matches(key, n)))
                    && let Some(seen) = pin.pending.take()
                {
                    pin.hash = seen;
                    approved.push(key.clone());
                }
            }
            Ok(approved)
        })?
    }

    /// Looks up each `(key, hash)` of a listing: a key not seen before is
    /// pinned to its hash; one whose hash differs from its pin is recorded
    /// as pending (logged with both hashes) and returned, to be withdrawn,
    /// with how many of them are newly so. The file is written once, when
    /// something changed.
    pub(crate) fn check(&self, listed: &[(String, String)]) -> (Vec<String>, usize) {
        let mut state = self.lock();
        let mut changed = false;
        let mut withdrawn = Vec::new();
        let mut new = 0;
        for (key, hash) in listed {
            let full = state.pins.len() >= MAX_PINS;
            match state.pins.get_mut(key) {
                None if full => {
                    // Not pinned, so not served: a backend that keeps
                    // inventing names cannot grow the store without bound.
                    if !state.full_warned {
                        tracing::warn!(target: "snodo::proxy", "{MAX_PINS} definitions are pinned: new ones are withdrawn");
                        state.full_warned = true;
                    }
                    withdrawn.push(key.clone());
                }
                None => {
                    state.pins.insert(
                        key.clone(),
                        Pin {
                            hash: hash.clone(),
                            pending: None,
                        },
                    );
                    changed = true;
                }
                Some(pin) if pin.hash == *hash => {
                    if pin.pending.take().is_some() {
                        changed = true;
                    }
                }
                Some(pin) => {
                    if pin.pending.as_ref() != Some(hash) {
                        tracing::warn!(
                            target: "snodo::proxy",
                            "{key} changed: pinned {}, now {hash}; withdrawn until approved",
                            pin.hash
                        );
                        pin.pending = Some(hash.clone());
                        changed = true;
                        new += 1;
                    }
                    withdrawn.push(key.clone());
                }
            }
        }
        drop(state);
        if changed {
            self.flush();
        }
        (withdrawn, new)
    }

    /// Writes the pins to the file, off the runtime's threads when there
    /// is a runtime.
    fn flush(&self) {
        let store = self.clone();
        let write = move || {
            if let Err(e) = store.sync_file(|_| ()) {
                tracing::warn!(target: "snodo::proxy", "the pins could not be saved: {e}");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => drop(handle.spawn_blocking(write)),
            Err(_) => write(),
        }
    }

    /// Under the file's lock: reads what is on disk and merges it in (its
    /// pins of keys not held here, and its approvals: a pin that equals the
    /// pending hash held here), applies `change`, and writes the result.
    /// The store's own lock is held only while memory changes, never
    /// during file work. Without a file, only `change` runs.
    fn sync_file<R>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, Pin>) -> R,
    ) -> Result<R, ProxyError> {
        let Some(path) = self.lock().path.clone() else {
            return Ok(change(&mut self.lock().pins));
        };
        let fail = |m: String| ProxyError::config(format!("{}: {m}", path.display()));
        let _lock = Lock::take(&path).map_err(|e| fail(e.to_string()))?;
        let (disk, _) = read(&path)?;
        let (out, pins) = {
            let mut state = self.lock();
            merge(&mut state.pins, disk);
            let out = change(&mut state.pins);
            (out, state.pins.clone())
        };
        let mut text = serde_json::to_string_pretty(&File { version: 1, pins })
            .map_err(|e| fail(e.to_string()))?;
        text.push('\n');
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).map_err(|e| fail(e.to_string()))?;
        std::fs::rename(&tmp, &path).map_err(|e| fail(e.to_string()))?;
        self.lock().seen = stamp(&path);
        Ok(out)
    }
}

/// Merges pins read from the file into those held: the file's pins of
/// keys not held here are taken, and so are its approvals (a pin that
/// equals the pending hash held here); what is held here otherwise stays
/// (a pin or a pending change not written yet).
fn merge(ours: &mut BTreeMap<String, Pin>, disk: BTreeMap<String, Pin>) {
    for (key, theirs) in disk {
        match ours.get_mut(&key) {
            None => {
                ours.insert(key, theirs);
            }
            Some(pin) if pin.pending.as_ref() == Some(&theirs.hash) => *pin = theirs,
            Some(_) => {}
        }
    }
}

/// A file's modification time and length.
type Stamp = (SystemTime, u64);

/// The file's modification time and length, if it is there.
fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Reads a pin file; one that is not there is empty.
fn read(path: &Path) -> Result<(BTreeMap<String, Pin>, Option<Stamp>), ProxyError> {
    let fail = |m: String| ProxyError::config(format!("{}: {m}", path.display()));
    let seen = stamp(path);
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((BTreeMap::new(), None)),
        Err(e) => return Err(fail(e.to_string())),
    };
    let mut text = String::new();
    use std::io::Read as _;
    file.take(MAX_PIN_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(e.to_string()))?;
    if text.len() as u64 > MAX_PIN_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_PIN_FILE_BYTES} bytes")));
    }
    let file: File =
        serde_json::from_str(&text).map_err(|e| fail(format!("not a pin file: {e}")))?;
    if file.version != 1 {
        return Err(fail(format!(
            "pin file version {} (1 is known)",
            file.version
        )));
    }
    Ok((file.pins, seen))
}

/// A lock file beside the pin file, removed when dropped.
struct Lock(PathBuf);

impl Lock {
    fn take(path: &Path) -> std::io::Result<Lock> {
        let mut lock = path.as_os_str().to_owned();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        let since = std::time::Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock)
            {
                Ok(_) => return Ok(Lock(lock)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if since.elapsed() > LOCK_WAIT {
                        // Left by a writer that died: taken over.
                        let _ = std::fs::remove_file(&lock);
                    } else {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The hash of a definition: SHA-256 of its members as canonical JSON
/// (keys sorted, no spaces), `sha256:` and 64 hex digits.
pub(crate) fn hash(kind: &str, members: Value) -> String {
    let canonical = crate::wire::canonical(&json!({"kind": kind, "definition": members}));
    let digest = Sha256::digest(canonical.as_bytes());
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for byte in digest {
        use std::fmt::Write as _;
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// The members of a definition that are hashed, leaving out those that
/// are absent.
pub(crate) fn members(pairs: &[(&str, Option<Value>)]) -> Value {
    let map: Map<String, Value> = pairs
        .iter()
        .filter_map(|(k, v)| Some(((*k).to_owned(), v.clone()?)))
        .collect();
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("snodo-pins-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn hashes_ignore_key_order_and_see_every_member() {
        let a = hash(
            "tool",
            json!({"name": "t", "inputSchema": {"a": 1, "b": [1, {"y": 2, "x": 1}]}}),
        );
        let b = hash(
            "tool",
            json!({"inputSchema": {"b": [1, {"x": 1, "y": 2}], "a": 1}, "name": "t"}),
        );
        assert_eq!(a, b);
        assert!(a.starts_with("sha256:") && a.len() == 71);
        assert_ne!(
            a,
            hash(
                "prompt",
                json!({"name": "t", "inputSchema": {"a": 1, "b": [1, {"y": 2, "x": 1}]}})
            )
        );
        assert_ne!(
            a,
            hash(
                "tool",
                json!({"name": "t", "inputSchema": {"a": 2, "b": [1, {"y": 2, "x": 1}]}})
            )
        );
        assert_eq!(
            members(&[("name", Some(json!("t"))), ("description", None)]),
            json!({"name": "t"})
        );
    }

    #[test]
    fn the_first_definition_is_pinned_and_a_change_waits_for_approval() {
        let dir = dir("approve");
        let path = dir.join("proxy.pins.json");
        let store = PinStore::open(&path).unwrap();
        let listed = |h: &str| {
            vec![
                ("tool:a.t".to_string(), h.to_string()),
                ("prompt:a.p".to_string(), "p1".to_string()),
            ]
        };
        let withdrawn = |h: &str| store.check(&listed(h)).0;
        assert!(withdrawn("h1").is_empty());
        assert!(withdrawn("h1").is_empty());
        assert_eq!(
            store.check(&listed("h2")),
            (vec!["tool:a.t".to_string()], 1)
        );
        assert_eq!(
            store.check(&listed("h2")),
            (vec!["tool:a.t".to_string()], 0)
        );
        assert_eq!(
            store.pending(),
            [PendingChange {
                key: "tool:a.t".into(),
                pinned: "h1".into(),
                seen: "h2".into()
            }]
        );
        // Back to the pinned definition: served, nothing pending.
        assert!(withdrawn("h1").is_empty());
        assert!(store.pending().is_empty());
        assert_eq!(withdrawn("h2"), ["tool:a.t"]);

        // Another process approves in the file; the store sees it.
        let other = PinStore::open(&path).unwrap();
        assert!(other.approve(&["a.p"]).is_err());
        assert_eq!(other.approve(&["a.t"]).unwrap(), ["tool:a.t"]);
        assert!(store.reload().unwrap());
        assert!(withdrawn("h2").is_empty());
        assert!(store.pending().is_empty());
        let text = std::fs::read_to_string(&path).unwrap();
        let file: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(file["pins"]["tool:a.t"]["hash"], "h2");
        assert!(!dir.join("proxy.pins.json.lock").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_merge_takes_the_files_approvals_and_new_pins_and_keeps_what_is_held() {
        let pin = |hash: &str, pending: Option<&str>| Pin {
            hash: hash.into(),
            pending: pending.map(Into::into),
        };
        let mut ours = BTreeMap::from([
            ("tool:a".to_string(), pin("h1", Some("h2"))),
            ("tool:b".to_string(), pin("x", None)),
            ("tool:d".to_string(), pin("z1", Some("z2"))),
        ]);
        let disk = BTreeMap::from([
            ("tool:a".to_string(), pin("h2", None)),
            ("tool:c".to_string(), pin("y", None)),
            ("tool:d".to_string(), pin("z1", None)),
        ]);
        merge(&mut ours, disk);
        assert_eq!(ours["tool:a"], pin("h2", None));
        assert_eq!(ours["tool:b"], pin("x", None));
        assert_eq!(ours["tool:c"], pin("y", None));
        assert_eq!(ours["tool:d"], pin("z1", Some("z2")));
    }

    #[test]
    fn a_bad_pin_file_is_refused_naming_it() {
        let dir = dir("bad");
        let path = dir.join("p.json");
        for (text, want) in [
            ("{", "not a pin file"),
            (r#"{"version": 2, "pins": {}}"#, "version 2"),
            (r#"{"version": 1, "pins": {}, "x": 1}"#, "unknown field"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = PinStore::open(&path).unwrap_err().to_string();
            assert!(e.contains("p.json") && e.contains(want), "{text}: {e}");
        }
        assert!(
            PinStore::open(dir.join("absent.json"))
                .unwrap()
                .pending()
                .is_empty()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
