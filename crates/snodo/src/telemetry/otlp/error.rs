//! Why export could not be set up.

use std::fmt;

/// Why export could not be set up: a setting the exporter cannot honour
/// (named in the message), or the export thread not starting.
#[derive(Debug)]
pub struct ExportError(pub(super) String);

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenTelemetry export: {}", self.0)
    }
}

impl std::error::Error for ExportError {}
