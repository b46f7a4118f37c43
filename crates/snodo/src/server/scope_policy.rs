//! How granted scopes satisfy required ones, and the server's scope
//! settings.

use std::sync::Arc;

/// Whether granted scopes satisfy a required one. The default,
/// [`ExactScopes`], wants the scope itself; a policy of your own can let a
/// broader scope imply narrower ones.
///
/// ```
/// use snodo::server::ScopePolicy;
///
/// /// `files:admin` implies every `files:*` scope.
/// struct FilesAdmin;
/// impl ScopePolicy for FilesAdmin {
///     fn satisfies(&self, granted: &[String], required: &str) -> bool {
///         granted.iter().any(|g| g == required || (g == "files:admin" && required.starts_with("files:")))
///     }
/// }
/// assert!(FilesAdmin.satisfies(&["files:admin".into()], "files:write"));
/// ```
pub trait ScopePolicy: Send + Sync + 'static {
    /// Whether `granted` covers `required`.
    fn satisfies(&self, granted: &[String], required: &str) -> bool;
}

/// A scope is satisfied by itself only.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactScopes;

impl ScopePolicy for ExactScopes {
    fn satisfies(&self, granted: &[String], required: &str) -> bool {
        granted.iter().any(|g| g == required)
    }
}

/// The server's scope settings.
#[derive(Clone)]
pub(crate) struct ScopeRules {
    /// What a request needs when its component declares nothing.
    pub(crate) default: Vec<String>,
    /// Whether lists leave out what the principal's grant does not cover.
    pub(crate) hide: bool,
    pub(crate) policy: Arc<dyn ScopePolicy>,
}

impl Default for ScopeRules {
    fn default() -> Self {
        Self {
            default: Vec::new(),
            hide: false,
            policy: Arc::new(ExactScopes),
        }
    }
}

impl std::fmt::Debug for ScopeRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeRules")
            .field("default", &self.default)
            .field("hide", &self.hide)
            .finish_non_exhaustive()
    }
}
