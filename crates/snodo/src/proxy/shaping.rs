//! What of a backend a proxy serves, and how: name patterns that expose or
//! hide its tools, prompts and resources, aliases for its tools and
//! prompts, arguments injected into its tool calls, and a bound on the
//! arguments a caller sends it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::glob::{self, Glob};
use super::pins::PinStore;

/// A kind of component a backend lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Component {
    /// Tools (matched by name).
    Tool,
    /// Prompts (matched by name).
    Prompt,
    /// Resources and resource templates (matched by name or URI).
    Resource,
}

impl Component {
    /// The three kinds.
    pub const ALL: [Component; 3] = [Component::Tool, Component::Prompt, Component::Resource];

    fn index(self) -> usize {
        match self {
            Component::Tool => 0,
            Component::Prompt => 1,
            Component::Resource => 2,
        }
    }
}

/// How one backend is served: set with
/// [`Proxy::shape`](super::Proxy::shape) before the backend is added.
/// Patterns ([`Glob`]) and aliases are over the backend's own names (before
/// namespacing). The default serves everything as listed.
///
/// ```
/// use serde_json::json;
/// use snodo::proxy::{Component, Glob, Shaping};
///
/// let shaping = Shaping::new()
///     .expose(Component::Tool, [Glob::new("read_*").unwrap()])
///     .hide(Component::Tool, [Glob::new("read_secrets").unwrap()])
///     .alias("read_file", "read")
///     .inject("root", json!("/srv"))
///     .inject_override("tenant", json!("acme"))
///     .max_argument_bytes(64 * 1024);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shaping {
    /// Per kind: `Some` keeps only what a pattern matches.
    expose: [Option<Vec<Glob>>; 3],
    hide: [Vec<Glob>; 3],
    alias: BTreeMap<String, String>,
    inject: Map<String, Value>,
    inject_override: Map<String, Value>,
    max_argument_bytes: Option<usize>,
    pins: Option<PinStore>,
    forward_identity: bool,
}

/// An argument a tool's calls receive.
#[derive(Debug, Clone)]
pub(crate) struct Injection {
    name: String,
    value: Value,
    /// The caller's value is replaced (not only a missing one filled in).
    overrides: bool,
}

impl Shaping {
    /// Serves everything as listed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves only the components of `kind` that one of `patterns` matches
    /// (a resource by its name or its URI); called twice, both sets count.
    /// An empty set serves none of that kind.
    pub fn expose(mut self, kind: Component, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.expose[kind.index()]
            .get_or_insert_with(Vec::new)
            .extend(patterns);
        self
    }

    /// Leaves out the components of `kind` that one of `patterns` matches,
    /// whether exposed or not. A resource read whose URI a pattern matches
    /// is refused as not found, also when a template would serve it.
    pub fn hide(mut self, kind: Component, patterns: impl IntoIterator<Item = Glob>) -> Self {
        self.hide[kind.index()].extend(patterns);
        self
    }

    /// Serves the backend's tool or prompt `name` as `alias` (then
    /// namespaced as usual); calls to the alias reach `name`.
    pub fn alias(mut self, name: impl Into<String>, alias: impl Into<String>) -> Self {
        self.alias.insert(name.into(), alias.into());
        self
    }

    /// Gives argument `name` the value `value` in calls that leave it out,
    /// for each tool whose input schema lists `name` among its
    /// `properties`; the schema served shows it as optional with that
    /// `default`.
    pub fn inject(mut self, name: impl Into<String>, value: Value) -> Self {
        self.inject.insert(name.into(), value);
        self
    }

    /// Gives argument `name` the value `value` in every call, whatever the
    /// caller sent, for each tool whose input schema lists `name` among its
    /// `properties`; the schema served leaves it out.
    pub fn inject_override(mut self, name: impl Into<String>, value: Value) -> Self {
        self.inject_override.insert(name.into(), value);
        self
    }

    /// Refuses (`-32602`, never sent on) a tool call or prompt request
    /// whose arguments take more than `bytes` as JSON. No bound by default
    /// beyond the server's own on a request.
    pub fn max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = Some(bytes);
        self
    }

    /// Pins the backend's tools, prompts and resource templates in
    /// `store`: the first definition seen of each is recorded (a hash of
    /// its name, title, description, schemas or arguments, and
    /// annotations, as the backend lists it); a later, different one is
    /// withdrawn (not served, as if hidden) until approved
    /// ([`PinStore::approve`]), and the change is logged with both
    /// hashes. Keys are the names served: `tool:<name>`, `prompt:<name>`,
    /// `template:<uri template>`.
    pub fn pin(mut self, store: PinStore) -> Self {
        self.pins = Some(store);
        self
    }

    /// Sends the caller's identity with each forwarded request (over HTTP):
    /// `X-Snodo-Subject` (its principal's subject) and `X-Snodo-Scopes` (its
    /// granted scopes, space-separated), never the caller's token. A value
    /// that is not a valid header value is left out.
    pub fn forward_identity(mut self, forward: bool) -> Self {
        self.forward_identity = forward;
        self
    }

    /// Whether the caller's identity goes with each request.
    pub(crate) fn forwards_identity(&self) -> bool {
        self.forward_identity
    }

    /// Where its definitions are pinned, if they are.
    pub(crate) fn pins(&self) -> Option<&PinStore> {
        self.pins.as_ref()
    }

    /// Whether a component of `kind` known by `names` (a resource: its
    /// name and URI) is served.
    pub(crate) fn shows(&self, kind: Component, names: &[&str]) -> bool {
        let i = kind.index();
        let exposed = match &self.expose[i] {
            Some(patterns) => names.iter().any(|n| glob::any(patterns, n)),
            None => true,
        };
        exposed && !names.iter().any(|n| glob::any(&self.hide[i], n))
    }

    /// Whether a resource read of the backend's `uri` is refused: a hide
    /// pattern matches it as sent, or with its scheme in lower case (a
    /// scheme is case-insensitive).
    pub(crate) fn hides_uri(&self, uri: &str) -> bool {
        let patterns = &self.hide[Component::Resource.index()];
        glob::any(patterns, uri) || glob::any(patterns, &uri_key(uri))
    }

    /// The name a backend's tool or prompt is served under (before
    /// namespacing).
    pub(crate) fn served_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.alias.get(name).map_or(name, String::as_str)
    }

    /// The bound on a request's arguments, if any.
    pub(crate) fn argument_bound(&self) -> Option<usize> {
        self.max_argument_bytes
    }

    /// The injections that apply to a tool with `input_schema`, after
    /// rewriting that schema as served: an overridden argument left out of
    /// it, a defaulted one optional with its `default`.
    pub(crate) fn injections(&self, input_schema: &mut Value) -> Vec<Injection> {
        if self.inject.is_empty() && self.inject_override.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let declared = |schema: &Value, name: &str| schema["properties"].get(name).is_some();
        for (name, value) in &self.inject_override {
            if !declared(input_schema, name) {
                continue;
            }
            if let Some(props) = input_schema["properties"].as_object_mut() {
                props.remove(name);
            }
            unrequire(input_schema, name);
            out.push(Injection {
                name: name.clone(),
                value: value.clone(),
                overrides: true,
            });
        }
        for (name, value) in &self.inject {
            if !declared(input_schema, name) || self.inject_override.contains_key(name) {
                continue;
            }
            if let Some(Value::Object(property)) = input_schema["properties"].get_mut(name) {
                property.insert("default".into(), value.clone());
            }
            unrequire(input_schema, name);
            out.push(Injection {
                name: name.clone(),
                value: value.clone(),
                overrides: false,
            });
        }
        out
    }

    /// A short account of the settings, for logs and summaries.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let names = |globs: &[Glob]| globs.iter().map(Glob::as_str).collect::<Vec<_>>().join(" ");
        for kind in Component::ALL {
            let label = match kind {
                Component::Tool => "tools",
                Component::Prompt => "prompts",
                Component::Resource => "resources",
            };
            if let Some(globs) = &self.expose[kind.index()] {
                parts.push(format!("expose {label} [{}]", names(globs)));
            }
            if !self.hide[kind.index()].is_empty() {
                parts.push(format!(
                    "hide {label} [{}]",
                    names(&self.hide[kind.index()])
                ));
            }
        }
        if !self.alias.is_empty() {
            let pairs: Vec<String> = self
                .alias
                .iter()
                .map(|(a, b)| format!("{a}->{b}"))
                .collect();
            parts.push(format!("alias {}", pairs.join(" ")));
        }
        for (label, map) in [
            ("inject", &self.inject),
            ("inject_override", &self.inject_override),
        ] {
            if !map.is_empty() {
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                parts.push(format!("{label} {}", keys.join(" ")));
            }
        }
        if let Some(bytes) = self.max_argument_bytes {
            parts.push(format!("max_argument_bytes {bytes}"));
        }
        if self.pins.is_some() {
            parts.push("pinned".into());
        }
        if self.forward_identity {
            parts.push("forward_identity".into());
        }
        parts.join(", ")
    }
}

/// A URI with its scheme in lower case, as hidden URIs are compared.
pub(crate) fn uri_key(uri: &str) -> String {
    match uri.split_once(':') {
        Some((scheme, rest)) => format!("{}:{rest}", scheme.to_ascii_lowercase()),
        None => uri.to_owned(),
    }
}

/// Takes `name` out of a schema's `required`.
fn unrequire(schema: &mut Value, name: &str) {
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| r != name);
    }
}

/// Applies `injections` to a call's arguments.
pub(crate) fn inject(arguments: &mut Value, injections: &[Injection]) {
    if injections.is_empty() {
        return;
    }
    if arguments.is_null() {
        *arguments = Value::Object(Map::new());
    }
    let Some(map) = arguments.as_object_mut() else {
        return;
    };
    for i in injections {
        if i.overrides {
            map.insert(i.name.clone(), i.value.clone());
        } else {
            map.entry(i.name.clone()).or_insert_with(|| i.value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn globs(patterns: &[&str]) -> Vec<Glob> {
        patterns.iter().map(|p| Glob::new(p).unwrap()).collect()
    }

    #[test]
    fn expose_keeps_and_hide_removes_per_kind() {
        let s = Shaping::new()
            .expose(Component::Tool, globs(&["read_*", "list"]))
            .hide(Component::Tool, globs(&["read_secrets"]))
            .hide(Component::Resource, globs(&["secret://*"]));
        assert!(s.shows(Component::Tool, &["read_file"]));
        assert!(s.shows(Component::Tool, &["list"]));
        assert!(!s.shows(Component::Tool, &["read_secrets"]));
        assert!(!s.shows(Component::Tool, &["delete"]));
        assert!(s.shows(Component::Prompt, &["delete"]));
        assert!(!s.shows(Component::Resource, &["keys", "secret://keys"]));
        assert!(s.shows(Component::Resource, &["notes", "notes://1"]));
        assert!(s.hides_uri("secret://keys") && !s.hides_uri("notes://1"));
        let none = Shaping::new().expose(Component::Prompt, []);
        assert!(!none.shows(Component::Prompt, &["hello"]));
        assert!(Shaping::new().shows(Component::Tool, &["anything"]));
    }

    #[test]
    fn injections_rewrite_the_schema_and_fill_the_arguments() {
        let s = Shaping::new()
            .inject("root", json!("/srv"))
            .inject("unused", json!(1))
            .inject_override("tenant", json!("acme"));
        let mut schema = json!({
            "type": "object",
            "properties": {"root": {"type": "string"}, "tenant": {"type": "string"}, "path": {"type": "string"}},
            "required": ["root", "tenant", "path"]
        });
        let injections = s.injections(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"root": {"type": "string", "default": "/srv"}, "path": {"type": "string"}},
                "required": ["path"]
            })
        );
        let mut args = json!({"path": "a", "tenant": "evil"});
        inject(&mut args, &injections);
        assert_eq!(args, json!({"path": "a", "tenant": "acme", "root": "/srv"}));
        let mut args = json!({"path": "a", "root": "/tmp"});
        inject(&mut args, &injections);
        assert_eq!(args, json!({"path": "a", "tenant": "acme", "root": "/tmp"}));
        let mut args = Value::Null;
        inject(&mut args, &injections);
        assert_eq!(args, json!({"tenant": "acme", "root": "/srv"}));
        let mut bare = json!({"type": "object"});
        assert!(s.injections(&mut bare).is_empty());
    }

    #[test]
    fn aliases_rename() {
        let s = Shaping::new().alias("read_file", "read");
        assert_eq!(s.served_name("read_file"), "read");
        assert_eq!(s.served_name("write"), "write");
    }
}
