//! Listing a backend: the kinds of component a backend lists (one list
//! change names one kind), and its components of those kinds as the
//! proxy's forwarding components. Each listing is bounded by the backend
//! client's listing limits
//! ([`ClientBuilder::max_listing_items`](crate::client::ClientBuilder::max_listing_items),
//! [`max_listing_bytes`](crate::client::ClientBuilder::max_listing_bytes)).

use std::sync::Arc;

use serde_json::Value;

use super::flight::Link;
use super::forward::{ForwardPrompt, ForwardResource, ForwardTool, Listed};
use super::pins;
use super::shaping::{Component, Shaping};
use crate::client::ClientError;
use crate::prompt::PromptDefinition;

/// The most resources whose updates one backend's subscription follows.
pub const MAX_FOLLOWED: usize = 256;

/// A set of the kinds of component a backend lists: tools, prompts, and
/// resources (fixed ones and templates, which change together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Kinds(u8);

impl Kinds {
    pub(crate) const TOOLS: Kinds = Kinds(1);
    pub(crate) const PROMPTS: Kinds = Kinds(2);
    pub(crate) const RESOURCES: Kinds = Kinds(4);
    pub(crate) const ALL: Kinds = Kinds(7);

    /// The kinds a change notification says have changed (every kind for a
    /// method this proxy does not know).
    pub(crate) fn changed_by(method: &str) -> Kinds {
        match method {
            "notifications/tools/list_changed" => Kinds::TOOLS,
            "notifications/prompts/list_changed" => Kinds::PROMPTS,
            "notifications/resources/list_changed" => Kinds::RESOURCES,
            _ => Kinds::ALL,
        }
    }

    pub(crate) fn contains(self, other: Kinds) -> bool {
        self.0 & other.0 == other.0
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub(crate) fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }
}

/// A backend's components of the kinds listed now; `None` for a kind not
/// listed this time.
pub(crate) struct Listing {
    pub(crate) tools: Option<Vec<ForwardTool>>,
    pub(crate) resources: Option<Vec<ForwardResource>>,
    pub(crate) prompts: Option<Vec<ForwardPrompt>>,
    /// The backend URIs of the fixed resources whose updates are followed
    /// (at most [`MAX_FOLLOWED`]), when resources were listed.
    pub(crate) followed: Option<Vec<String>>,
}

/// Lists `kinds` of backend `link` (a kind its server does not offer lists
/// as empty), as `shaping` serves them.
pub(crate) async fn list(
    link: &Arc<Link>,
    kinds: Kinds,
    shaping: &Arc<Shaping>,
) -> Result<Listing, ClientError> {
    let client = &link.client;
    let caps = client.server_capabilities();
    let offers = |key: &str| caps.get(key).is_some();
    let mut out = Listing {
        tools: None,
        resources: None,
        prompts: None,
        followed: None,
    };
    // Each pinned definition's key and hash, as the backend listed it.
    let pinning = shaping.pins().is_some();
    let mut pinned: Vec<(String, String)> = Vec::new();
    if kinds.contains(Kinds::TOOLS) {
        let mut tools = Vec::new();
        if offers("tools") {
            for mut definition in client.list_tools().await? {
                if !shaping.shows(Component::Tool, &[&definition.name]) {
                    continue;
                }
                let hash = pinning.then(|| tool_hash(&definition));
                let remote = std::mem::take(&mut definition.name);
                definition.name = link.naming.name(shaping.served_name(&remote));
                if let Some(meta) = definition.meta.as_mut() {
                    link.naming.tool_meta(meta);
                }
                if let Some(hash) = hash {
                    pinned.push((format!("tool:{}", definition.name), hash));
                }
                let injections = shaping.injections(&mut definition.input_schema);
                tools.push(ForwardTool {
                    link: link.clone(),
                    definition,
                    remote,
                    injections,
                    shaping: shaping.clone(),
                });
            }
        }
        out.tools = Some(tools);
    }
    if kinds.contains(Kinds::PROMPTS) {
        let mut prompts = Vec::new();
        if offers("prompts") {
            for listed in client.list_prompts().await? {
                if shaping.shows(Component::Prompt, &[&listed.name]) {
                    let hash = pinning.then(|| prompt_hash(&listed));
                    let prompt = prompt(link, listed, shaping);
                    if let Some(hash) = hash {
                        pinned.push((format!("prompt:{}", prompt.definition.name), hash));
                    }
                    prompts.push(prompt);
                }
            }
        }
        out.prompts = Some(prompts);
    }
    if kinds.contains(Kinds::RESOURCES) {
        let (mut resources, mut followed) = (Vec::new(), Vec::new());
        if offers("resources") {
            let shown = |listed: &Listed| {
                let names = [listed.name().unwrap_or_default(), listed.uri()];
                shaping.shows(Component::Resource, &names)
            };
            // A fixed resource left out stays out of reach through a
            // template that would serve its URI.
            let mut hidden = std::collections::HashSet::new();
            let fixed: Vec<Listed> = client
                .list_resources()
                .await?
                .into_iter()
                .map(Listed::Fixed)
                .filter(|listed| {
                    let keep = shown(listed);
                    if !keep {
                        hidden.insert(super::shaping::uri_key(listed.uri()));
                    }
                    keep
                })
                .collect();
            let hidden = Arc::new(hidden);
            followed = fixed
                .iter()
                .map(|r| r.uri().to_owned())
                .take(MAX_FOLLOWED)
                .collect();
            let templates = client.list_resource_templates().await?;
            let templates = templates.into_iter().map(Listed::Template).filter(shown);
            for listed in fixed.into_iter().chain(templates) {
                let hash = match &listed {
                    Listed::Template(t) if pinning => Some(template_hash(t)),
                    _ => None,
                };
                let resource = resource(link, listed, shaping, &hidden);
                if let Some(hash) = hash {
                    pinned.push((format!("template:{}", resource.uri), hash));
                }
                resources.push(resource);
            }
        }
        out.resources = Some(resources);
        out.followed = Some(followed);
    }
    if let Some(store) = shaping.pins() {
        let (withdrawn, new) = store.check(&pinned);
        if new > 0 {
            link.stats.withdrawn(&link.id, new);
        }
        if !withdrawn.is_empty() {
            let out_of = |key: String| withdrawn.contains(&key);
            if let Some(tools) = &mut out.tools {
                tools.retain(|t| !out_of(format!("tool:{}", t.definition.name)));
            }
            if let Some(prompts) = &mut out.prompts {
                prompts.retain(|p| !out_of(format!("prompt:{}", p.definition.name)));
            }
            if let Some(resources) = &mut out.resources {
                resources.retain(|r| {
                    !matches!(r.listed, Listed::Template(_))
                        || !out_of(format!("template:{}", r.uri))
                });
            }
        }
    }
    Ok(out)
}

fn text(value: &Option<String>) -> Option<Value> {
    value.clone().map(Value::String)
}

fn tool_hash(d: &crate::tool::ToolDefinition) -> String {
    pins::hash(
        "tool",
        pins::members(&[
            ("name", Some(Value::String(d.name.clone()))),
            ("title", text(&d.title)),
            ("description", text(&d.description)),
            ("inputSchema", Some(d.input_schema.clone())),
            ("outputSchema", d.output_schema.clone()),
            ("annotations", d.annotations.clone()),
        ]),
    )
}

fn prompt_hash(d: &PromptDefinition) -> String {
    pins::hash(
        "prompt",
        pins::members(&[
            ("name", Some(Value::String(d.name.clone()))),
            ("title", text(&d.title)),
            ("description", text(&d.description)),
            ("arguments", serde_json::to_value(&d.arguments).ok()),
        ]),
    )
}

fn template_hash(d: &crate::resource::TemplateDefinition) -> String {
    pins::hash(
        "template",
        pins::members(&[
            ("uriTemplate", Some(Value::String(d.uri_template.clone()))),
            ("name", Some(Value::String(d.name.clone()))),
            ("title", text(&d.title)),
            ("description", text(&d.description)),
            ("mimeType", text(&d.mime_type)),
            ("annotations", d.annotations.clone()),
        ]),
    )
}

fn prompt(
    link: &Arc<Link>,
    mut definition: PromptDefinition,
    shaping: &Arc<Shaping>,
) -> ForwardPrompt {
    let remote = std::mem::take(&mut definition.name);
    definition.name = link.naming.name(shaping.served_name(&remote));
    ForwardPrompt {
        link: link.clone(),
        remote,
        definition,
        shaping: shaping.clone(),
    }
}

fn resource(
    link: &Arc<Link>,
    listed: Listed,
    shaping: &Arc<Shaping>,
    hidden: &Arc<std::collections::HashSet<String>>,
) -> ForwardResource {
    let remote = listed.uri().to_owned();
    let name = link.naming.name(listed.name().unwrap_or(&remote));
    ForwardResource {
        link: link.clone(),
        uri: link.naming.uri(&remote),
        remote,
        name,
        listed,
        shaping: shaping.clone(),
        hidden: hidden.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_names_its_kind() {
        assert_eq!(
            Kinds::changed_by("notifications/tools/list_changed"),
            Kinds::TOOLS
        );
        assert_eq!(
            Kinds::changed_by("notifications/resources/list_changed"),
            Kinds::RESOURCES
        );
        assert_eq!(Kinds::changed_by("notifications/other"), Kinds::ALL);
        let both = Kinds::TOOLS.union(Kinds::PROMPTS);
        assert!(both.contains(Kinds::TOOLS) && both.contains(Kinds::PROMPTS));
        assert!(!both.contains(Kinds::RESOURCES) && !both.is_empty());
        assert!(Kinds::default().is_empty() && Kinds::ALL.contains(both));
    }
}
