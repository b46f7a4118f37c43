//! How a backend's names and URIs appear to the proxy's clients: unchanged
//! (one backend, a bridge), or namespaced by the backend's id.
//!
//! Tools and prompts become `<id><separator><name>`; a resource URI
//! `scheme:rest` becomes `<id>+scheme:rest`, so a template keeps its shape
//! (and its literal scheme) and the scheme names the backend. An MCP App's
//! `ui://rest` becomes `ui://<id>/rest` instead (hosts render apps from
//! `ui://` URIs only), in the resource and in the `_meta.ui` of the tools
//! that name it, so that two backends' apps never collide.

use std::borrow::Cow;

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
        /// `ui://<id>/`.
        ui_prefix: String,
    },
}

impl Naming {
    /// Namespaced by `id` with `separator` (both already checked).
    pub(crate) fn prefixed(id: &str, separator: &str) -> Self {
        Naming::Prefixed {
            name_prefix: format!("{id}{separator}"),
            uri_prefix: format!("{id}+"),
            ui_prefix: format!("{}{id}/", crate::apps::SCHEME),
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
            Naming::Prefixed { ui_prefix, .. } if uri.starts_with(crate::apps::SCHEME) => {
                format!("{ui_prefix}{}", &uri[crate::apps::SCHEME.len()..])
            }
            Naming::Prefixed { uri_prefix, .. } => format!("{uri_prefix}{uri}"),
        }
    }

    /// The backend's URI of an outside URI, if it is one of this backend's.
    pub(crate) fn backend_uri<'a>(&self, uri: &'a str) -> Option<Cow<'a, str>> {
        match self {
            Naming::Verbatim => Some(Cow::Borrowed(uri)),
            Naming::Prefixed { ui_prefix, .. } if uri.starts_with(crate::apps::SCHEME) => uri
                .strip_prefix(ui_prefix.as_str())
                .map(|rest| Cow::Owned(format!("{}{rest}", crate::apps::SCHEME))),
            Naming::Prefixed { uri_prefix, .. } => {
                uri.strip_prefix(uri_prefix.as_str()).map(Cow::Borrowed)
            }
        }
    }

    /// A backend tool's `_meta` with the app it names (`ui.resourceUri`,
    /// and the deprecated flat key) as the proxy's clients see it.
    pub(crate) fn tool_meta(&self, meta: &mut serde_json::Value) {
        if matches!(self, Naming::Verbatim) {
            return;
        }
        let rename = |v: &mut serde_json::Value| {
            if let Some(uri) = v.as_str() {
                *v = self.uri(uri).into();
            }
        };
        if let Some(uri) = meta.get_mut("ui").and_then(|ui| ui.get_mut("resourceUri")) {
            rename(uri);
        }
        if let Some(uri) = meta.get_mut(crate::apps::LEGACY_URI_KEY) {
            rename(uri);
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
        assert_eq!(
            n.backend_uri("fs+file:///a.txt").as_deref(),
            Some("file:///a.txt")
        );
        assert_eq!(n.backend_uri("db+file:///a.txt"), None);
        // An app keeps its scheme; the backend is the first segment.
        assert_eq!(n.uri("ui://dice/app.html"), "ui://fs/dice/app.html");
        assert_eq!(
            n.backend_uri("ui://fs/dice/app.html").as_deref(),
            Some("ui://dice/app.html")
        );
        assert_eq!(n.backend_uri("ui://db/dice/app.html"), None);
        let mut meta = serde_json::json!({"ui": {"resourceUri": "ui://a.html"}, "ui/resourceUri": "ui://a.html", "k": 1});
        n.tool_meta(&mut meta);
        assert_eq!(
            meta,
            serde_json::json!({"ui": {"resourceUri": "ui://fs/a.html"}, "ui/resourceUri": "ui://fs/a.html", "k": 1})
        );
        assert_eq!(Naming::Verbatim.name("read"), "read");
        assert_eq!(Naming::Verbatim.backend_uri("x:y").as_deref(), Some("x:y"));
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
