//! Why a template was refused.

use std::fmt;

/// Why [`UriTemplate::parse`](super::UriTemplate::parse) refused a template.
///
/// The message names the refused shape, for example
/// `unsupported template expression "{#frag}" (fragment expansion)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    message: String,
}

impl TemplateError {
    pub(super) fn new(message: impl Into<String>) -> Self {
        TemplateError {
            message: message.into(),
        }
    }

    pub(super) fn expression(text: &str, shape: impl fmt::Display) -> Self {
        TemplateError::new(format!(
            "unsupported template expression \"{text}\" ({shape})"
        ))
    }

    pub(super) fn segment(text: &str, shape: &str) -> Self {
        TemplateError::new(format!("unsupported template segment \"{text}\" ({shape})"))
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}
