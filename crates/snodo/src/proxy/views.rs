//! Virtual servers: a [`View`] of some of a proxy's backends, and of those
//! only the names its patterns match, served by a [`Server`] of its own
//! (its own endpoint, sessions, list changes and access policy) beside the
//! proxy's full set.
//!
//! A view's server holds the same forwarding components as the proxy's
//! (a call through either goes the same way to the backend, under the same
//! limits, counters and audit): each time a backend is listed, withdrawn or
//! removed, each view that takes it is changed alike.

use std::collections::BTreeMap;

use super::forward::{ForwardPrompt, ForwardResource, ForwardTool};
use super::glob::{self, Glob};
use super::listing::Listing;
use crate::Server;
use crate::server::Group;

/// What a virtual server serves of a proxy: the components of some
/// backends and, of each kind, those whose served name (or URI) one of its
/// patterns matches; a kind without patterns is served whole.
///
/// ```
/// use snodo::proxy::{Glob, View};
///
/// let reports = View::new(["reports", "files"])
///     .tools([Glob::new("reports.get_*").unwrap(), Glob::new("files.read").unwrap()]);
/// assert!(reports.takes("files"));
/// assert!(!reports.takes("admin"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    backends: Vec<String>,
    tools: Option<Vec<Glob>>,
    resources: Option<Vec<Glob>>,
    prompts: Option<Vec<Glob>>,
}

impl View {
    /// A view of the backends `ids`, serving all of their components.
    pub fn new<S: Into<String>>(ids: impl IntoIterator<Item = S>) -> Self {
        View {
            backends: ids.into_iter().map(Into::into).collect(),
            ..View::default()
        }
    }

    /// Serves only the tools (by served name) one of `patterns` matches.
    pub fn tools(mut self, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.tools.get_or_insert_with(Vec::new).extend(patterns);
        self
    }

    /// Serves only the resources and templates (by served URI) one of
    /// `patterns` matches.
    pub fn resources(mut self, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.resources.get_or_insert_with(Vec::new).extend(patterns);
        self
    }

    /// Serves only the prompts (by served name) one of `patterns` matches.
    pub fn prompts(mut self, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.prompts.get_or_insert_with(Vec::new).extend(patterns);
        self
    }

    /// Whether it serves backend `id`.
    pub fn takes(&self, id: &str) -> bool {
        self.backends.iter().any(|b| b == id)
    }

    /// The backends it serves, as given.
    pub fn backends(&self) -> &[String] {
        &self.backends
    }

    /// A short account of the view, for summaries.
    pub fn describe(&self) -> String {
        let list = |globs: &Option<Vec<Glob>>| match globs {
            None => "all".to_string(),
            Some(globs) => format!(
                "[{}]",
                globs.iter().map(Glob::as_str).collect::<Vec<_>>().join(" ")
            ),
        };
        format!(
            "backends [{}]; tools {}, resources {}, prompts {}",
            self.backends.join(" "),
            list(&self.tools),
            list(&self.resources),
            list(&self.prompts)
        )
    }
}

fn admits(globs: &Option<Vec<Glob>>, name: &str) -> bool {
    globs.as_ref().is_none_or(|g| glob::any(g, name))
}

/// A view being served: its server and, per backend, what it holds there.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) view: View,
    pub(crate) server: Server,
    pub(crate) groups: BTreeMap<String, Group>,
}

impl Served {
    pub(crate) fn new(view: View, server: Server) -> Self {
        Served {
            view,
            server,
            groups: BTreeMap::new(),
        }
    }

    /// Takes backend `id`'s components out of its server.
    fn clear(&mut self, id: &str) {
        if let Some(old) = self.groups.remove(id) {
            let _ = self.server.replace_group(
                &old,
                Some(Vec::<ForwardTool>::new()),
                Some(Vec::<ForwardResource>::new()),
                Some(Vec::<ForwardPrompt>::new()),
            );
        }
    }

    /// Empties its server.
    pub(crate) fn clear_all(&mut self) {
        let ids: Vec<String> = self.groups.keys().cloned().collect();
        for id in ids {
            self.clear(&id);
        }
    }
}

/// The proxy's views, by name.
pub(crate) type Views = BTreeMap<String, Served>;

/// Puts backend `id`'s new listing in every view that takes it (before the
/// proxy's own server takes the listing).
pub(crate) fn apply(views: &mut Views, id: &str, listing: &Listing) {
    for (name, served) in views.iter_mut() {
        if !served.view.takes(id) {
            continue;
        }
        let view = &served.view;
        let tools = listing.tools.as_ref().map(|tools| {
            tools
                .iter()
                .filter(|t| admits(&view.tools, &t.definition.name))
                .cloned()
                .collect::<Vec<ForwardTool>>()
        });
        let resources = listing.resources.as_ref().map(|resources| {
            resources
                .iter()
                .filter(|r| admits(&view.resources, &r.uri))
                .cloned()
                .collect::<Vec<ForwardResource>>()
        });
        let prompts = listing.prompts.as_ref().map(|prompts| {
            prompts
                .iter()
                .filter(|p| admits(&view.prompts, &p.definition.name))
                .cloned()
                .collect::<Vec<ForwardPrompt>>()
        });
        let old = served.groups.get(id).cloned().unwrap_or_default();
        match served.server.replace_group(&old, tools, resources, prompts) {
            Ok((group, _refused)) => {
                served.groups.insert(id.to_owned(), group);
            }
            Err(e) => {
                tracing::warn!(target: "snodo::proxy", view = %name, backend = %id, "not served: {e}");
            }
        }
    }
}

/// Takes backend `id`'s components out of every view.
pub(crate) fn clear(views: &mut Views, id: &str) {
    for served in views.values_mut() {
        served.clear(id);
    }
}

/// Announces that resource `uri` (as served) of backend `id` changed, on
/// the views that serve it.
pub(crate) fn updated(views: &Views, id: &str, uri: &str) {
    for served in views.values() {
        if served
            .groups
            .get(id)
            .is_some_and(|g| g.resources.iter().any(|r| r == uri))
        {
            served.server.events().resource_updated(uri);
        }
    }
}
