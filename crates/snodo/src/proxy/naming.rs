//! How a backend's names and URIs appear to the proxy's clients: unchanged
//! (one backend, a bridge), or namespaced by the backend's id.
//!
//! Tools and prompts become `<id><separator><name>`; a resource URI
//! `scheme:rest` becomes `<id>+scheme:rest`, so a template keeps its shape
//! (and its literal scheme) and the scheme names the backend.

use super::ProxyError;

/// The separator of namespaced names unless one is configured.
pub const DEFAULT_SEPARATOR: &str = ".";

/// The longest backend id.
const MAX_ID: usize = 32;

/// A backend's names as the proxy's clients see them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Naming {
    /// Names and URIs unchanged.
    Verbatim,
    /// `<id><separator><name>` and `<id>+<uri>`.
    Prefixed {
        /// `<id><separator>`.
        name_prefix: String,
        /// `<id>+`.
        uri_prefix: String,
    },
}

impl Naming {
    /// Namespaced by `id` with `separator` (both already checked).
    pub(crate) fn prefixed(id: &str, separator: &str) -> Self {
        Naming::Prefixed {
            name_prefix: format!("{id}{separator}"),
            uri_prefix: format!("{id}+"),
        }
    }

    /// The outside name of a backend's tool or prompt.
    pub(crate) fn name(&self, name: &str) -> String {
        match self {
            Naming::Verbatim => name.to_owned(),
            Naming::Prefixed { name_prefix, .. } => format!("{name_prefix}{name}"),
        }
    }

    /// The outside URI (or URI template) of a backend's resource.
    pub(crate) fn uri(&self, uri: &str) -> String {
        match self {
            Naming::Verbatim => uri.to_owned(),
            Naming::Prefixed { uri_prefix, .. } => format!("{uri_prefix}{uri}"),
        }
    }

    /// The backend's URI of an outside URI, if it is one of this backend's.
    pub(crate) fn backend_uri<'a>(&self, uri: &'a str) -> Option<&'a str> {
        match self {
            Naming::Verbatim => Some(uri),
            Naming::Prefixed { uri_prefix, .. } => uri.strip_prefix(uri_prefix.as_str()),
        }
    }
}

/// Checks a backend id: 1 to 32 characters of `[a-z0-9-]`, starting with
/// a letter (it becomes part of a URI scheme and of tool names).
pub fn check_id(id: &str) -> Result<(), ProxyError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ProxyError::config(format!(
            "backend id {id:?}: use 1 to {MAX_ID} characters of a-z, 0-9 and '-', starting with a letter"
        )))
    }
}

/// Checks a separator: 1 to 4 characters allowed in a tool name
/// (`_`, `.`, `-`, or letters and digits are refused: they would blur the
/// boundary between id and name).
pub fn check_separator(separator: &str) -> Result<(), ProxyError> {
    let ok = !separator.is_empty()
        && separator.len() <= 4
        && separator.chars().all(|c| matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(ProxyError::config(format!(
            "separator {separator:?}: use 1 to 4 of the characters '.', '_' and '-'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_and_uris_round_trip() {
        let n = Naming::prefixed("fs", ".");
        assert_eq!(n.name("read"), "fs.read");
        assert_eq!(n.uri("file:///{path}"), "fs+file:///{path}");
        assert_eq!(n.backend_uri("fs+file:///a.txt"), Some("file:///a.txt"));
        assert_eq!(n.backend_uri("db+file:///a.txt"), None);
        assert_eq!(Naming::Verbatim.name("read"), "read");
        assert_eq!(Naming::Verbatim.backend_uri("x:y"), Some("x:y"));
    }

    #[test]
    fn ids_and_separators_are_checked() {
        for ok in ["a", "demo", "fs-2", &"a".repeat(32)] {
            assert!(check_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1a", "Demo", "a_b", "a.b", "a+b", &"a".repeat(33)] {
            let e = check_id(bad).unwrap_err().to_string();
            assert!(e.contains("backend id"), "{bad}: {e}");
        }
        for ok in [".", "__", "-", "._."] {
            assert!(check_separator(ok).is_ok(), "{ok}");
        }
        for bad in ["", "/", "a", ".....", " "] {
            assert!(check_separator(bad).is_err(), "{bad}");
        }
    }
}
