//! The failure of an outside part a store or a directory stands on.

use std::fmt;
use std::sync::Arc;

/// What an outside part (a database, a file, a network peer) failed with:
/// a sentence for people, and the part's own error as its
/// [`source`](std::error::Error::source), kept whole for whoever wants to
/// look deeper (a retry policy, a log with the full chain).
///
/// Two are equal when they say the same: the source is not compared.
///
/// ```
/// use std::error::Error as _;
/// use snodo::error::BackendError;
/// let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
/// let e = BackendError::with_source("PostgreSQL: connecting failed", io);
/// assert_eq!(e.to_string(), "PostgreSQL: connecting failed");
/// assert_eq!(e.source().unwrap().to_string(), "refused");
/// assert_eq!(e, BackendError::new("PostgreSQL: connecting failed"));
/// ```
#[derive(Clone)]
pub struct BackendError {
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl BackendError {
    /// A failure told in words only (nothing underneath it).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// A failure and the part's own error under it.
    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A failure and a boxed error under it.
    pub fn with_boxed_source(
        message: impl Into<String>,
        source: Box<dyn std::error::Error + Send + Sync>,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Arc::from(source)),
        }
    }

    /// The sentence for people.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Debug for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("BackendError");
        d.field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl PartialEq for BackendError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl Eq for BackendError {}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::server::legacy::DirectoryError;
    use crate::task::StoreError;

    fn refused() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused")
    }

    /// The store's and the directory's errors keep the backend's error as
    /// their source, and say the same as before in words.
    #[test]
    fn store_and_directory_errors_keep_the_backend_error() {
        let store = StoreError::Backend(BackendError::with_source("PostgreSQL: gone", refused()));
        assert_eq!(store.to_string(), "the task store failed: PostgreSQL: gone");
        assert_eq!(store.source().unwrap().to_string(), "refused");

        let directory = DirectoryError::with_source("Redis: gone", refused());
        assert_eq!(directory.to_string(), "Redis: gone");
        assert_eq!(directory.source().unwrap().to_string(), "refused");
        assert!(DirectoryError::new("full").source().is_none());
    }
}
