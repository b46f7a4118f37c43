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
//! - list changes: when a backend announces one, its components of that
//!   kind are listed again and the proxy announces the change to its own
//!   listeners; relists are coalesced per backend (one in flight, one
//!   queued that later changes join), so a burst of notifications costs
//!   at most two listings; the updates of its fixed resources (the first
//!   [`MAX_FOLLOWED`]) are announced under the proxy's URIs.
//!
//! Each listing is bounded by the backend client's listing limits
//! ([`ClientBuilder::max_listing_items`], 10 000 items, and
//! [`ClientBuilder::max_listing_bytes`], 16 MiB, by default): a backend
//! past them is not added, or, when a relist goes past them, has its
//! components withdrawn ([`Proxy::withdrawn`] says why) while the other
//! backends are served as before.
//!
//! Names are kept as they are ([`Proxy::verbatim`], a bridge to one
//! backend) or namespaced by backend id ([`Proxy::namespaced`]): tools and
//! prompts as `<id><separator><name>`, resource URIs and templates under
//! the scheme `<id>+<scheme>`.
//!
//! What of a backend is served, and how, is its [`Shaping`]
//! ([`Proxy::shape`]): name patterns that expose or hide its tools,
//! prompts and resources, aliases, arguments injected into its tool calls
//! and a bound on a request's arguments.
//!
//! The proxy's server is any [`Server`]; build it with
//! [`ServerBuilder::declare`](crate::server::ServerBuilder::declare) for
//! each kind of component the backends may bring, so that the capabilities
//! a client learned stay true while backends come and go.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use snodo::client::{Client, Target};
//! use snodo::proxy::Proxy;
//! use snodo::server::Capability;
//!
//! let server = snodo::Server::builder("gateway", "1.0.0")
//!     .declare(Capability::Tools)
//!     .declare(Capability::Resources)
//!     .declare(Capability::Prompts)
//!     .build()?;
//! let proxy = Proxy::namespaced(server, ".")?;
//! proxy.connect_backend("files", Client::builder(), Target::command("my-files-server --stdio")).await?;
//! proxy.add_backend("search", Client::http("http://127.0.0.1:8080/mcp").await?).await?;
//! // `files.read`, `search.query`, ... on every transport:
//! proxy.server().serve_stdio().await?;
//! # Ok(()) }
//! ```

mod audit;
mod backends;
mod callers;
mod convert;
mod error;
mod flight;
mod forward;
mod glob;
mod guard;
mod listing;
mod naming;
mod pins;
mod relay;
mod relist;
mod roles;
mod shaping;
mod stats;
mod views;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::task::AbortHandle;

pub use self::audit::{AUDIT_QUEUE, Audit};
pub use self::backends::Synced;
use self::backends::{Backend, Shared, follow_changes, relist, sweep_callers, sync};
use self::callers::Callers;
pub use self::callers::{CALLER_IDLE, CALLER_START, MAX_CALLERS, PerCaller};
pub use self::error::ProxyError;
use self::flight::Link;
use self::forward::{ForwardPrompt, ForwardResource, ForwardTool};
pub use self::glob::Glob;
pub use self::guard::BackendLimits;
use self::guard::Guard;
use self::listing::Kinds;
pub use self::listing::MAX_FOLLOWED;
use self::naming::Naming;
pub use self::naming::{DEFAULT_SEPARATOR, check_id, check_separator};
pub use self::pins::{MAX_PIN_FILE_BYTES, MAX_PINS, PendingChange, PinStore};
pub use self::relay::{MAX_PARKED, PARKED_TTL, QUEUE, Relay};
use self::relist::Relists;
pub use self::roles::{Role, Roles};
pub use self::shaping::{Component, Shaping};
pub use self::stats::BackendStatus;
use self::stats::Stats;
pub use self::views::View;
use self::views::{Served, Views};
use crate::Server;
use crate::client::{Client, ClientBuilder, ListenFilter, Target};
use crate::server::{Capability, Group};

/// The most backends one proxy holds.
pub const MAX_BACKENDS: usize = 64;

/// A server whose components forward to backends. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Proxy {
    shared: Arc<Shared>,
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
                shapings: Mutex::new(BTreeMap::new()),
                guards: Mutex::new(BTreeMap::new()),
                per_caller: Mutex::new(BTreeMap::new()),
                stats: Arc::new(Stats::default()),
                changes: tokio::sync::watch::Sender::new(0),
                views: Arc::new(Mutex::new(Views::new())),
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

    /// Why the components of backend `id` are withdrawn while it stays
    /// added: its last listing went past its client's listing limits
    /// (a [`ClientErrorKind::LimitExceeded`](crate::client::ClientErrorKind::LimitExceeded) error).
    /// `None` while they are served, or when there is no such backend. A
    /// later list change that lists it within the limits serves them again.
    pub fn withdrawn(&self, id: &str) -> Option<String> {
        self.lock().get(id).and_then(|b| b.withdrawn.clone())
    }

    /// A receiver whose value grows each time the names the proxy serves
    /// change: a backend added, listed again with other names, withdrawn or
    /// removed. A backend refused for a name clash may be added once the
    /// names have moved: wait on this
    /// ([`changed`](tokio::sync::watch::Receiver::changed)) and try again.
    /// (A backend already added whose relist clashed is listed again by
    /// the proxy itself when the names move.)
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// Serves backend `id` as `shaping` says, from its next listing on: set
    /// it before the backend is added, so that its first listing is shaped.
    /// A backend already added is listed again. The setting is kept while
    /// the backend is removed and added again; [`Shaping::default`] serves
    /// everything.
    pub fn shape(&self, id: &str, shaping: Shaping) -> Result<(), ProxyError> {
        check_id(id)?;
        let shaping = Arc::new(shaping);
        let mut shapings = self
            .shared
            .shapings
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if shapings.get(id) == Some(&shaping) {
            return Ok(());
        }
        shapings.insert(id.to_owned(), shaping);
        drop(shapings);
        if let Some(b) = self.lock().get(id) {
            b.relists.ask(Kinds::ALL);
        }
        Ok(())
    }

    /// Holds backend `id`'s calls to `limits` from now on (calls already
    /// let through keep the limits they passed). A change of limits starts
    /// them afresh: a full rate, a closed breaker. The setting is kept
    /// while the backend is removed and added again.
    pub fn limit(&self, id: &str, limits: BackendLimits) -> Result<(), ProxyError> {
        check_id(id)?;
        let mut guards = self.shared.guards.lock().unwrap_or_else(|e| e.into_inner());
        if guards.get(id).is_some_and(|g| *g.limits() == limits) {
            return Ok(());
        }
        let guard = Arc::new(Guard::new(limits));
        guards.insert(id.to_owned(), guard.clone());
        drop(guards);
        if let Some(b) = self.lock().get(id) {
            *b.link.guard.write().unwrap_or_else(|e| e.into_inner()) = guard;
        }
        Ok(())
    }

    /// Sends each caller's requests to backend `id` to a server of the
    /// caller's own, as `per_caller` says (`None`: to the backend, as
    /// others). The backend added under `id` is listed and followed, and
    /// answers completions; the callers' servers are started on their first
    /// request and stopped once idle. A change stops the callers' servers
    /// running. The setting is kept while the backend is removed and added
    /// again.
    pub fn per_caller(&self, id: &str, per_caller: Option<PerCaller>) -> Result<(), ProxyError> {
        check_id(id)?;
        let callers = per_caller.map(|p| Arc::new(Callers::new(p)));
        {
            let mut all = self
                .shared
                .per_caller
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match &callers {
                Some(c) => all.insert(id.to_owned(), c.clone()),
                None => all.remove(id),
            };
        }
        if let Some(b) = self.lock().get(id) {
            b.link.set_callers(callers);
        }
        Ok(())
    }

    /// The state of backend `id`'s circuit breaker: `closed`, `open` or
    /// `half-open` (`None` without such a backend or breaker).
    pub fn breaker(&self, id: &str) -> Option<&'static str> {
        let guards = self.shared.guards.lock().unwrap_or_else(|e| e.into_inner());
        guards
            .get(id)
            .filter(|g| g.has_breaker())
            .map(|g| g.breaker_state())
    }

    /// Writes a line per forwarded request to `audit` from now on (`None`
    /// stops).
    pub fn audit(&self, audit: Option<Audit>) {
        self.shared.stats.set_audit(audit);
    }

    /// Each backend as the proxy serves it now, in id order.
    pub fn status(&self) -> Vec<BackendStatus> {
        let pending: Vec<String> = {
            let shapings = self
                .shared
                .shapings
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let mut keys: Vec<String> = Vec::new();
            let mut seen = std::collections::BTreeSet::new();
            for shaping in shapings.values() {
                if let Some(store) = shaping.pins()
                    && seen.insert(Arc::as_ptr(shaping) as usize)
                {
                    keys.extend(store.pending().into_iter().map(|c| c.key));
                }
            }
            keys.sort();
            keys.dedup();
            keys
        };
        let backends = self.lock();
        backends
            .iter()
            .map(|(id, b)| {
                let guard = b.link.guard();
                let naming = &b.link.naming;
                let mine = |key: &&String| match key.split_once(':') {
                    Some(("template", uri)) => naming.backend_uri(uri).is_some(),
                    Some((_, name)) => match naming {
                        Naming::Prefixed { name_prefix, .. } => name.starts_with(name_prefix),
                        Naming::Verbatim => true,
                    },
                    None => false,
                };
                BackendStatus {
                    id: id.clone(),
                    revision: b.link.client.protocol_version(),
                    tools: b.group.tools.len(),
                    resources: b.group.resources.len(),
                    prompts: b.group.prompts.len(),
                    withdrawn: b.withdrawn.clone(),
                    breaker: guard.has_breaker().then(|| guard.breaker_state()),
                    limits: guard.limits().describe(),
                    pending: pending.iter().filter(mine).cloned().collect(),
                    callers: b.link.callers().map(|c| c.running()),
                }
            })
            .collect()
    }

    /// The proxy's counters and each backend's state as Prometheus text
    /// (exposition format 0.0.4): `snodo_proxy_requests_total`,
    /// `snodo_proxy_errors_total` and `snodo_proxy_request_duration_seconds`
    /// by backend and method, `snodo_proxy_limiter_rejections_total` by
    /// backend and limit (`rate`, `breaker`),
    /// `snodo_proxy_pinned_withdrawals_total`, `snodo_proxy_backend_up`
    /// and `snodo_proxy_breaker_state` (0 closed, 1 open, 2 half-open) by
    /// backend.
    pub fn metrics(&self) -> String {
        self.shared.stats.render(&self.status())
    }

    /// Serves `view` of the proxy's backends on `server`, a virtual server
    /// named `name` (replacing one of that name): `server` holds the
    /// components of the backends the view takes that its patterns match,
    /// follows them as they change, and answers on its own with its own
    /// policy. Build it as the proxy's server is built
    /// ([`ServerBuilder::declare`](crate::server::ServerBuilder::declare)
    /// for each kind). The backends it takes are listed again to fill it.
    pub fn serve_view(&self, name: &str, server: Server, view: View) -> Result<(), ProxyError> {
        check_id(name)?;
        let backends = self.lock();
        let mut views = self.views();
        if let Some(mut old) = views.remove(name) {
            old.clear_all();
        }
        views.insert(name.to_owned(), Served::new(view.clone(), server));
        drop(views);
        for (id, b) in backends.iter() {
            if view.takes(id) {
                b.relists.ask(Kinds::ALL);
            }
        }
        Ok(())
    }

    /// Stops serving virtual server `name` (its server is emptied);
    /// whether there was one.
    pub fn remove_view(&self, name: &str) -> bool {
        let removed = self.views().remove(name);
        removed.map(|mut old| old.clear_all()).is_some()
    }

    /// The names of the virtual servers, in order.
    pub fn views_served(&self) -> Vec<String> {
        self.views().keys().cloned().collect()
    }

    fn views(&self) -> std::sync::MutexGuard<'_, Views> {
        self.shared.views.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a backend under `id`: lists its components, registers them and
    /// follows its list changes until it is removed. The client declares
    /// no elicitation or sampling capability of its own: use
    /// [`Proxy::connect_backend`] for a backend that asks for input.
    ///
    /// A listing past the client's listing limits fails with
    /// a [`ClientErrorKind::LimitExceeded`](crate::client::ClientErrorKind::LimitExceeded) error
    /// (in [`ProxyError::client_error`]), and the backend is not added.
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

    /// Adds backend `id` whose callers each get a server of their own
    /// ([`Proxy::per_caller`]): sets `per_caller`, then starts its command
    /// once more for the proxy itself (every variable from claims empty)
    /// to list and follow it.
    pub async fn connect_per_caller(
        &self,
        id: &str,
        per_caller: PerCaller,
    ) -> Result<Synced, ProxyError> {
        let (builder, listing) = (per_caller.builder().clone(), per_caller.listing_command());
        self.per_caller(id, Some(per_caller))?;
        self.connect_backend(id, builder, Target::Stdio(listing))
            .await
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
        let guard = {
            let guards = self.shared.guards.lock().unwrap_or_else(|e| e.into_inner());
            guards.get(id).cloned().unwrap_or_default()
        };
        let link = Arc::new(Link {
            id: id.to_owned(),
            client,
            naming,
            completes,
            relay,
            guard: std::sync::RwLock::new(guard),
            stats: self.shared.stats.clone(),
            callers: std::sync::RwLock::new(self.per_caller_of(id)),
            callers_set: tokio::sync::Notify::new(),
        });
        let relists = Arc::new(Relists::default());
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
            // Read again under the lock `limit` takes too: limits set since
            // are not lost.
            let now = {
                let guards = self.shared.guards.lock().unwrap_or_else(|e| e.into_inner());
                guards.get(id).cloned()
            };
            if let Some(now) = now {
                *link.guard.write().unwrap_or_else(|e| e.into_inner()) = now;
            }
            link.set_callers(self.per_caller_of(id));
            backends.insert(
                id.to_owned(),
                Backend {
                    link: link.clone(),
                    group: Group::default(),
                    relists: relists.clone(),
                    clashing: false,
                    tasks: Vec::new(),
                    updates: None,
                    withdrawn: None,
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
        match self.sync(&link, Kinds::ALL).await {
            Ok(synced) => {
                let mut tasks = vec![
                    relist(Arc::downgrade(&self.shared), link.clone(), relists.clone()),
                    sweep_callers(Arc::downgrade(&link)),
                ];
                if let Some(subscription) = subscription {
                    tasks.push(follow_changes(link.clone(), relists, subscription));
                }
                match self.lock().get_mut(id) {
                    Some(b) if Arc::ptr_eq(&b.link, &link) => b.tasks = tasks,
                    _ => tasks.iter().for_each(AbortHandle::abort),
                }
                Ok(synced)
            }
            Err(e) => {
                let mut backends = self.lock();
                if backends
                    .get(id)
                    .is_some_and(|b| Arc::ptr_eq(&b.link, &link))
                {
                    backends.remove(id);
                }
                Err(e)
            }
        }
    }

    /// The per-caller setting of backend `id`.
    fn per_caller_of(&self, id: &str) -> Option<Arc<Callers>> {
        let all = self
            .shared
            .per_caller
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        all.get(id).cloned()
    }

    /// Lists backend `id` again and replaces its components.
    pub async fn refresh(&self, id: &str) -> Result<Synced, ProxyError> {
        let link = self
            .lock()
            .get(id)
            .map(|b| b.link.clone())
            .ok_or_else(|| ProxyError::config(format!("no backend {id:?}")))?;
        self.sync(&link, Kinds::ALL).await
    }

    /// Removes backend `id` and its components (announcing the change);
    /// returns whether there was one. Its client is closed once no request
    /// uses it any more.
    pub fn remove_backend(&self, id: &str) -> bool {
        let mut backends = self.lock();
        let Some(backend) = backends.remove(id) else {
            return false;
        };
        let _ = self.shared.server.replace_group(
            &backend.group,
            Some(Vec::<ForwardTool>::new()),
            Some(Vec::<ForwardResource>::new()),
            Some(Vec::<ForwardPrompt>::new()),
        );
        views::clear(&mut self.views(), id);
        self.shared.moved(&backends, id);
        if let Some(callers) = backend.link.callers() {
            callers.clear();
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Backend>> {
        self.shared.lock()
    }

    async fn sync(&self, link: &Arc<Link>, kinds: Kinds) -> Result<Synced, ProxyError> {
        sync(&self.shared, link, kinds).await
    }
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
