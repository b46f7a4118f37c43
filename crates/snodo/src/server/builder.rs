//! Building a server: registration checks and compile-once work.

use std::fmt;
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};

use super::catalog::{Capability, Catalog, Declared, PromptEntry, ResourceEntry};
use super::error::BuildError;
use super::extension::Extension;
use super::policy::Policy;
use super::registry::ToolEntry;
use super::scope_policy::ScopeRules;
use super::state_needs;
use super::{EventHub, Inner, Server};
use crate::task::TaskOptions;
use std::time::Duration;

use crate::prompt::Prompt;
use crate::protocol::CacheHints;
use crate::protocol::Revision;
use crate::resource::Resource;
use crate::schema::{PassThrough, Validator};
use crate::tool::Tool;
use crate::wire::Limits;

/// The default of [`ServerBuilder::request_timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest [`ServerBuilder::request_timeout`] accepted.
const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources.len())
            .field("prompts", &self.prompts.len())
            .field("limits", &self.limits)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

/// A tool waiting for the validator to compile its schemas.
type MakeTool = Box<dyn FnOnce(&dyn Validator) -> Result<ToolEntry, BuildError> + Send>;

/// Collects components and settings, then builds an immutable [`Server`].
pub struct ServerBuilder {
    info: Map<String, Value>,
    instructions: Option<String>,
    tools: Vec<MakeTool>,
    resources: Vec<Result<ResourceEntry, BuildError>>,
    prompts: Vec<Result<PromptEntry, BuildError>>,
    extensions: Vec<Arc<dyn Extension>>,
    validator: Arc<dyn Validator>,
    policy: Option<Arc<dyn Policy>>,
    scopes: ScopeRules,
    /// Scopes set on the builder: (kind, name or URI, scopes).
    scope_overrides: Vec<(&'static str, String, Vec<String>)>,
    events: Option<EventHub>,
    state: http::Extensions,
    state_types: std::collections::HashSet<std::any::TypeId>,
    discover_cache: CacheHints,
    list_cache: CacheHints,
    read_cache: CacheHints,
    page_size: usize,
    subscriptions_per_share: usize,
    limits: Limits,
    revisions: Vec<Revision>,
    input_timeout: Duration,
    request_timeout: Duration,
    tasks: Option<TaskOptions>,
    capture: crate::telemetry::Capture,
    declared: Declared,
    #[cfg(feature = "skills")]
    skills: Option<crate::skills::Skills>,
}

impl ServerBuilder {
    pub(super) fn new(name: String, version: String) -> Self {
        let mut info = Map::new();
        info.insert("name".into(), name.into());
        info.insert("version".into(), version.into());
        Self {
            info,
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            extensions: Vec::new(),
            validator: Arc::new(PassThrough),
            policy: None,
            scopes: ScopeRules::default(),
            scope_overrides: Vec::new(),
            events: None,
            state: http::Extensions::new(),
            state_types: std::collections::HashSet::new(),
            discover_cache: CacheHints::default(),
            list_cache: CacheHints::default(),
            read_cache: CacheHints::default(),
            page_size: 100,
            subscriptions_per_share: super::shares::DEFAULT_MAX_SUBSCRIPTIONS_PER_SHARE,
            limits: Limits::default(),
            revisions: Revision::ALL.to_vec(),
            input_timeout: super::legacy::DEFAULT_INPUT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            tasks: None,
            capture: crate::telemetry::Capture::new(),
            declared: Declared::default(),
            #[cfg(feature = "skills")]
            skills: None,
        }
    }

    /// Sets the human-readable title in the server's info.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.insert("title".into(), title.into().into());
        self
    }

    /// Sets the instructions `server/discover` returns.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Registers a tool.
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.tools
            .push(Box::new(move |validator| ToolEntry::new(tool, validator)));
        self
    }

    /// Registers a resource or resource template.
    pub fn resource<R: Resource>(mut self, resource: R) -> Self {
        self.resources.push(ResourceEntry::new(resource));
        self
    }

    /// Registers a prompt.
    pub fn prompt<P: Prompt>(mut self, prompt: P) -> Self {
        self.prompts.push(PromptEntry::new(prompt));
        self
    }

    /// Registers an MCP App ([`crate::apps`]): its HTML as a `ui://`
    /// resource, listed and read with its `_meta.ui`, and shown only to
    /// hosts that declared the extension. A URI that is not `ui://…` is
    /// refused when the server is built.
    pub fn app(mut self, app: crate::apps::AppResource) -> Self {
        if app.has_app_uri() {
            return self.resource(app);
        }
        self.resources.push(Err(BuildError::Component {
            kind: "resource",
            name: crate::resource::Resource::name(&app).to_string(),
            rule: "an app's URI is a ui:// URI".into(),
        }));
        self
    }

    /// Registers a negotiated extension.
    pub fn extension<E: Extension>(mut self, extension: E) -> Self {
        self.extensions.push(Arc::new(extension));
        self
    }

    /// Serves `skills` (replacing a set given before): every file as a
    /// resource, and the Skills extension's methods (`skills/list`,
    /// `skills/get`, `resources/directory/read`), declared as
    /// `io.modelcontextprotocol/skills` with `directoryRead: true`.
    /// `skills/list` carries the [`list_cache`](Self::list_cache) hints and
    /// pages by [`page_size`](Self::page_size); `skills/get` carries the
    /// [`read_cache`](Self::read_cache) hints.
    #[cfg(feature = "skills")]
    #[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
    pub fn skills(mut self, skills: crate::skills::Skills) -> Self {
        self.skills = Some(skills);
        self
    }

    /// Installs the schema validator (default: [`PassThrough`]).
    pub fn validator<V: Validator>(mut self, validator: V) -> Self {
        self.validator = Arc::new(validator);
        self
    }

    /// The OAuth scopes every request over an authorized transport needs
    /// unless its tool, resource or prompt declares its own (with
    /// `scopes = [...]` in the attribute macros, or the `*_scopes` methods
    /// here). A principal without them gets `403 insufficient_scope` over
    /// Streamable HTTP.
    pub fn default_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.default = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes calling tool `name` needs (replacing what it declares).
    pub fn tool_scopes<S: Into<String>>(
        self,
        name: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.component_scopes("tool", name, scopes)
    }

    /// The scopes reading the resource at `uri` (a fixed URI, or a
    /// template as registered) needs.
    pub fn resource_scopes<S: Into<String>>(
        self,
        uri: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.component_scopes("resource", uri, scopes)
    }

    /// The scopes getting prompt `name` needs.
    pub fn prompt_scopes<S: Into<String>>(
        self,
        name: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.component_scopes("prompt", name, scopes)
    }

    fn component_scopes<S: Into<String>>(
        mut self,
        kind: &'static str,
        name: &str,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.scope_overrides.push((kind, name.to_string(), scopes));
        self
    }

    /// Lists leave out the tools, resources and prompts the principal's
    /// scopes do not cover (default: lists show everything, and a call
    /// without the scopes gets the step-up challenge).
    pub fn hide_unauthorized(mut self, hide: bool) -> Self {
        self.scopes.hide = hide;
        self
    }

    /// How granted scopes satisfy required ones (default [`ExactScopes`](super::ExactScopes)).
    pub fn scope_policy<P: super::ScopePolicy>(mut self, policy: P) -> Self {
        self.scopes.policy = Arc::new(policy);
        self
    }

    /// Installs an authorization policy.
    pub fn policy<P: Policy>(mut self, policy: P) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Uses this event hub (default: a new one allowing 4 096 open
    /// subscriptions), e.g. to publish events from outside the server.
    pub fn events(mut self, hub: EventHub) -> Self {
        self.events = Some(hub);
        self
    }

    /// Registers shared state, handed to handlers that take a
    /// [`State<S>`](crate::extract::State) parameter (or read
    /// [`Context::state`](crate::Context::state)). One value per type: a second
    /// call with the same type replaces the first. `S` is cloned for each call,
    /// so wrap what is large or mutable in an `Arc`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use snodo::prelude::*;
    /// use snodo::State;
    ///
    /// struct Db { greeting: String }
    ///
    /// #[snodo::tool]
    /// async fn hello(State(db): State<Arc<Db>>) -> String {
    ///     db.greeting.clone()
    /// }
    ///
    /// let db = Arc::new(Db { greeting: "hi".into() });
    /// let server = Server::builder("app", "1.0").state(db).tool(hello).build();
    /// assert!(server.is_ok());
    /// ```
    pub fn state<S: Clone + Send + Sync + 'static>(mut self, state: S) -> Self {
        self.state.insert(state);
        self.state_types.insert(std::any::TypeId::of::<S>());
        self
    }

    /// What the request spans may record beyond the defaults: arguments,
    /// results, resource URIs in span names (all off by default; see
    /// [`telemetry`](crate::telemetry)).
    ///
    /// ```
    /// use snodo::{Server, telemetry::Capture};
    /// let server = Server::builder("app", "1.0").telemetry(Capture::new().arguments(true)).build();
    /// assert!(server.is_ok());
    /// ```
    pub fn telemetry(mut self, capture: crate::telemetry::Capture) -> Self {
        self.capture = capture;
        self
    }

    /// How long a request may run before its handler is cancelled and the
    /// request fails with `-32603 Request timed out` (default 60 s, at most
    /// one day). One setting for stdio, Streamable HTTP and in-process calls;
    /// `subscriptions/listen` streams are not limited.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout.min(MAX_REQUEST_TIMEOUT);
        self
    }

    /// Sets the cache hints of `server/discover`.
    pub fn discover_cache(mut self, hints: CacheHints) -> Self {
        self.discover_cache = hints;
        self
    }

    /// Sets the cache hints of the list methods (the same on every page).
    pub fn list_cache(mut self, hints: CacheHints) -> Self {
        self.list_cache = hints;
        self
    }

    /// Sets the default cache hints of `resources/read` (a read may override them).
    pub fn read_cache(mut self, hints: CacheHints) -> Self {
        self.read_cache = hints;
        self
    }

    /// Sets how many items a list page holds (default 100).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }

    /// Sets how many `subscriptions/listen` streams one principal (or, when
    /// anonymous, one remote address) may hold open at once (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS_PER_SHARE`](super::DEFAULT_MAX_SUBSCRIPTIONS_PER_SHARE));
    /// the one over its share is refused with 503, whatever room the
    /// server has.
    pub fn subscriptions_per_share(mut self, max: usize) -> Self {
        self.subscriptions_per_share = max;
        self
    }

    /// Sets the decoding limits (message size, nesting depth, number length).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Restricts the protocol revisions the server accepts (default: all
    /// three, 2026-07-28, 2025-11-25 and 2025-06-18).
    ///
    /// A server without 2026-07-28 answers stateless requests with the
    /// unsupported-version error; one without any initialize-era revision
    /// answers `initialize` with "Method not found", as a 2026-only server
    /// does.
    ///
    /// ```
    /// use snodo::{Server, model::Revision};
    /// let modern_only = Server::builder("s", "1").revisions([Revision::V2026_07_28]).build().unwrap();
    /// assert!(!modern_only.serves_legacy());
    /// ```
    pub fn revisions(mut self, revisions: impl IntoIterator<Item = Revision>) -> Self {
        let mut list: Vec<Revision> = revisions.into_iter().collect();
        list.sort_unstable_by(|a, b| b.cmp(a));
        list.dedup();
        self.revisions = list;
        self
    }

    /// How long an initialize-era request waits for the client to answer a
    /// request the server sent it on a handler's behalf (elicitation,
    /// sampling, roots); default [`DEFAULT_INPUT_TIMEOUT`](super::legacy::DEFAULT_INPUT_TIMEOUT).
    /// At most one day.
    pub fn input_timeout(mut self, timeout: Duration) -> Self {
        self.input_timeout = timeout.min(Duration::from_secs(24 * 60 * 60));
        self
    }

    /// Runs tasks (the `io.modelcontextprotocol/tasks` extension) with these
    /// settings and store; see [`crate::task`]. Without this call a server
    /// whose tools support tasks keeps them in a
    /// [`MemoryTaskStore`](crate::task::MemoryTaskStore).
    pub fn tasks(mut self, options: TaskOptions) -> Self {
        self.tasks = Some(options);
        self
    }

    /// Advertises `capability` even while the server has no component of
    /// that kind: for a server whose components change at run time (a
    /// proxy whose backends come and go), so that the capabilities its
    /// clients learned stay true and its list methods keep answering.
    pub fn declare(mut self, capability: Capability) -> Self {
        self.declared = self.declared.with(capability);
        self
    }

    /// Checks every component and compiles the server.
    ///
    /// Called inside a Tokio runtime, it also starts the server's background
    /// work (with tasks: the sweeper that recovers the tasks of a stopped
    /// node and purges expired ones); a server built outside one starts it
    /// when a transport starts serving it.
    pub fn build(#[allow(unused_mut)] mut self) -> Result<Server, BuildError> {
        #[cfg(feature = "skills")]
        if let Some(skills) = self.skills.take() {
            for file in skills.files() {
                let resource = super::skills::FileResource(file.clone());
                self.resources.push(ResourceEntry::new(resource));
            }
            self.extensions
                .push(Arc::new(super::skills::SkillsExtension {
                    skills,
                    list_cache: self.list_cache,
                    read_cache: self.read_cache,
                    page_size: self.page_size,
                    policy: self.policy.clone(),
                }));
        }
        if self.page_size == 0 {
            return Err(BuildError::Config("page size must be at least 1".into()));
        }
        if self.revisions.is_empty() {
            return Err(BuildError::Config(
                "the server must serve at least one protocol revision".into(),
            ));
        }
        let mut tools = Vec::with_capacity(self.tools.len());
        for make in self.tools {
            tools.push(make(self.validator.as_ref())?);
        }
        let mut resources = self.resources.into_iter().collect::<Result<Vec<_>, _>>()?;
        let mut prompts = self.prompts.into_iter().collect::<Result<Vec<_>, _>>()?;
        for scope in &self.scopes.default {
            snodo_rules::check_scope(scope)
                .map_err(|e| BuildError::Config(format!("default scopes: {}", e.message)))?;
        }
        for (kind, name, scopes) in self.scope_overrides {
            for scope in &scopes {
                snodo_rules::check_scope(scope).map_err(|e| {
                    BuildError::Config(format!("scopes of {kind} {name:?}: {}", e.message))
                })?;
            }
            let slot = match kind {
                "tool" => tools
                    .iter_mut()
                    .find(|t| t.name() == name)
                    .map(|t| &mut t.scopes),
                "resource" => resources
                    .iter_mut()
                    .find(|r| {
                        r.uri.as_deref() == Some(name.as_str())
                            || r.listed.get("uriTemplate").and_then(Value::as_str)
                                == Some(name.as_str())
                    })
                    .map(|r| &mut r.scopes),
                _ => prompts
                    .iter_mut()
                    .find(|p| p.name == name)
                    .map(|p| &mut p.scopes),
            };
            match slot {
                Some(slot) => *slot = scopes,
                None => {
                    return Err(BuildError::Config(format!(
                        "scopes set for {kind} {name:?}, which is not registered"
                    )));
                }
            }
        }
        for tool in &tools {
            state_needs::check("tool", tool.name(), &tool.needs, &self.state_types)?;
        }
        for resource in &resources {
            state_needs::check(
                "resource",
                &resource.name,
                &resource.needs,
                &self.state_types,
            )?;
        }
        for prompt in &prompts {
            state_needs::check("prompt", &prompt.name, &prompt.needs, &self.state_types)?;
        }
        let tools: Vec<Arc<ToolEntry>> = tools.into_iter().map(Arc::new).collect();
        let tasks = self.tasks.or_else(|| {
            tools
                .iter()
                .any(|t| t.task != crate::task::TaskSupport::Never)
                .then(TaskOptions::memory)
        });
        let catalog = Catalog::new(
            tools,
            resources,
            prompts,
            self.extensions,
            tasks.is_some(),
            self.declared,
        )?;
        let tasks = match tasks {
            Some(options) => Some(Arc::new(
                super::tasks::engine::Engine::new(options).map_err(BuildError::Random)?,
            )),
            None => None,
        };
        let info = Value::Object(self.info);
        let result_tail = format!(
            "\"resultType\":\"complete\",\"_meta\":{{{}:{}}}",
            Value::from(crate::protocol::keys::SERVER_INFO),
            info
        );
        let server = Server {
            inner: Arc::new(Inner {
                info,
                result_tail,
                instructions: self.instructions,
                catalog: RwLock::new(Arc::new(catalog)),
                validator: self.validator,
                policy: self.policy,
                scopes: self.scopes,
                events: self.events.unwrap_or_default(),
                state: Arc::new(self.state),
                state_types: self.state_types,
                discover_cache: self.discover_cache,
                list_cache: self.list_cache,
                read_cache: self.read_cache,
                page_size: self.page_size,
                listen_shares: super::shares::ShareCounts::new(self.subscriptions_per_share),
                limits: self.limits,
                revisions: self.revisions,
                input_timeout: self.input_timeout,
                request_timeout: self.request_timeout,
                tasks,
                capture: self.capture,
                declared: self.declared,
            }),
        };
        server.start_background();
        Ok(server)
    }
}

impl Server {
    /// Starts building a server with the name and version it reports in
    /// `io.modelcontextprotocol/serverInfo`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name.into(), version.into())
    }
}
