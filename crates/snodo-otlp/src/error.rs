//! Why export could not be set up.

use std::fmt;

use snodo::error::BackendError;

/// Why export could not be set up: a setting the exporter cannot honour
/// (named in the message), or the export thread or the subscriber not
/// starting (that error kept as the [`source`](std::error::Error::source)).
#[derive(Debug)]
pub struct ExportError(BackendError);

impl ExportError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(BackendError::new(message))
    }

    pub(crate) fn caused(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self(BackendError::with_source(message, source))
    }
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenTelemetry export: {}", self.0)
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}
