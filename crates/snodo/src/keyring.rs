//! The keyring (public at `snodo::server::keyring`, where it is documented).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use crate::error::BackendError;

pub(crate) mod tag;

/// Most keys one keyring holds.
pub const MAX_KEYS: usize = 16;

/// The shortest secret accepted, in bytes.
pub const MIN_SECRET: usize = 32;

/// The longest secret accepted, in bytes.
pub const MAX_SECRET: usize = 1024;

/// The largest keyring file or variable read, in bytes.
pub const MAX_KEYRING_BYTES: usize = 64 * 1024;

/// Why a keyring could not be made or changed; a file that could not be
/// read, or a random source that failed, is its
/// [`source`](std::error::Error::source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyringError(BackendError);

impl KeyringError {
    fn new(message: impl Into<String>) -> Self {
        Self(BackendError::new(message))
    }

    fn caused(
        message: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self(BackendError::with_source(message, e))
    }
}

impl fmt::Display for KeyringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for KeyringError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, KeyringError> {
    Err(KeyringError::new(message))
}

/// Checks a key id: 1 to 32 characters of `[A-Za-z0-9_-]`.
fn check_id(id: &str) -> Result<(), KeyringError> {
    let ok = (1..=32).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        fail(format!(
            "key id {id:?}: key ids are 1 to 32 characters of [A-Za-z0-9_-]"
        ))
    }
}

/// One key.
#[derive(Clone)]
pub(crate) struct Key {
    pub(crate) id: String,
    pub(crate) secret: Vec<u8>,
    /// Its keys for the purposes of [`tag`], keyed once.
    pub(crate) tags: tag::Keyed,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.secret == other.secret
    }
}

impl Eq for Key {}

impl Key {
    pub(crate) fn new(id: impl Into<String>, secret: impl Into<Vec<u8>>) -> Self {
        let secret = secret.into();
        Self {
            id: id.into(),
            tags: tag::Keyed::new(&secret),
            secret,
        }
    }
}

/// The keys at one moment, oldest first; the last seals.
pub(crate) type Keys = Arc<Vec<Key>>;

/// A shared, reloadable set of keys. Clones share the keys: a reload is seen
/// by every clone at once.
#[derive(Clone)]
pub struct Keyring {
    keys: Arc<RwLock<Keys>>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring").field("ids", &self.ids()).finish()
    }
}

fn decode_secret(text: &str) -> Option<Vec<u8>> {
    [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
}

fn validate(keys: &[Key]) -> Result<(), KeyringError> {
    if keys.is_empty() {
        return fail("a keyring needs at least one key");
    }
    if keys.len() > MAX_KEYS {
        return fail(format!("at most {MAX_KEYS} keys"));
    }
    for (i, key) in keys.iter().enumerate() {
        check_id(&key.id)?;
        if key.secret.len() < MIN_SECRET {
            return fail(format!(
                "key {:?}: secrets must be at least {MIN_SECRET} bytes",
                key.id
            ));
        }
        if key.secret.len() > MAX_SECRET {
            return fail(format!(
                "key {:?}: secrets must be at most {MAX_SECRET} bytes",
                key.id
            ));
        }
        if keys[..i].iter().any(|k| k.id == key.id) {
            return fail(format!("key id {:?} appears twice", key.id));
        }
    }
    Ok(())
}

fn parse_keys(text: &str) -> Result<Vec<Key>, KeyringError> {
    if text.len() > MAX_KEYRING_BYTES {
        return fail(format!("a keyring is at most {MAX_KEYRING_BYTES} bytes"));
    }
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((id, secret)) = line.split_once('=') else {
            return fail(format!("line {}: expected KEY_ID=BASE64_SECRET", n + 1));
        };
        let id = id.trim();
        check_id(id).map_err(|e| KeyringError::new(format!("line {}: {e}", n + 1)))?;
        let Some(secret) = decode_secret(secret.trim()) else {
            return fail(format!(
                "line {}: the secret of {id:?} is not base64",
                n + 1
            ));
        };
        keys.push(Key::new(id, secret));
        if keys.len() > MAX_KEYS {
            return fail(format!("at most {MAX_KEYS} keys"));
        }
    }
    validate(&keys)?;
    Ok(keys)
}

fn read_bounded(path: &Path) -> Result<String, KeyringError> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| KeyringError::caused(format!("{}: {e}", path.display()), e))?;
    let mut text = String::new();
    file.take(MAX_KEYRING_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| KeyringError::caused(format!("{}: {e}", path.display()), e))?;
    Ok(text)
}

impl Keyring {
    /// A keyring of one key.
    pub fn single(id: &str, secret: impl AsRef<[u8]>) -> Result<Self, KeyringError> {
        let keys = vec![Key::new(id, secret.as_ref())];
        validate(&keys)?;
        Ok(Self::of(keys))
    }

    /// A keyring of one fresh key named `id`: 32 bytes from the operating
    /// system's random source, for values sealed by a process that need
    /// not open after it ends.
    ///
    /// # Errors
    ///
    /// When `id` is not a valid key id, or when the random source fails
    /// (no key is made then: a guessable secret would seal nothing).
    pub fn generate(id: &str) -> Result<Self, KeyringError> {
        let mut secret = [0u8; 32];
        crate::random::fill(&mut secret).map_err(|e| KeyringError::caused(e.to_string(), e))?;
        Self::single(id, secret)
    }

    fn of(keys: Vec<Key>) -> Self {
        Self {
            keys: Arc::new(RwLock::new(Arc::new(keys))),
        }
    }

    /// A keyring from `KEY_ID=BASE64_SECRET` lines (the last seals).
    pub fn parse(text: &str) -> Result<Self, KeyringError> {
        parse_keys(text).map(Self::of)
    }

    /// A keyring from a file of `KEY_ID=BASE64_SECRET` lines.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, KeyringError> {
        let path = path.as_ref();
        Self::parse(&read_bounded(path)?)
            .map_err(|e| KeyringError::caused(format!("{}: {e}", path.display()), e))
    }

    /// A keyring from an environment variable holding the same lines
    /// (newlines or `;` between keys).
    pub fn from_env(var: &str) -> Result<Self, KeyringError> {
        Self::from_lookup(var, |name| std::env::var(name).ok())
    }

    /// [`Keyring::from_env`] with the variable read by `lookup`.
    fn from_lookup(
        var: &str,
        lookup: impl FnOnce(&str) -> Option<String>,
    ) -> Result<Self, KeyringError> {
        let text = lookup(var).ok_or_else(|| KeyringError::new(format!("${var} is not set")))?;
        Self::parse(&text.replace(';', "\n")).map_err(|e| KeyringError::new(format!("${var}: {e}")))
    }

    /// The keys now.
    pub(crate) fn snapshot(&self) -> Keys {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn replace(&self, keys: Vec<Key>) {
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(keys);
    }

    /// Replaces the keys with those of `text`; on an error the keys stay as
    /// they were.
    pub fn reload(&self, text: &str) -> Result<(), KeyringError> {
        self.replace(parse_keys(text)?);
        Ok(())
    }

    /// Replaces the keys with those of the file; on an error the keys stay
    /// as they were.
    pub fn reload_file(&self, path: impl AsRef<Path>) -> Result<(), KeyringError> {
        let path = path.as_ref();
        let text = read_bounded(path)?;
        self.reload(&text)
            .map_err(|e| KeyringError::caused(format!("{}: {e}", path.display()), e))
    }

    /// Adds a key that opens but does not seal (it goes first).
    pub fn add_opening(&self, id: &str, secret: impl AsRef<[u8]>) -> Result<(), KeyringError> {
        let mut keys: Vec<Key> = (*self.snapshot()).clone();
        keys.insert(0, Key::new(id, secret.as_ref()));
        validate(&keys)?;
        self.replace(keys);
        Ok(())
    }

    /// Reloads the file whenever its contents change, checking every
    /// `every` (a runtime must be running). A file that does not parse is
    /// reported on stderr and the keys stay as they were. The task ends
    /// when every clone of the keyring is dropped.
    pub fn watch_file(&self, path: impl Into<PathBuf>, every: Duration) {
        let path = path.into();
        let weak = Arc::downgrade(&self.keys);
        tokio::spawn(async move {
            let stamp = |p: &Path| {
                std::fs::metadata(p)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH)
            };
            let mut seen = (stamp(&path), read_bounded(&path).ok());
            loop {
                tokio::time::sleep(every).await;
                let Some(keys) = weak.upgrade() else { return };
                let ring = Keyring { keys };
                let now = (stamp(&path), read_bounded(&path).ok());
                if now == seen {
                    continue;
                }
                if let Some(text) = &now.1
                    && let Err(e) = ring.reload(text)
                {
                    tracing::error!(
                        target: "snodo::keyring",
                        path = %path.display(),
                        "keyring not reloaded (the keys held stay): {e}"
                    );
                }
                seen = now;
            }
        });
    }

    /// The id of the key that seals.
    pub fn sealing_id(&self) -> String {
        self.snapshot()
            .last()
            .map(|k| k.id.clone())
            .unwrap_or_default()
    }

    /// Every key id, oldest first (the last seals).
    pub fn ids(&self) -> Vec<String> {
        self.snapshot().iter().map(|k| k.id.clone()).collect()
    }

    /// A new random secret (32 bytes from the operating system), as the
    /// base64 a keyring line holds.
    ///
    /// # Errors
    ///
    /// [`RandomUnavailable`](crate::RandomUnavailable) when the operating
    /// system's random source fails: no secret is made then.
    pub fn generate_secret() -> Result<String, crate::RandomUnavailable> {
        let mut bytes = [0u8; 32];
        crate::random::fill(&mut bytes)?;
        Ok(STANDARD.encode(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that cannot be read is named in the message, and the
    /// operating system's error is kept as the source.
    #[test]
    fn an_unreadable_file_keeps_the_io_error() {
        let path = std::env::temp_dir().join("snodo-keyring-that-is-not-there");
        let err = Keyring::from_file(&path).unwrap_err();
        assert!(
            err.to_string().contains("snodo-keyring-that-is-not-there"),
            "{err}"
        );
        let source = std::error::Error::source(&err).expect("the io error");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert!(std::error::Error::source(&Keyring::parse("").unwrap_err()).is_none());
    }

    #[test]
    fn a_secret_is_generated_only_from_the_random_source() {
        let (a, b) = (
            Keyring::generate_secret().unwrap(),
            Keyring::generate_secret().unwrap(),
        );
        assert_ne!(a, b);
        assert!(Keyring::parse(&format!("k={a}")).is_ok());
        let _off = crate::random::failing();
        let err = Keyring::generate_secret().unwrap_err();
        assert!(err.to_string().contains("random source failed"), "{err}");
    }

    #[test]
    fn a_generated_keyring_holds_one_fresh_key_or_none_at_all() {
        let (a, b) = (
            Keyring::generate("demo").unwrap(),
            Keyring::generate("demo").unwrap(),
        );
        assert_eq!(a.ids(), ["demo"]);
        let (sa, sb) = (a.snapshot(), b.snapshot());
        assert_ne!(sa[0].secret, sb[0].secret);
        let _off = crate::random::failing();
        let err = Keyring::generate("demo").unwrap_err();
        assert!(err.to_string().contains("random source failed"), "{err}");
    }

    fn line(id: &str, byte: u8) -> String {
        format!("{id}={}\n", STANDARD.encode([byte; 32]))
    }

    #[test]
    fn the_last_line_seals_and_comments_are_skipped() {
        let text = format!("# keys\n\n{}{}", line("a", 1), line("b", 2));
        let ring = Keyring::parse(&text).unwrap();
        assert_eq!(ring.ids(), ["a", "b"]);
        assert_eq!(ring.sealing_id(), "b");
        let url_safe = format!("c={}\n", URL_SAFE_NO_PAD.encode([0xfb; 40]));
        assert_eq!(
            Keyring::parse(&url_safe).unwrap().snapshot()[0].secret,
            [0xfb; 40]
        );
    }

    #[test]
    fn bad_keyrings_are_refused_with_the_line() {
        for (text, needle) in [
            (String::new(), "at least one key"),
            ("no-equals\n".to_string(), "line 1: expected"),
            ("a=!!!\n".to_string(), "not base64"),
            ("a=AAAA\n".to_string(), "at least 32 bytes"),
            (format!("{}{}", line("a", 1), line("a", 2)), "appears twice"),
            (line("bad id", 1), "line 1: key id"),
            (
                (0..17).map(|i| line(&format!("k{i}"), 1)).collect(),
                "at most 16",
            ),
            ("#".repeat(MAX_KEYRING_BYTES + 1), "at most"),
        ] {
            let error = Keyring::parse(&text).unwrap_err().to_string();
            assert!(error.contains(needle), "{error:?} should say {needle:?}");
        }
    }

    #[test]
    fn a_secret_of_1024_bytes_is_taken_and_one_of_1025_is_refused() {
        assert_eq!(MAX_SECRET, 1024);
        let longest = format!("big={}\n", STANDARD.encode([7u8; 1024]));
        let ring = Keyring::parse(&longest).unwrap();
        assert_eq!(ring.snapshot()[0].secret, [7u8; 1024]);
        assert!(Keyring::single("big", [7u8; 1024]).is_ok());

        let over = format!("big={}\n", STANDARD.encode([7u8; 1025]));
        let refusal = r#"key "big": secrets must be at most 1024 bytes"#;
        assert_eq!(Keyring::parse(&over).unwrap_err().to_string(), refusal);
        assert_eq!(
            Keyring::single("big", [7u8; 1025]).unwrap_err().to_string(),
            refusal
        );
    }

    #[test]
    fn a_variable_of_keys_separated_by_semicolons_gives_each_key_and_the_last_seals() {
        let value = format!(
            "old={};new={}",
            STANDARD.encode([1u8; 32]),
            STANDARD.encode([2u8; 32])
        );
        let ring = Keyring::from_lookup("SNODO_KEYS", |name| {
            assert_eq!(name, "SNODO_KEYS");
            Some(value)
        })
        .unwrap();
        assert_eq!(ring.ids(), ["old", "new"]);
        assert_eq!(ring.sealing_id(), "new");
        assert_eq!(ring.snapshot()[1].secret, [2u8; 32]);

        let unset = Keyring::from_lookup("SNODO_KEYS", |_| None).unwrap_err();
        assert_eq!(unset.to_string(), "$SNODO_KEYS is not set");
        let short = Keyring::from_lookup("SNODO_KEYS", |_| Some("a=AAAA".into())).unwrap_err();
        assert_eq!(
            short.to_string(),
            r#"$SNODO_KEYS: key "a": secrets must be at least 32 bytes"#
        );
    }

    #[test]
    fn a_failed_reload_keeps_the_keys_and_clones_see_a_good_one() {
        let ring = Keyring::parse(&line("a", 1)).unwrap();
        let clone = ring.clone();
        assert!(ring.reload("garbage").is_err());
        assert_eq!(clone.ids(), ["a"]);
        ring.reload(&format!("{}{}", line("a", 1), line("b", 2)))
            .unwrap();
        assert_eq!(clone.sealing_id(), "b");
    }
}
