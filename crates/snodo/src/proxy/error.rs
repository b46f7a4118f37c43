//! The proxy's own errors: a refused configuration, a name clash, or a
//! backend that could not be reached.

use std::fmt;

use crate::client::ClientError;

/// Why a proxy or one of its backends could not be set up.
#[derive(Debug)]
pub struct ProxyError {
    kind: Box<Kind>,
}

#[derive(Debug)]
enum Kind {
    Config(String),
    Backend { id: String, source: ClientError },
}

impl ProxyError {
    pub(crate) fn config(message: impl Into<String>) -> Self {
        ProxyError {
            kind: Box::new(Kind::Config(message.into())),
        }
    }

    pub(crate) fn backend(id: &str, source: ClientError) -> Self {
        ProxyError {
            kind: Box::new(Kind::Backend {
                id: id.to_owned(),
                source,
            }),
        }
    }

    /// The backend's client error, when a backend failed.
    pub fn client_error(&self) -> Option<&ClientError> {
        match &*self.kind {
            Kind::Backend { source, .. } => Some(source),
            Kind::Config(_) => None,
        }
    }
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.kind {
            Kind::Config(m) => f.write_str(m),
            Kind::Backend { id, source } => write!(f, "backend {id:?}: {source}"),
        }
    }
}

impl std::error::Error for ProxyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.kind {
            Kind::Backend { source, .. } => Some(source),
            Kind::Config(_) => None,
        }
    }
}
