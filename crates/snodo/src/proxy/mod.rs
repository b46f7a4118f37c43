//! Proxies and bridges: a [`Server`] whose components forward to other MCP
//! servers through [`Client`]s (the `client` feature).
//!
//! A backend is any server a [`Client`] reaches: a child process over
//! stdio, a URL, on any revision the client negotiates. Its tools,
//! prompts, resources and resource templates are registered on the proxy's
//! server as forwarding components, so the proxy serves them on every
//! transport and revision the server serves: a 2025-era host can use a
//! 2026-07-28 backend and the reverse, and several backends appear as one
//! server.
//!
//! What crosses the proxy, both ways:
//!
//! - results as the backend sent them (`isError` results stay results,
//!   `structuredContent` is kept), and JSON-RPC errors with their code,
//!   message and data; a backend that cannot be reached is a `-32603`
//!   error naming it;
//! - progress and log messages the backend sends while a request runs;
//! - cancellation: a cancelled caller cancels the backend's request;
//! - multi round-trip input: a backend's `input_required` answer goes to
//!   the caller (which the server turns into elicitation, sampling or roots
//!   requests for an initialize-era host), and the caller's answers go back;
//!   an initialize-era backend's own elicitation and sampling requests reach
//!   the caller the same way, through a [`Relay`];
//! - completion, routed to the backend that owns the prompt or template;
//! - list changes: when a backend announces one, its components are listed
//!   again and the proxy announces the change to its own listeners; the
//!   updates of its fixed resources (the first [`MAX_FOLLOWED`]) are
//!   announced under the proxy's URIs.
//!
//! Names are kept as they are ([`Proxy::verbatim`], a bridge to one
//! backend) or namespaced by backend id ([`Proxy::namespaced`]): tools and
//! prompts as `<id><separator><name>`, resource URIs and templates under
//! the scheme `<id>+<scheme>`.
//!
//! The proxy's server is any [`Server`]; build it with
//! [`ServerBuilder::declare`](crate::server::ServerBuilder::declare) for
//! each kind of component the backends may bring, so that the capabilities
//! a client learned stay true while backends come and go.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use snodo::client::Client;
//! use snodo::proxy::Proxy;
//!
//! use snodo::server::Capability;
//!
//! let server = snodo::Server::builder("gateway", "1.0.0")
//!     .declare(Capability::Tools)
//!     .declare(Capability::Resources)
//!     .declare(Capability::Prompts)
//!     .build()?;
//! let proxy = Proxy::namespaced(server, ".")?;
//! proxy.connect_backend("files", Client::builder(), "my-files-server --stdio").await?;
//! proxy.add_backend("search", Client::http("http://127.0.0.1:8080/mcp").await?).await?;
//! // `files.read`, `search.query`, ... on every transport:
//! proxy.server().serve_stdio().await?;
//! # Ok(()) }
//! ```

mod convert;
mod error;
mod forward;
mod naming;
mod relay;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

pub use self::error::ProxyError;
use self::forward::{ForwardPrompt, ForwardResource, ForwardTool, Link};
use self::naming::Naming;
pub use self::naming::{DEFAULT_SEPARATOR, check_id, check_separator};
pub use self::relay::{MAX_PARKED, PARKED_TTL, QUEUE, Relay};
use crate::Server;
use crate::client::{Client, ClientBuilder, ClientError, ListenFilter, Subscription, Target};
use crate::server::{Capability, Group};

/// The most backends one proxy holds.
pub const MAX_BACKENDS: usize = 64;

/// A server whose components forward to backends. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Proxy {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    server: Server,
    /// `None`: names kept as they are.
    separator: Option<String>,
    backends: Mutex<BTreeMap<String, Backend>>,
}

struct Backend {
    link: Arc<Link>,
    group: Group,
    watcher: Option<tokio::task::AbortHandle>,
    /// Follows `notifications/resources/updated` of the fixed resources
    /// listed last, and the URIs it follows.
    updates: Option<(Vec<String>, tokio::task::AbortHandle)>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("id", &self.link.id)
            .field("group", &self.group)
            .finish()
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(w) = &self.watcher {
            w.abort();
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

impl Proxy {
    /// A proxy that keeps its backends' names as they are (a bridge to one
    /// backend, or several whose names do not clash).
    pub fn verbatim(server: Server) -> Self {
        Self::with(server, None)
    }

    /// A proxy that namespaces each backend's names by its id:
    /// `<id><separator><name>` for tools and prompts, `<id>+<uri>` for
    /// resources.
    pub fn namespaced(server: Server, separator: &str) -> Result<Self, ProxyError> {
        check_separator(separator)?;
        Ok(Self::with(server, Some(separator.to_owned())))
    }

    fn with(server: Server, separator: Option<String>) -> Self {
        Proxy {
            shared: Arc::new(Shared {
                server,
                separator,
                backends: Mutex::new(BTreeMap::new()),
            }),
        }
    }

    /// The server that serves the backends' components.
    pub fn server(&self) -> &Server {
        &self.shared.server
    }

    /// The client of backend `id`.
    pub fn client(&self, id: &str) -> Option<Client> {
        self.lock().get(id).map(|b| b.link.client.clone())
    }

    /// The ids of the backends, in order.
    pub fn backends(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Adds a backend under `id`: lists its components, registers them and
    /// follows its list changes until it is removed. The client declares
    /// no elicitation or sampling capability of its own: use
    /// [`Proxy::connect_backend`] for a backend that asks for input.
    pub async fn add_backend(&self, id: &str, client: Client) -> Result<Synced, ProxyError> {
        self.add_relayed_backend(id, client, Relay::new()).await
    }

    /// Connects `builder` to `target` with a [`Relay`] installed, and adds
    /// that backend under `id`: the backend's elicitation and sampling
    /// requests (and its `input_required` answers) reach the caller.
    pub async fn connect_backend(
        &self,
        id: &str,
        builder: ClientBuilder,
        target: impl Into<Target>,
    ) -> Result<Synced, ProxyError> {
        check_id(id)?;
        let relay = Relay::new();
        let client = relay
            .install(builder)
            .connect(target)
            .await
            .map_err(|e| ProxyError::backend(id, e))?;
        self.add_relayed_backend(id, client, relay).await
    }

    /// Adds a backend whose client has `relay` installed
    /// ([`Relay::install`]): the elicitation and sampling requests an
    /// initialize-era backend sends while a forwarded request runs go to
    /// that request's caller (as an `input_required` answer).
    pub async fn add_relayed_backend(
        &self,
        id: &str,
        client: Client,
        relay: Relay,
    ) -> Result<Synced, ProxyError> {
        check_id(id)?;
        let naming = match &self.shared.separator {
            Some(sep) => Naming::prefixed(id, sep),
            None => Naming::Verbatim,
        };
        let completes = client.server_capabilities().get("completions").is_some();
        let link = Arc::new(Link {
            id: id.to_owned(),
            client,
            naming,
            completes,
            relay,
        });
        {
            let mut backends = self.lock();
            if backends.contains_key(id) {
                return Err(ProxyError::config(format!(
                    "two backends have the id {id:?}"
                )));
            }
            if backends.len() >= MAX_BACKENDS {
                return Err(ProxyError::config(format!(
                    "a proxy holds at most {MAX_BACKENDS} backends"
                )));
            }
            backends.insert(
                id.to_owned(),
                Backend {
                    link: link.clone(),
                    group: Group::default(),
                    watcher: None,
                    updates: None,
                },
            );
        }
        // Subscribed before the first listing, so that no change made in
        // between is missed.
        let subscription = match link.client.listen(ListenFilter::all_lists()).await {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::debug!(target: "snodo::proxy", backend = %id, error = %e, "no list changes from this backend");
                None
            }
        };
        match self.sync(&link).await {
            Ok(synced) => {
                if let Some(subscription) = subscription {
                    let watcher = watch(Arc::downgrade(&self.shared), link.clone(), subscription);
                    if let Some(b) = self.lock().get_mut(id) {
                        b.watcher = Some(watcher);
                    }
                }
                Ok(synced)
            }
            Err(e) => {
                self.lock().remove(id);
                Err(e)
            }
        }
    }

    /// Lists backend `id` again and replaces its components.
    pub async fn refresh(&self, id: &str) -> Result<Synced, ProxyError> {
        let link = self
            .lock()
            .get(id)
            .map(|b| b.link.clone())
            .ok_or_else(|| ProxyError::config(format!("no backend {id:?}")))?;
        self.sync(&link).await
    }

    /// Removes backend `id` and its components (announcing the change);
    /// returns whether there was one. Its client is closed once no request
    /// uses it any more.
    pub fn remove_backend(&self, id: &str) -> bool {
        let Some(backend) = self.lock().remove(id) else {
            return false;
        };
        let _ = self.shared.server.replace_group(
            &backend.group,
            Vec::<ForwardTool>::new(),
            Vec::<ForwardResource>::new(),
            Vec::<ForwardPrompt>::new(),
        );
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Backend>> {
        self.shared.lock()
    }

    async fn sync(&self, link: &Arc<Link>) -> Result<Synced, ProxyError> {
        sync(&self.shared, link).await
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Backend>> {
        self.backends.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The components of a backend, listed now.
struct Listing {
    tools: Vec<ForwardTool>,
    resources: Vec<ForwardResource>,
    prompts: Vec<ForwardPrompt>,
    /// The backend URIs of the fixed resources whose updates are followed
    /// (at most [`MAX_FOLLOWED`]).
    followed: Vec<String>,
}

async fn list(link: &Arc<Link>) -> Result<Listing, ClientError> {
    let client = &link.client;
    let caps = client.server_capabilities();
    let naming = &link.naming;
    let mut out = Listing {
        tools: Vec::new(),
        resources: Vec::new(),
        prompts: Vec::new(),
        followed: Vec::new(),
    };
    if caps.get("tools").is_some() {
        for mut definition in client.list_tools().await? {
            let remote = std::mem::take(&mut definition.name);
            definition.name = naming.name(&remote);
            out.tools.push(ForwardTool {
                link: link.clone(),
                definition,
                remote,
            });
        }
    }
    if caps.get("prompts").is_some() {
        for listed in client.list_prompts().await? {
            let Value::Object(listed) = listed else {
                continue;
            };
            let Some(remote) = listed.get("name").and_then(Value::as_str) else {
                continue;
            };
            let (name, remote) = (naming.name(remote), remote.to_owned());
            let arguments = listed
                .get("arguments")
                .cloned()
                .and_then(|a| serde_json::from_value(a).ok())
                .unwrap_or_default();
            out.prompts.push(ForwardPrompt {
                link: link.clone(),
                name,
                remote,
                arguments,
                listed,
            });
        }
    }
    if caps.get("resources").is_some() {
        let fixed = client.list_resources().await?;
        out.followed = fixed
            .iter()
            .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned))
            .take(MAX_FOLLOWED)
            .collect();
        let templates = client.list_resource_templates().await?;
        for (listed, template) in fixed
            .into_iter()
            .map(|r| (r, false))
            .chain(templates.into_iter().map(|t| (t, true)))
        {
            if let Some(r) = resource(link, listed, template) {
                out.resources.push(r);
            }
        }
    }
    Ok(out)
}

fn resource(link: &Arc<Link>, listed: Value, template: bool) -> Option<ForwardResource> {
    let Value::Object(listed) = listed else {
        return None;
    };
    let key = if template { "uriTemplate" } else { "uri" };
    let remote = listed.get(key).and_then(Value::as_str)?.to_owned();
    let name = link.naming.name(
        listed
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(&remote),
    );
    Some(ForwardResource {
        link: link.clone(),
        uri: link.naming.uri(&remote),
        remote,
        template,
        name,
        listed,
    })
}

async fn sync(shared: &Shared, link: &Arc<Link>) -> Result<Synced, ProxyError> {
    let listing = list(link)
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
    check_clashes(&backends, &link.id, &listing)?;
    let old = current.group.clone();
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
        if following != Some(&followed) {
            if let Some((_, task)) = b.updates.take() {
                task.abort();
            }
            if !followed.is_empty() && subscribes(link) {
                let task = follow_updates(shared.server.clone(), link.clone(), followed.clone());
                b.updates = Some((followed, task));
            }
        }
        b.group = group;
    }
    Ok(synced)
}

/// Refuses a listing whose names another backend already has, naming both.
fn check_clashes(
    backends: &BTreeMap<String, Backend>,
    id: &str,
    listing: &Listing,
) -> Result<(), ProxyError> {
    for (other, b) in backends.iter().filter(|(other, _)| *other != id) {
        let clash = |kind: &str, name: &str| {
            ProxyError::config(format!(
                "{kind} {name:?} of backend {id:?} clashes with the same {kind} of backend {other:?}"
            ))
        };
        if let Some(t) = listing
            .tools
            .iter()
            .find(|t| b.group.tools.contains(&t.definition.name))
        {
            return Err(clash("tool", &t.definition.name));
        }
        if let Some(p) = listing
            .prompts
            .iter()
            .find(|p| b.group.prompts.contains(&p.name))
        {
            return Err(clash("prompt", &p.name));
        }
        if let Some(r) = listing
            .resources
            .iter()
            .find(|r| b.group.resources.contains(&r.uri))
        {
            return Err(clash("resource", &r.uri));
        }
    }
    Ok(())
}

/// Whether the backend offers resource subscriptions.
fn subscribes(link: &Link) -> bool {
    link.client.server_capabilities()["resources"]["subscribe"] == Value::Bool(true)
}

/// The most resources whose updates one backend's subscription follows.
pub const MAX_FOLLOWED: usize = 256;

/// Follows `notifications/resources/updated` of `uris` at the backend and
/// announces each under the proxy's URI (to `subscriptions/listen` streams
/// and initialize-era subscribers alike).
fn follow_updates(server: Server, link: Arc<Link>, uris: Vec<String>) -> tokio::task::AbortHandle {
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
                server.events().resource_updated(&link.naming.uri(uri));
            }
        }
    })
    .abort_handle()
}

/// Follows a backend's list changes: each one lists it again.
fn watch(
    shared: Weak<Shared>,
    link: Arc<Link>,
    mut subscription: Subscription,
) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        while let Some(change) = subscription.next().await {
            let Some(shared) = shared.upgrade() else { return };
            tracing::debug!(target: "snodo::proxy", backend = %link.id, method = %change.method, "backend list changed");
            if let Err(e) = sync(&shared, &link).await {
                tracing::warn!(target: "snodo::proxy", backend = %link.id, "listing the backend again failed: {e}");
            }
        }
    })
    .abort_handle()
}

/// The id of a bridge's one backend.
pub const BRIDGE_BACKEND: &str = "backend";

/// How long a request to a bridge may run (see
/// [`ServerBuilder::request_timeout`](crate::server::ServerBuilder::request_timeout)).
pub const BRIDGE_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// A proxy for one backend with its names unchanged: connects `builder`
/// to `target` with a [`Relay`] installed (so that an initialize-era
/// backend's elicitation and sampling requests reach the caller),
/// and builds a server that takes the backend's name, version, title and
/// instructions and serves every revision this library serves.
pub async fn bridge(
    builder: ClientBuilder,
    target: impl Into<Target>,
) -> Result<Proxy, ProxyError> {
    let relay = Relay::new();
    let client = relay
        .install(builder)
        .connect(target)
        .await
        .map_err(|e| ProxyError::backend(BRIDGE_BACKEND, e))?;
    let info = client.server_info().unwrap_or(Value::Null);
    let text = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut server = Server::builder(
        text("name").unwrap_or_else(|| "snodo-bridge".into()),
        text("version").unwrap_or_else(|| env!("CARGO_PKG_VERSION").into()),
    )
    .request_timeout(BRIDGE_REQUEST_TIMEOUT);
    let caps = client.server_capabilities();
    for (key, capability) in [
        ("tools", Capability::Tools),
        ("resources", Capability::Resources),
        ("prompts", Capability::Prompts),
        ("completions", Capability::Completions),
    ] {
        if caps.get(key).is_some() {
            server = server.declare(capability);
        }
    }
    if let Some(title) = text("title") {
        server = server.title(title);
    }
    if let Some(instructions) = client.instructions() {
        server = server.instructions(instructions);
    }
    let server = server
        .build()
        .map_err(|e| ProxyError::config(e.to_string()))?;
    let proxy = Proxy::verbatim(server);
    proxy
        .add_relayed_backend(BRIDGE_BACKEND, client, relay)
        .await?;
    Ok(proxy)
}
