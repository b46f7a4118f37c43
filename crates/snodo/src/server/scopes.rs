//! Which OAuth scopes a request needs: the component's own (declared with
//! `scopes = [...]` in the attribute macros, or set on the builder), else the
//! server's defaults; and whether a principal's grant covers them.

use serde_json::{Map, Value};

use super::catalog::Catalog;
use super::policy::Item;
use crate::{Principal, Server};

/// The scopes a component declares (empty when it declares none or is not
/// found).
fn declared<'c>(catalog: &'c Catalog, item: Item<'_>) -> &'c [String] {
    match item {
        Item::Tool(name) => catalog.tools.get(name).map_or(&[], |e| &e.scopes),
        Item::Resource(uri) => {
            if let Some(&i) = catalog.resource_index.get(uri) {
                return &catalog.resources[i].scopes;
            }
            catalog
                .templates
                .iter()
                .find(|e| {
                    e.listed.get("uriTemplate").and_then(Value::as_str) == Some(uri)
                        || e.template
                            .as_ref()
                            .is_some_and(|t| t.matches(uri).is_some())
                })
                .map_or(&[], |e| &e.scopes)
        }
        Item::Prompt(name) => catalog
            .prompt_index
            .get(name)
            .map_or(&[], |&i| &catalog.prompts[i].scopes),
    }
}

/// What a request for `method` acts on whose scopes it needs: `target` (read
/// out of its params) or, for a completion, what its `ref` names.
fn item<'a>(
    method: &str,
    target: Option<&'a str>,
    params: &'a Map<String, Value>,
) -> Option<Item<'a>> {
    match method {
        "tools/call" => target.map(Item::Tool),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            target.map(Item::Resource)
        }
        "prompts/get" => target.map(Item::Prompt),
        // Completing a prompt's or a template's argument runs its code.
        "completion/complete" => {
            let r = params.get("ref");
            let field = |k: &str| r.and_then(|r| r.get(k)).and_then(Value::as_str);
            match field("type") {
                Some("ref/prompt") => field("name").map(Item::Prompt),
                Some("ref/resource") => field("uri").map(Item::Resource),
                _ => None,
            }
        }
        _ => None,
    }
}

impl Server {
    /// The scopes a request for `method` with `params` needs over an
    /// authorized transport: those of the tool, resource or prompt it
    /// names, else the server's [default scopes](super::ServerBuilder::default_scopes).
    ///
    /// `params` are the params as sent; a decoded
    /// [`model::Request`](crate::model::Request) holds its target apart (check
    /// it with [`Server::check_request_scopes`], or give
    /// [`Request::into_params`](crate::model::Request::into_params)).
    ///
    /// ```
    /// use snodo::prelude::*;
    ///
    /// #[snodo::tool(description = "Delete a file", scopes = ["files:write"])]
    /// async fn delete() -> &'static str { "deleted" }
    ///
    /// let server = Server::builder("s", "1").tool(delete).default_scopes(["demo:read"]).build().unwrap();
    /// let call = serde_json::json!({"name": "delete"});
    /// assert_eq!(server.required_scopes("tools/call", call.as_object().unwrap()), ["files:write"]);
    /// assert_eq!(server.required_scopes("tools/list", &Default::default()), ["demo:read"]);
    /// ```
    pub fn required_scopes(&self, method: &str, params: &Map<String, Value>) -> Vec<String> {
        self.scopes_for(item(method, crate::wire::target_in(method, params), params))
    }

    /// Whether `principal`'s grant covers what the request needs; `Err`
    /// carries every scope the request needs (what a `403
    /// insufficient_scope` challenge names). `params` are the params as
    /// sent, as for [`Server::required_scopes`].
    pub fn check_scopes(
        &self,
        principal: &Principal,
        method: &str,
        params: &Map<String, Value>,
    ) -> Result<(), Vec<String>> {
        self.covers(principal, self.required_scopes(method, params))
    }

    /// [`Server::check_scopes`] for a decoded request, whose target (the
    /// tool's or prompt's name, the resource's URI) was read out of its
    /// params into [`Request::target`](crate::model::Request::target): what a
    /// transport that decodes before it checks calls.
    ///
    /// ```
    /// use snodo::prelude::*;
    /// use snodo::model::{Limits, Message, decode};
    ///
    /// #[snodo::tool(description = "Delete a file", scopes = ["files:write"])]
    /// async fn delete() -> &'static str { "deleted" }
    ///
    /// let server = Server::builder("s", "1").tool(delete).default_scopes(["demo:read"]).build().unwrap();
    /// let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete"}}"#;
    /// let Ok(Message::Request(request)) = decode(bytes, &Limits::default()) else { unreachable!() };
    /// let reader = snodo::Principal::new("ann").with_scopes(["demo:read"]);
    /// assert_eq!(server.check_request_scopes(&reader, &request), Err(vec!["files:write".to_string()]));
    /// let writer = snodo::Principal::new("bob").with_scopes(["files:write"]);
    /// assert_eq!(server.check_request_scopes(&writer, &request), Ok(()));
    /// ```
    pub fn check_request_scopes(
        &self,
        principal: &Principal,
        request: &crate::wire::Request,
    ) -> Result<(), Vec<String>> {
        let needed = self.scopes_of(&request.method, request.target.as_deref(), &request.params);
        self.covers(principal, needed)
    }

    /// Admission's scope check, where the transport's authenticator asks
    /// for it: the principal's grant must cover what `needed` gives (a
    /// component's own scopes, else the defaults); 403 otherwise.
    pub(super) fn admit_scopes(
        &self,
        transport: &crate::TransportInfo,
        needed: impl FnOnce() -> Vec<String>,
    ) -> Result<(), super::reply::Failure> {
        #[cfg(feature = "auth")]
        if let Some(principal) = &transport.principal
            && transport
                .extensions
                .get::<crate::context::EnforceScopes>()
                .is_some()
        {
            return self
                .covers(principal, needed())
                .map_err(super::reply::Failure::insufficient_scope);
        }
        #[cfg(not(feature = "auth"))]
        let _ = (transport, needed);
        Ok(())
    }

    /// The scopes a request for `method` needs, its target read out of its
    /// params.
    pub(super) fn scopes_of(
        &self,
        method: &str,
        target: Option<&str>,
        params: &Map<String, Value>,
    ) -> Vec<String> {
        self.scopes_for(item(method, target, params))
    }

    /// The scopes a call of the tool `entry` needs: its own, else the
    /// defaults (the tool found at admission, not looked up again).
    pub(super) fn scopes_of_tool(&self, entry: &super::registry::ToolEntry) -> Vec<String> {
        self.own_else_default(&entry.scopes).to_vec()
    }

    /// The scopes `item` needs: its own, else the server's defaults.
    fn scopes_for(&self, item: Option<Item<'_>>) -> Vec<String> {
        let catalog = self.catalog();
        let own = item.map_or(&[][..], |i| declared(&catalog, i));
        self.own_else_default(own).to_vec()
    }

    /// A component's own scopes, else (when it declares none) the server's
    /// defaults: the one rule of what a request needs.
    fn own_else_default<'s>(&'s self, own: &'s [String]) -> &'s [String] {
        if own.is_empty() {
            &self.inner.scopes.default
        } else {
            own
        }
    }

    /// Whether `principal`'s grant covers every scope `needed`.
    fn covers(&self, principal: &Principal, needed: Vec<String>) -> Result<(), Vec<String>> {
        let policy = &self.inner.scopes.policy;
        if needed
            .iter()
            .all(|s| policy.satisfies(&principal.scopes, s))
        {
            Ok(())
        } else {
            Err(needed)
        }
    }

    /// Whether lists show `item` to `principal` (always, unless
    /// [`hide_unauthorized`](super::ServerBuilder::hide_unauthorized) is on).
    pub(crate) fn scope_visible(
        &self,
        catalog: &Catalog,
        principal: Option<&Principal>,
        item: Item<'_>,
    ) -> bool {
        let rules = &self.inner.scopes;
        let Some(principal) = principal.filter(|_| rules.hide) else {
            return true;
        };
        self.own_else_default(declared(catalog, item))
            .iter()
            .all(|s| rules.policy.satisfies(&principal.scopes, s))
    }

    /// Whether lists are filtered by scope.
    pub(crate) fn hides_by_scope(&self) -> bool {
        self.inner.scopes.hide
    }
}
