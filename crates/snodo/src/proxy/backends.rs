//! The backends a proxy holds, and keeping each one's components in step
//! with it: listing it, refusing names that clash, withdrawing what it
//! serves while it is down, and following its list changes and resource
//! updates.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::task::AbortHandle;

use super::callers::Callers;
use super::error::ProxyError;
use super::flight::Link;
use super::forward::{ForwardPrompt, ForwardResource, ForwardTool};
use super::guard::Guard;
use super::listing::{self, Kinds, Listing};
use super::relist::Relists;
use super::shaping::Shaping;
use super::stats::Stats;
use super::views::{self, Views};
use crate::Server;
use crate::client::{ListenFilter, Subscription};
use crate::server::Group;

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) server: Server,
    /// `None`: names kept as they are.
    pub(super) separator: Option<String>,
    pub(super) backends: Mutex<BTreeMap<String, Backend>>,
    /// How each backend is served, by id (kept while it comes and goes).
    pub(super) shapings: Mutex<BTreeMap<String, Arc<Shaping>>>,
    /// Each backend's limits, by id (kept while it comes and goes).
    pub(super) guards: Mutex<BTreeMap<String, Arc<Guard>>>,
    /// The backends whose callers each get a server, by id (kept while
    /// they come and go).
    pub(super) per_caller: Mutex<BTreeMap<String, Arc<Callers>>>,
    /// What its forwarded requests counted.
    pub(super) stats: Arc<Stats>,
    /// Grows each time the names served change.
    pub(super) changes: tokio::sync::watch::Sender<u64>,
    /// The virtual servers, by name (locked after `backends` when both are).
    pub(super) views: Arc<Mutex<Views>>,
}

pub(super) struct Backend {
    pub(super) link: Arc<Link>,
    pub(super) group: Group,
    /// The kinds waiting to be listed again.
    pub(super) relists: Arc<Relists>,
    /// Its last relist clashed with another backend's names: it is listed
    /// again when those change.
    pub(super) clashing: bool,
    /// The tasks that follow its list changes and list it again.
    pub(super) tasks: Vec<AbortHandle>,
    /// Follows `notifications/resources/updated` of the fixed resources
    /// listed last, and the URIs it follows.
    pub(super) updates: Option<(Vec<String>, AbortHandle)>,
    /// Why its components are withdrawn while it stays added.
    pub(super) withdrawn: Option<String>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("id", &self.link.id)
            .field("group", &self.group)
            .field("withdrawn", &self.withdrawn)
            .finish()
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        if let Some((_, u)) = &self.updates {
            u.abort();
        }
    }
}

/// What one listing of a backend registered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Synced {
    /// Tools registered.
    pub tools: usize,
    /// Resources and resource templates registered.
    pub resources: usize,
    /// Prompts registered.
    pub prompts: usize,
    /// Components the proxy's server refused, each with the reason.
    pub refused: Vec<String>,
}

impl Shared {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Backend>> {
        self.backends.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How backend `id` is served now.
    pub(super) fn shaping(&self, id: &str) -> Arc<Shaping> {
        let shapings = self.shapings.lock().unwrap_or_else(|e| e.into_inner());
        shapings.get(id).cloned().unwrap_or_default()
    }

    /// The names of backend `id` have moved: the backends whose relist
    /// clashed are listed again (the clash may be gone), and
    /// [`Proxy::changes`](super::Proxy::changes) grows.
    pub(super) fn moved(&self, backends: &BTreeMap<String, Backend>, id: &str) {
        for (other, b) in backends {
            if other != id && b.clashing {
                b.relists.ask(Kinds::ALL);
            }
        }
        self.changes.send_modify(|generation| *generation += 1);
    }
}

/// Lists `kinds` of a backend and replaces its components of those kinds
/// (every kind, when its components were withdrawn).
pub(super) async fn sync(
    shared: &Shared,
    link: &Arc<Link>,
    kinds: Kinds,
) -> Result<Synced, ProxyError> {
    let withdrawn = shared
        .lock()
        .get(&link.id)
        .is_some_and(|b| b.withdrawn.is_some());
    let kinds = if withdrawn { Kinds::ALL } else { kinds };
    let listing = listing::list(link, kinds, &shared.shaping(&link.id))
        .await
        .map_err(|e| ProxyError::backend(&link.id, e))?;
    let mut backends = shared.lock();
    let Some(current) = backends
        .get(&link.id)
        .filter(|b| Arc::ptr_eq(&b.link, link))
    else {
        // Removed (or replaced) while it was being listed.
        return Ok(Synced::default());
    };
    if let Err(e) = check_clashes(&backends, &link.id, &listing) {
        if let Some(b) = backends.get_mut(&link.id) {
            b.clashing = true;
        }
        return Err(e);
    }
    let old = current.group.clone();
    views::apply(
        &mut shared.views.lock().unwrap_or_else(|e| e.into_inner()),
        &link.id,
        &listing,
    );
    let followed = listing.followed;
    let (group, refused) = shared
        .server
        .replace_group(&old, listing.tools, listing.resources, listing.prompts)
        .map_err(|e| ProxyError::config(format!("backend {:?}: {e}", link.id)))?;
    let refused: Vec<String> = refused.iter().map(ToString::to_string).collect();
    for r in &refused {
        tracing::warn!(target: "snodo::proxy", backend = %link.id, "component refused: {r}");
    }
    let synced = Synced {
        tools: group.tools.len(),
        resources: group.resources.len(),
        prompts: group.prompts.len(),
        refused,
    };
    if let Some(b) = backends.get_mut(&link.id) {
        let following = b.updates.as_ref().map(|(uris, _)| uris);
        if let Some(followed) = followed
            && following != Some(&followed)
        {
            if let Some((_, task)) = b.updates.take() {
                task.abort();
            }
            if !followed.is_empty() && subscribes(link) {
                let task = follow_updates(
                    shared.server.clone(),
                    shared.views.clone(),
                    link.clone(),
                    followed.clone(),
                );
                b.updates = Some((followed, task));
            }
        }
        let moved = b.group != group;
        b.group = group;
        b.withdrawn = None;
        b.clashing = false;
        if moved {
            shared.moved(&backends, &link.id);
        }
    }
    Ok(synced)
}

/// Withdraws the components of a backend whose listing failed with
/// `error`, keeping it added: a later list change lists it again.
fn withdraw(shared: &Shared, link: &Arc<Link>, error: &ProxyError) {
    let mut backends = shared.lock();
    let Some(b) = backends
        .get_mut(&link.id)
        .filter(|b| Arc::ptr_eq(&b.link, link))
    else {
        return;
    };
    let _ = shared.server.replace_group(
        &b.group,
        Some(Vec::<ForwardTool>::new()),
        Some(Vec::<ForwardResource>::new()),
        Some(Vec::<ForwardPrompt>::new()),
    );
    b.group = Group::default();
    views::clear(
        &mut shared.views.lock().unwrap_or_else(|e| e.into_inner()),
        &link.id,
    );
    if let Some((_, task)) = b.updates.take() {
        task.abort();
    }
    b.withdrawn = Some(error.to_string());
    tracing::warn!(target: "snodo::proxy", backend = %link.id, "its components are withdrawn: {error}");
    shared.moved(&backends, &link.id);
}

/// Refuses a listing whose names another backend already has, naming both.
fn check_clashes(
    backends: &BTreeMap<String, Backend>,
    id: &str,
    listing: &Listing,
) -> Result<(), ProxyError> {
    // Looked up by hash: a backend may list thousands of names.
    let tools: HashSet<&str> = listing
        .tools
        .iter()
        .flatten()
        .map(|t| t.definition.name.as_str())
        .collect();
    let prompts: HashSet<&str> = listing
        .prompts
        .iter()
        .flatten()
        .map(|p| p.definition.name.as_str())
        .collect();
    let resources: HashSet<&str> = listing
        .resources
        .iter()
        .flatten()
        .map(|r| r.uri.as_str())
        .collect();
    for (other, b) in backends.iter().filter(|(other, _)| *other != id) {
        for (kind, listed, theirs) in [
            ("tool", &tools, &b.group.tools),
            ("prompt", &prompts, &b.group.prompts),
            ("resource", &resources, &b.group.resources),
        ] {
            if let Some(name) = theirs.iter().find(|n| listed.contains(n.as_str())) {
                return Err(ProxyError::config(format!(
                    "{kind} {name:?} of backend {id:?} clashes with the same {kind} of backend {other:?}"
                )));
            }
        }
    }
    Ok(())
}

/// Whether the backend offers resource subscriptions.
fn subscribes(link: &Link) -> bool {
    link.client.server_capabilities()["resources"]["subscribe"] == Value::Bool(true)
}

/// Follows `notifications/resources/updated` of `uris` at the backend and
/// announces each under the proxy's URI (to `subscriptions/listen` streams
/// and initialize-era subscribers alike), on the views that serve it too.
fn follow_updates(
    server: Server,
    views: Arc<Mutex<Views>>,
    link: Arc<Link>,
    uris: Vec<String>,
) -> AbortHandle {
    tokio::spawn(async move {
        let filter = uris
            .iter()
            .fold(ListenFilter::new(), |f, uri| f.resource(uri.clone()));
        let mut subscription = match link.client.listen(filter).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(target: "snodo::proxy", backend = %link.id, error = %e, "no resource updates from this backend");
                return;
            }
        };
        while let Some(change) = subscription.next().await {
            if change.method != "notifications/resources/updated" {
                continue;
            }
            if let Some(uri) = change.params.get("uri").and_then(Value::as_str) {
                let served = link.naming.uri(uri);
                server.events().resource_updated(&served);
                views::updated(
                    &views.lock().unwrap_or_else(|e| e.into_inner()),
                    &link.id,
                    &served,
                );
            }
        }
    })
    .abort_handle()
}

/// Follows a backend's list changes: each asks for its kind to be listed
/// again.
pub(super) fn follow_changes(
    link: Arc<Link>,
    relists: Arc<Relists>,
    mut subscription: Subscription,
) -> AbortHandle {
    tokio::spawn(async move {
        while let Some(change) = subscription.next().await {
            tracing::debug!(target: "snodo::proxy", backend = %link.id, method = %change.method, "backend list changed");
            relists.ask(Kinds::changed_by(&change.method));
        }
    })
    .abort_handle()
}

/// Stops the callers' servers of a backend that are idle past its
/// setting, until the backend is gone.
pub(super) fn sweep_callers(link: Weak<Link>) -> AbortHandle {
    tokio::spawn(async move {
        loop {
            let Some(strong) = link.upgrade() else {
                return;
            };
            // A new setting is swept by its own measure; without one there
            // is nothing to sweep until it comes. (The task is aborted when
            // the backend goes.)
            let set = strong.callers_set.notified();
            let Some(callers) = strong.callers() else {
                set.await;
                continue;
            };
            callers.sweep();
            let every = (callers.spec().idle_time() / 4)
                .clamp(Duration::from_millis(100), Duration::from_secs(30));
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = set => {}
            }
        }
    })
    .abort_handle()
}

/// Lists a backend again whenever its relists ask, one listing at a time.
/// A listing past the client's listing limits withdraws its components;
/// any other failure keeps the components listed before.
pub(super) fn relist(shared: Weak<Shared>, link: Arc<Link>, relists: Arc<Relists>) -> AbortHandle {
    tokio::spawn(async move {
        loop {
            let kinds = relists.next().await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            match sync(&shared, &link, kinds).await {
                Ok(_) => {}
                Err(e)
                    if e.client_error()
                        .and_then(|c| c.exceeded_limit())
                        .is_some() =>
                {
                    withdraw(&shared, &link, &e);
                }
                Err(e) => {
                    tracing::warn!(target: "snodo::proxy", backend = %link.id, "listing the backend again failed: {e}");
                }
            }
        }
    })
    .abort_handle()
}
