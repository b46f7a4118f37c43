//! The catalog: every registered component, checked and compiled once.
//!
//! A catalog is immutable; a runtime change builds a new one and swaps it in
//! (see [`Server::add_tool`](super::Server::add_tool)).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::error::BuildError;
use super::extension::Extension;
use super::list::{Listed, Listing, Written};
use super::registry::{ToolEntry, ToolRegistry};
use crate::Context;
use crate::error::HandlerError;
use crate::prompt::{Prompt, PromptArgument, PromptArguments, PromptResult};
use crate::resource::{ReadRequest, ReadResult, Resource, UriTemplate};
use crate::tool::BoxFuture;

/// The object-safe form of [`Resource`].
pub(crate) trait DynResource: Send + Sync + 'static {
    fn read_boxed(
        &self,
        req: ReadRequest,
        cx: Context,
    ) -> BoxFuture<'_, Result<ReadResult, HandlerError>>;
    fn complete_boxed<'a>(
        &'a self,
        var: &'a str,
        value: &'a str,
        context: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Vec<String>>;
}

impl<R: Resource> DynResource for R {
    fn read_boxed(
        &self,
        req: ReadRequest,
        cx: Context,
    ) -> BoxFuture<'_, Result<ReadResult, HandlerError>> {
        Box::pin(self.read(req, cx))
    }
    fn complete_boxed<'a>(
        &'a self,
        var: &'a str,
        value: &'a str,
        context: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Vec<String>> {
        Box::pin(self.complete(var, value, context))
    }
}

/// The object-safe form of [`Prompt`].
pub(crate) trait DynPrompt: Send + Sync + 'static {
    fn get_boxed(
        &self,
        args: PromptArguments,
        cx: Context,
    ) -> BoxFuture<'_, Result<PromptResult, HandlerError>>;
    fn complete_boxed<'a>(
        &'a self,
        arg: &'a str,
        value: &'a str,
        context: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Vec<String>>;
}

impl<P: Prompt> DynPrompt for P {
    fn get_boxed(
        &self,
        args: PromptArguments,
        cx: Context,
    ) -> BoxFuture<'_, Result<PromptResult, HandlerError>> {
        Box::pin(self.get(args, cx))
    }
    fn complete_boxed<'a>(
        &'a self,
        arg: &'a str,
        value: &'a str,
        context: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Vec<String>> {
        Box::pin(self.complete(arg, value, context))
    }
}

/// A resource as registered: metadata read once, and the erased component.
#[derive(Clone)]
pub(crate) struct ResourceEntry {
    pub(crate) name: String,
    pub(crate) uri: Option<String>,
    pub(crate) template: Option<Arc<UriTemplate>>,
    pub(crate) listed: Value,
    pub(crate) completes: bool,
    pub(crate) component: Arc<dyn DynResource>,
    /// The OAuth scopes a read needs (empty: the server's defaults).
    pub(crate) scopes: Vec<String>,
    /// The registered state the handler needs.
    pub(crate) needs: Vec<crate::extract::StateNeed>,
}

impl ResourceEntry {
    pub(crate) fn new<R: Resource>(resource: R) -> Result<Self, BuildError> {
        let name = resource.name().to_string();
        let fail = |rule: snodo_rules::RuleError| BuildError::Component {
            kind: "resource",
            name: name.clone(),
            rule,
        };
        let shape = snodo_rules::ResourceShape {
            name: &name,
            uri: resource.uri(),
            uri_template: resource.uri_template(),
            has_size: resource.size().is_some(),
            completes: resource.completes(),
        };
        let template = snodo_rules::check_resource(&shape)
            .map_err(|mut broken| fail(broken.swap_remove(0)))?
            .map(Arc::new);
        let scopes = checked_scopes(resource.required_scopes()).map_err(fail)?;
        let uri = resource.uri().map(str::to_string);
        let listed = crate::resource::listed(&resource).expect("checked by the rules");
        Ok(Self {
            name,
            uri,
            template,
            listed,
            completes: resource.completes(),
            needs: resource.state_needs(),
            component: Arc::new(resource),
            scopes,
        })
    }
}

/// A prompt as registered.
#[derive(Clone)]
pub(crate) struct PromptEntry {
    pub(crate) name: String,
    pub(crate) required: Vec<String>,
    pub(crate) listed: Value,
    pub(crate) completes: bool,
    pub(crate) component: Arc<dyn DynPrompt>,
    /// The OAuth scopes a get needs (empty: the server's defaults).
    pub(crate) scopes: Vec<String>,
    /// The registered state the handler needs.
    pub(crate) needs: Vec<crate::extract::StateNeed>,
}

impl PromptEntry {
    pub(crate) fn new<P: Prompt>(prompt: P) -> Result<Self, BuildError> {
        let name = prompt.name().to_string();
        let fail = |rule: snodo_rules::RuleError| BuildError::Component {
            kind: "prompt",
            name: name.clone(),
            rule,
        };
        let arguments: Vec<PromptArgument> = prompt.arguments();
        let declared = serde_json::to_value(&arguments).unwrap_or_default();
        let shape = snodo_rules::PromptShape {
            name: &name,
            arguments: Some(&declared),
            completes: prompt.completes(),
        };
        snodo_rules::check_prompt(&shape).map_err(|mut broken| fail(broken.swap_remove(0)))?;
        let scopes = checked_scopes(prompt.required_scopes()).map_err(fail)?;
        let listed = serde_json::to_value(crate::prompt::definition(&prompt))
            .expect("a prompt's definition is JSON");
        Ok(Self {
            required: arguments
                .iter()
                .filter(|a| a.required)
                .map(|a| a.name.clone())
                .collect(),
            name,
            listed,
            completes: prompt.completes(),
            needs: prompt.state_needs(),
            component: Arc::new(prompt),
            scopes,
        })
    }
}

/// `scopes`, each checked as an OAuth scope token.
fn checked_scopes(scopes: Vec<String>) -> Result<Vec<String>, snodo_rules::RuleError> {
    for scope in &scopes {
        snodo_rules::check_scope(scope)?;
    }
    Ok(scopes)
}

/// The components a catalog is built from.
pub(crate) type Parts = (
    Vec<Arc<ToolEntry>>,
    Vec<ResourceEntry>,
    Vec<PromptEntry>,
    Vec<Arc<dyn Extension>>,
);

/// Every component, indexed, with the lists pre-serialized.
pub(crate) struct Catalog {
    pub(crate) tools: ToolRegistry,
    pub(crate) resources: Vec<ResourceEntry>,
    pub(crate) templates: Vec<ResourceEntry>,
    pub(crate) resource_index: HashMap<String, usize>,
    pub(crate) prompts: Vec<PromptEntry>,
    pub(crate) prompt_index: HashMap<String, usize>,
    pub(crate) resource_list: Listing,
    pub(crate) template_list: Listing,
    pub(crate) prompt_list: Listing,
    pub(crate) extensions: Vec<Arc<dyn Extension>>,
    pub(crate) extension_methods: HashMap<String, usize>,
    pub(crate) capabilities: Value,
}

impl Catalog {
    pub(crate) fn new(
        tools: Vec<Arc<ToolEntry>>,
        resources: Vec<ResourceEntry>,
        prompts: Vec<PromptEntry>,
        extensions: Vec<Arc<dyn Extension>>,
        tasks: bool,
        declared: Declared,
    ) -> Result<Self, BuildError> {
        let tools = ToolRegistry::new(tools)?;
        let (mut fixed, mut templates): (Vec<_>, Vec<_>) =
            resources.into_iter().partition(|r| r.uri.is_some());
        let mut names = HashSet::new();
        for r in fixed.iter().chain(&templates) {
            if !names.insert(r.name.clone()) {
                return Err(BuildError::Component {
                    kind: "resource",
                    name: r.name.clone(),
                    rule: "name is registered twice".into(),
                });
            }
        }
        fixed.sort_by(|a, b| a.uri.cmp(&b.uri));
        templates.sort_by(|a, b| a.name.cmp(&b.name));
        let mut resource_index = HashMap::new();
        for (i, r) in fixed.iter().enumerate() {
            let uri = r.uri.clone().unwrap_or_default();
            if resource_index.insert(uri.clone(), i).is_some() {
                return Err(BuildError::Component {
                    kind: "resource",
                    name: r.name.clone(),
                    rule: format!("uri {uri:?} is registered twice").into(),
                });
            }
            if let Some(t) = templates.iter().find(|t| {
                t.template
                    .as_ref()
                    .is_some_and(|t| t.matches(&uri).is_some())
            }) {
                return Err(BuildError::Component {
                    kind: "resource",
                    name: r.name.clone(),
                    rule: format!(
                        "uri {uri:?} is already matched by the template of `{}`",
                        t.name
                    )
                    .into(),
                });
            }
        }
        let mut seen_templates = HashSet::new();
        for t in &templates {
            let text = t
                .template
                .as_ref()
                .map(|t| t.as_str().to_string())
                .unwrap_or_default();
            if !seen_templates.insert(text.clone()) {
                return Err(BuildError::Component {
                    kind: "resource",
                    name: t.name.clone(),
                    rule: format!("uri template {text:?} is registered twice").into(),
                });
            }
        }
        let mut prompts = prompts;
        prompts.sort_by(|a, b| a.name.cmp(&b.name));
        let mut prompt_index = HashMap::new();
        for (i, p) in prompts.iter().enumerate() {
            if prompt_index.insert(p.name.clone(), i).is_some() {
                return Err(BuildError::Component {
                    kind: "prompt",
                    name: p.name.clone(),
                    rule: "name is registered twice".into(),
                });
            }
        }
        let mut extension_methods = HashMap::new();
        let mut ext_caps = Map::new();
        for (i, ext) in extensions.iter().enumerate() {
            let name = ext.name().to_string();
            if !name.contains('/') || ext_caps.contains_key(&name) {
                return Err(BuildError::Component {
                    kind: "extension",
                    name,
                    rule: "names contain a '/' and are unique".into(),
                });
            }
            for method in ext.methods() {
                if crate::protocol::Method::parse(&method).is_some()
                    || extension_methods.insert(method.clone(), i).is_some()
                {
                    return Err(BuildError::Component {
                        kind: "extension",
                        name,
                        rule: format!("method {method:?} is already taken").into(),
                    });
                }
            }
            ext_caps.insert(name, ext.settings());
        }
        let completes = resources_complete(&templates) || prompts.iter().any(|p| p.completes);
        let mut caps = Map::new();
        if !tools.is_empty() || declared.has(Capability::Tools) {
            caps.insert("tools".into(), json!({"listChanged": true}));
        }
        if !fixed.is_empty() || !templates.is_empty() || declared.has(Capability::Resources) {
            caps.insert(
                "resources".into(),
                json!({"subscribe": true, "listChanged": true}),
            );
        }
        if !prompts.is_empty() || declared.has(Capability::Prompts) {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        if completes || declared.has(Capability::Completions) {
            caps.insert("completions".into(), json!({}));
        }
        caps.insert("logging".into(), json!({}));
        if tasks {
            if ext_caps.contains_key(crate::task::EXTENSION) {
                return Err(BuildError::Component {
                    kind: "extension",
                    name: crate::task::EXTENSION.into(),
                    rule: "is built in: enable it with ServerBuilder::tasks".into(),
                });
            }
            ext_caps.insert(crate::task::EXTENSION.into(), json!({}));
        }
        let resource_list = listing(fixed.iter().map(|r| &r.listed), "uri");
        // MCP Apps are declared by using them: a tool bound to an app, or an
        // app resource.
        if (tools.listing.uses_apps() || resource_list.uses_apps())
            && !ext_caps.contains_key(crate::apps::EXTENSION)
        {
            ext_caps.insert(crate::apps::EXTENSION.into(), json!({}));
        }
        if !ext_caps.is_empty() {
            caps.insert("extensions".into(), Value::Object(ext_caps));
        }
        Ok(Self {
            resource_list,
            template_list: listing(templates.iter().map(|r| &r.listed), "uriTemplate"),
            prompt_list: listing(prompts.iter().map(|p| &p.listed), "name"),
            tools,
            resources: fixed,
            templates,
            resource_index,
            prompts,
            prompt_index,
            extensions,
            extension_methods,
            capabilities: Value::Object(caps),
        })
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// The parts a new catalog is built from.
    pub(crate) fn parts(&self) -> Parts {
        (
            self.tools.entries().to_vec(),
            self.resources
                .iter()
                .chain(&self.templates)
                .cloned()
                .collect(),
            self.prompts.clone(),
            self.extensions.clone(),
        )
    }
}

fn resources_complete(templates: &[ResourceEntry]) -> bool {
    templates.iter().any(|t| t.completes)
}

/// A kind of component a server can advertise while it has none of it
/// ([`ServerBuilder::declare`](super::ServerBuilder::declare)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Capability {
    /// `tools`.
    Tools,
    /// `resources`.
    Resources,
    /// `prompts`.
    Prompts,
    /// `completions`.
    Completions,
}

/// The kinds declared with [`Capability`], as bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Declared(u8);

impl Declared {
    pub(crate) fn with(self, c: Capability) -> Self {
        Declared(self.0 | 1 << c as u8)
    }

    pub(crate) fn has(self, c: Capability) -> bool {
        self.0 & (1 << c as u8) != 0
    }
}

/// The listing of items keyed by their member `key`.
fn listing<'a>(items: impl Iterator<Item = &'a Value>, key: &str) -> Listing {
    let listed: Vec<Listed> = items
        .map(|item| Listed::new(item, &Written::new(), key))
        .collect();
    Listing::new(&listed)
}
