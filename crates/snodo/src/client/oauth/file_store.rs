//! A [`TokenStore`] on disk: one JSON file per issuer in a folder of the
//! user's, readable by the user alone (mode 0600 on Unix), replaced
//! atomically.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::store::{IssuerState, TokenStore};
use crate::protocol::auth::dpop::{DpopError, DpopKey};

/// Keeps each issuer's [`IssuerState`] in `DIR/<hash of the issuer>.json`.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
    skip_tokens: bool,
}

impl FileStore {
    /// A store in `dir` (created on first save, mode 0700 on Unix).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            skip_tokens: false,
        }
    }

    /// The default folder: `$SNODO_CONFIG_DIR/oauth`, else
    /// `$XDG_CONFIG_HOME/snodo/oauth`, else `$HOME/.config/snodo/oauth`
    /// (`%APPDATA%\snodo\oauth` on Windows).
    pub fn default_dir() -> Option<PathBuf> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(d) = var("SNODO_CONFIG_DIR") {
            return Some(d.join("oauth"));
        }
        if cfg!(windows) {
            return var("APPDATA").map(|d| d.join("snodo").join("oauth"));
        }
        var("XDG_CONFIG_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".config")))
            .map(|d| d.join("snodo").join("oauth"))
    }

    /// A view that loads registrations but no tokens (what a fresh login
    /// wants: the next authorization happens, the identity is reused).
    pub fn without_tokens(mut self) -> Self {
        self.skip_tokens = true;
        self
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, issuer: &str) -> PathBuf {
        let hash = Sha256::digest(issuer.as_bytes());
        let name: String = hash[..12].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    /// Every state kept, in no particular order (unreadable files skipped).
    pub fn all(&self) -> Vec<IssuerState> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| fs::read(e.path()).ok())
            .filter_map(|b| serde_json::from_slice(&b).ok())
            .collect()
    }

    /// The DPoP key kept in the folder (`dpop-key.p8`, PKCS#8, mode 0600 on
    /// Unix), made on first use: tokens bound to it stay usable from one
    /// run to the next. A file that holds no key is an error, not replaced.
    pub fn dpop_key(&self) -> std::io::Result<DpopKey> {
        let path = self.dir.join("dpop-key.p8");
        let invalid = |e: DpopError| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        };
        match fs::read(&path) {
            Ok(der) => return DpopKey::from_pkcs8(&der).map_err(invalid),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            Err(_) => {}
        }
        let key = DpopKey::generate().map_err(invalid)?;
        create_private_dir(&self.dir)?;
        // Linked in place only if no key is there yet.
        let written = write_beside(&path, key.to_pkcs8(), |tmp| fs::hard_link(tmp, &path));
        match written {
            Ok(()) => Ok(key),
            // Another run made it first: that one is the key.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                DpopKey::from_pkcs8(&fs::read(&path)?).map_err(invalid)
            }
            Err(e) => Err(e),
        }
    }

    fn write(&self, state: &IssuerState) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        let path = self.path(&state.issuer);
        let bytes = serde_json::to_vec_pretty(state).unwrap_or_default();
        write_beside(&path, &bytes, |tmp| fs::rename(tmp, &path))
    }
}

/// Writes `bytes` whole to a private file beside `path` (mode 0600 on
/// Unix), then puts it in place with `place`: `path` is never seen
/// half-written. The file beside is gone afterwards.
fn write_beside(
    path: &Path,
    bytes: &[u8],
    place: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| place(&tmp));
    let _ = fs::remove_file(&tmp);
    written
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

impl TokenStore for FileStore {
    fn load(&self, issuer: &str) -> Option<IssuerState> {
        let bytes = fs::read(self.path(issuer)).ok()?;
        let mut state: IssuerState = serde_json::from_slice(&bytes).ok()?;
        if state.issuer != issuer {
            return None;
        }
        if self.skip_tokens {
            state.tokens = None;
        }
        Some(state)
    }

    fn save(&self, state: &IssuerState) {
        if let Err(e) = self.write(state) {
            tracing::warn!(
                "snodo: cannot keep the OAuth state of {} in {}: {e}",
                state.issuer,
                self.dir.display()
            );
        }
    }

    fn remove(&self, issuer: &str) {
        let _ = fs::remove_file(self.path(issuer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::{Registration, TokenSet};

    #[test]
    fn states_round_trip_in_private_files() {
        let dir = std::env::temp_dir().join(format!("snodo-file-store-{}", std::process::id()));
        let store = FileStore::new(&dir);
        let mut state = IssuerState::new("http://127.0.0.1:9/tenant");
        state.registration = Some(Registration {
            client_id: "c".into(),
            client_secret: None,
            auth_method: None,
        });
        state.tokens = Some(TokenSet {
            access_token: "t".into(),
            ..TokenSet::default()
        });
        store.save(&state);
        assert_eq!(store.load(&state.issuer), Some(state.clone()));
        assert_eq!(store.load("http://other"), None);
        assert_eq!(store.all(), vec![state.clone()]);
        let fresh = store.clone().without_tokens().load(&state.issuer).unwrap();
        assert!(fresh.tokens.is_none() && fresh.registration.is_some());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let file = store.path(&state.issuer);
            assert_eq!(
                fs::metadata(&file).unwrap().permissions().mode() & 0o777,
                0o600
            );
            assert_eq!(
                fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
                0o700
            );
        }
        store.remove(&state.issuer);
        assert_eq!(store.load(&state.issuer), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_dpop_key_is_made_once_and_kept_private() {
        let dir = std::env::temp_dir().join(format!("snodo-dpop-key-{}", std::process::id()));
        let store = FileStore::new(&dir);
        let key = store.dpop_key().unwrap();
        assert_eq!(store.dpop_key().unwrap().thumbprint(), key.thumbprint());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(dir.join("dpop-key.p8"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A file that is not a key is reported, and left as it was.
        fs::write(dir.join("dpop-key.p8"), b"not a key").unwrap();
        let err = store.dpop_key().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(fs::read(dir.join("dpop-key.p8")).unwrap(), b"not a key");
        let _ = fs::remove_dir_all(&dir);
    }
}
