//! The server: an immutable, cheaply cloned handle on the registry and its
//! settings. Requests are handled by the `impl Server` blocks of `dispatch`,
//! `listen`, `complete` and the transports.

#[cfg(feature = "client")]
use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::catalog::{Catalog, PromptEntry, ResourceEntry};
use super::error::BuildError;
use super::policy;
use super::registry::ToolEntry;
use crate::events::EventHub;
use crate::prompt::Prompt;
use crate::protocol::CacheHints;
use crate::resource::Resource;
use crate::schema::Validator;
use crate::tool::Tool;
use crate::wire::Limits;

/// An MCP server: cheap to clone, immutable once built (except for the
/// explicit runtime-change methods).
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) info: Value,
    /// `"resultType":"complete","_meta":{serverInfo}`, encoded once for
    /// results spliced from encoded parts.
    pub(crate) result_tail: String,
    pub(crate) instructions: Option<String>,
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    pub(crate) validator: Arc<dyn Validator>,
    pub(crate) policy: Option<Arc<dyn policy::Policy>>,
    /// Required OAuth scopes: defaults, list hiding, hierarchy.
    pub(crate) scopes: super::scope_policy::ScopeRules,
    pub(crate) events: EventHub,
    /// Typed state handed to handlers through `State<S>`.
    pub(crate) state: Arc<http::Extensions>,
    /// The types in `state`, against which handlers' needs are checked.
    pub(crate) state_types: std::collections::HashSet<std::any::TypeId>,
    pub(crate) discover_cache: CacheHints,
    pub(crate) list_cache: CacheHints,
    pub(crate) read_cache: CacheHints,
    pub(crate) page_size: usize,
    /// Listen streams each share holds open.
    pub(crate) listen_shares: super::shares::ShareCounts,
    pub(crate) limits: Limits,
    /// The revisions served, newest first.
    pub(crate) revisions: Vec<crate::protocol::Revision>,
    /// How long a request may run before it fails with `Request timed out`.
    pub(crate) request_timeout: std::time::Duration,
    /// How long the input-required shim waits for a legacy client's answer.
    pub(crate) input_timeout: std::time::Duration,
    /// The Tasks extension's engine, when the server runs tasks.
    pub(crate) tasks: Option<Arc<super::tasks::engine::Engine>>,
    /// What request spans record beyond the defaults.
    pub(crate) capture: crate::telemetry::Capture,
    /// Kinds advertised even without a component.
    pub(crate) declared: super::catalog::Declared,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.catalog().tools.len())
            .finish()
    }
}

impl Server {
    /// The server's `Implementation` object (`name`, `version`, ...).
    pub fn info(&self) -> &Value {
        &self.inner.info
    }

    /// The capabilities `server/discover` advertises.
    pub fn capabilities(&self) -> Value {
        self.catalog().capabilities.clone()
    }

    /// How long a request may run, on every transport, before its handler is
    /// cancelled and the request fails with `-32603 Request timed out`
    /// (`subscriptions/listen` streams excepted: they stay open until
    /// cancelled).
    pub fn request_timeout(&self) -> std::time::Duration {
        self.inner.request_timeout
    }

    /// The decoding limits transports apply to incoming messages.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The event hub: announce resource updates, or end every listen stream
    /// with [`EventHub::shutdown`].
    pub fn events(&self) -> &EventHub {
        &self.inner.events
    }

    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.inner
            .catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replaces the catalog with one built from modified parts.
    fn change(
        &self,
        edit: impl FnOnce(
            &mut Vec<Arc<ToolEntry>>,
            &mut Vec<ResourceEntry>,
            &mut Vec<PromptEntry>,
        ) -> Result<bool, BuildError>,
    ) -> Result<bool, BuildError> {
        let mut slot = self
            .inner
            .catalog
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let (mut tools, mut resources, mut prompts, extensions) = slot.parts();
        if !edit(&mut tools, &mut resources, &mut prompts)? {
            return Ok(false);
        }
        if self.inner.tasks.is_none()
            && let Some(t) = tools
                .iter()
                .find(|t| t.task != crate::task::TaskSupport::Never)
        {
            return Err(BuildError::Config(format!(
                "tool {:?} runs as a task, and this server was built without tasks (ServerBuilder::tasks)",
                t.name()
            )));
        }
        let tasks = self.inner.tasks.is_some();
        *slot = Arc::new(Catalog::new(
            tools,
            resources,
            prompts,
            extensions,
            tasks,
            self.inner.declared,
        )?);
        Ok(true)
    }

    /// Replaces the components of one owner (a proxy's backend) in a single
    /// change: for each kind given (`Some`), those `old` names are removed
    /// and the new ones added, and `list_changed` is announced when either
    /// side has any; a kind not given (`None`) keeps the owner's components
    /// as they are. A component that breaks a rule is left out and its
    /// error returned with the others; a clash with another owner's
    /// component fails the whole change, which leaves the catalog as it was.
    #[cfg(feature = "client")]
    pub(crate) fn replace_group<T: Tool, R: Resource, P: Prompt>(
        &self,
        old: &Group,
        tools: Option<Vec<T>>,
        resources: Option<Vec<R>>,
        prompts: Option<Vec<P>>,
    ) -> Result<(Group, Vec<BuildError>), BuildError> {
        let mut refused = Vec::new();
        let tools: Option<Vec<Arc<ToolEntry>>> = tools.map(|tools| {
            tools
                .into_iter()
                .filter_map(|t| {
                    kept(
                        &mut refused,
                        ToolEntry::new(t, self.inner.validator.as_ref()),
                    )
                })
                .map(Arc::new)
                .collect()
        });
        let resources: Option<Vec<ResourceEntry>> = resources.map(|resources| {
            resources
                .into_iter()
                .filter_map(|r| kept(&mut refused, ResourceEntry::new(r)))
                .collect()
        });
        let prompts: Option<Vec<PromptEntry>> = prompts.map(|prompts| {
            prompts
                .into_iter()
                .filter_map(|p| kept(&mut refused, PromptEntry::new(p)))
                .collect()
        });
        let group = Group {
            tools: match &tools {
                Some(tools) => tools.iter().map(|t| t.name().to_string()).collect(),
                None => old.tools.clone(),
            },
            resources: match &resources {
                Some(resources) => resources
                    .iter()
                    .map(|r| resource_key(r).to_owned())
                    .collect(),
                None => old.resources.clone(),
            },
            prompts: match &prompts {
                Some(prompts) => prompts.iter().map(|p| p.name.clone()).collect(),
                None => old.prompts.clone(),
            },
        };
        let changed = (
            tools.is_some() && !(old.tools.is_empty() && group.tools.is_empty()),
            resources.is_some() && !(old.resources.is_empty() && group.resources.is_empty()),
            prompts.is_some() && !(old.prompts.is_empty() && group.prompts.is_empty()),
        );
        // Looked up by hash: an owner may hold thousands of names.
        let names = |list: &[String]| -> HashSet<String> { list.iter().cloned().collect() };
        let (old_tools, old_resources, old_prompts) = (
            names(&old.tools),
            names(&old.resources),
            names(&old.prompts),
        );
        self.change(|all_tools, all_resources, all_prompts| {
            if let Some(tools) = tools {
                all_tools.retain(|t| !old_tools.contains(t.name()));
                all_tools.extend(tools);
            }
            if let Some(resources) = resources {
                all_resources.retain(|r| !old_resources.contains(resource_key(r)));
                all_resources.extend(resources);
            }
            if let Some(prompts) = prompts {
                all_prompts.retain(|p| !old_prompts.contains(&p.name));
                all_prompts.extend(prompts);
            }
            Ok(true)
        })?;
        let events = &self.inner.events;
        if changed.0 {
            events.tools_changed();
        }
        if changed.1 {
            events.resources_changed();
        }
        if changed.2 {
            events.prompts_changed();
        }
        Ok((group, refused))
    }

    /// Adds a tool at runtime, invalidates `tools/list` cursors and announces
    /// `notifications/tools/list_changed` to listeners.
    pub fn add_tool<T: Tool>(&self, tool: T) -> Result<(), BuildError> {
        let entry = Arc::new(ToolEntry::new(tool, self.inner.validator.as_ref())?);
        let given = &self.inner.state_types;
        super::state_needs::check("tool", entry.name(), &entry.needs, given)?;
        self.change(|tools, _, _| {
            tools.push(entry);
            Ok(true)
        })?;
        self.inner.events.tools_changed();
        Ok(())
    }

    /// Removes a tool at runtime; returns whether it was registered.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self
            .change(|tools, _, _| {
                let before = tools.len();
                tools.retain(|t| t.name() != name);
                Ok(tools.len() != before)
            })
            .unwrap_or(false);
        if removed {
            self.inner.events.tools_changed();
        }
        removed
    }

    /// Adds a resource or template at runtime and announces the change.
    pub fn add_resource<R: Resource>(&self, resource: R) -> Result<(), BuildError> {
        let entry = ResourceEntry::new(resource)?;
        let given = &self.inner.state_types;
        super::state_needs::check("resource", &entry.name, &entry.needs, given)?;
        self.change(|_, resources, _| {
            resources.push(entry);
            Ok(true)
        })?;
        self.inner.events.resources_changed();
        Ok(())
    }

    /// Removes a resource or template by name; returns whether it was registered.
    pub fn remove_resource(&self, name: &str) -> bool {
        let removed = self
            .change(|_, resources, _| {
                let before = resources.len();
                resources.retain(|r| r.name != name);
                Ok(resources.len() != before)
            })
            .unwrap_or(false);
        if removed {
            self.inner.events.resources_changed();
        }
        removed
    }

    /// Adds a prompt at runtime and announces the change.
    pub fn add_prompt<P: Prompt>(&self, prompt: P) -> Result<(), BuildError> {
        let entry = PromptEntry::new(prompt)?;
        let given = &self.inner.state_types;
        super::state_needs::check("prompt", &entry.name, &entry.needs, given)?;
        self.change(|_, _, prompts| {
            prompts.push(entry);
            Ok(true)
        })?;
        self.inner.events.prompts_changed();
        Ok(())
    }

    /// Removes a prompt by name; returns whether it was registered.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self
            .change(|_, _, prompts| {
                let before = prompts.len();
                prompts.retain(|p| p.name != name);
                Ok(prompts.len() != before)
            })
            .unwrap_or(false);
        if removed {
            self.inner.events.prompts_changed();
        }
        removed
    }
}

/// The names of the components one owner registered (see
/// [`Server::replace_group`]): tool and prompt names, resource URIs and
/// URI templates.
#[cfg(feature = "client")]
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) tools: Vec<String>,
    pub(crate) resources: Vec<String>,
    pub(crate) prompts: Vec<String>,
}

/// A resource's URI or URI template, as listed.
#[cfg(feature = "client")]
fn resource_key(r: &ResourceEntry) -> &str {
    let listed = &r.listed;
    listed
        .get("uri")
        .or_else(|| listed.get("uriTemplate"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The value, or `None` with the error kept in `refused`.
#[cfg(feature = "client")]
fn kept<E>(refused: &mut Vec<BuildError>, r: Result<E, BuildError>) -> Option<E> {
    r.map_err(|e| refused.push(e)).ok()
}
