//! Virtual servers: `[servers.NAME]` tables, each served at
//! `/servers/NAME/mcp` on the proxy's listener beside the full set at
//! `/mcp`.
//!
//! ```toml
//! [servers.reports]
//! backends = ["reports", "files"]      # backends of this file (at least one)
//! tools = ["reports.get_*", "files.read"]   # served names it keeps (default: all)
//! resources = ["files+file:///srv/*"]  # served URIs it keeps (default: all)
//! prompts = []                         # none of them
//!
//! [[servers.reports.roles]]            # with [auth]: its own roles (default: [auth]'s)
//! name = "analyst"
//! when = { groups = ["analysts"] }
//! tools = ["*"]
//! ```
//!
//! With `[auth]` each virtual server is a protected resource of its own:
//! its resource URI is the `/mcp` one's with `/servers/NAME/mcp` for its
//! path, tokens must name it, and its metadata is at the path-inserted
//! well-known URL. A change to `[servers]` (or to `[auth]` roles) builds
//! the virtual servers again: their initialize-era sessions end.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use bytes::Bytes;
use http::{Request, Response};
use snodo::proxy::{Proxy, Role, Roles};
use snodo::server::Capability;
use snodo::transport::http::{HttpOptions, McpBody, McpService};

use super::config::{Auth, Config, ServerKeys};

/// The MCP endpoints of the virtual servers, by name, as the listener's
/// other paths find them. With `[auth]`, they are built once the front
/// door's resource URI is known (configured, or the listener's URL).
#[derive(Clone, Default)]
pub(crate) struct Mounts {
    /// The origin of the front door's resource URI (`http://127.0.0.1:4000`).
    origin: Arc<OnceLock<String>>,
    services: Arc<RwLock<BTreeMap<String, McpService>>>,
}

/// What every virtual server shares with `/mcp`.
pub(crate) struct Shared<'a> {
    pub(crate) proxy: &'a Proxy,
    /// The roles of `[auth]` (a virtual server without roles of its own
    /// uses them, live).
    pub(crate) roles: Option<&'a Roles>,
    pub(crate) request_timeout: std::time::Duration,
}

impl Mounts {
    /// The path a virtual server is served at.
    pub(crate) fn path(name: &str) -> String {
        format!("/servers/{name}/mcp")
    }

    /// Records the front door's resource URI (once): virtual servers are
    /// resources on its origin.
    pub(crate) fn resource(&self, url: &str) {
        let _ = self.origin.set(origin_of(url));
    }

    /// The service that answers `path`: a virtual server's endpoint or its
    /// protected resource metadata.
    pub(crate) fn find(&self, path: &str) -> Option<McpService> {
        let rest = path
            .strip_prefix("/.well-known/oauth-protected-resource")
            .unwrap_or(path);
        let name = rest.strip_prefix("/servers/")?.strip_suffix("/mcp")?;
        let services = self.services.read().unwrap_or_else(|e| e.into_inner());
        services.get(name).cloned()
    }

    /// Has `service` answer `request`.
    pub(crate) async fn answer(
        mut service: McpService,
        request: Request<Bytes>,
    ) -> Response<McpBody> {
        let request = request.map(McpBody::full);
        match tower_service::Service::call(&mut service, request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// Builds the virtual servers `config` names (dropping the others), each
    /// on a server of its own registered with the proxy, and mounts them.
    /// With `[auth]` and before the front door's resource is known, does
    /// nothing.
    pub(crate) fn install(&self, config: &Config, shared: &Shared<'_>) -> Result<(), String> {
        if let Some(resource) = config.auth.as_ref().and_then(|a| a.resource.as_deref()) {
            self.resource(resource);
        }
        let origin = self.origin.get();
        if config.auth.is_some() && origin.is_none() {
            return Ok(());
        }
        let mut built = BTreeMap::new();
        for (name, keys) in &config.servers {
            let server = view_server(name, keys, shared)?;
            let mut options = HttpOptions::new().endpoint(Self::path(name));
            if let Some(rate) = config.limits.rate {
                options = options.rate_per_caller(rate);
            }
            if let (Some(auth), Some(origin)) = (&config.auth, origin) {
                options = options.oauth(resource_server(auth, origin, name)?);
            }
            shared
                .proxy
                .serve_view(name, server.clone(), keys.view()?)
                .map_err(|e| format!("servers.{name}: {e}"))?;
            built.insert(name.clone(), server.http_service_with(options));
        }
        for gone in shared.proxy.views_served() {
            if !built.contains_key(&gone) {
                shared.proxy.remove_view(&gone);
            }
        }
        *self.services.write().unwrap_or_else(|e| e.into_inner()) = built;
        Ok(())
    }
}

/// A virtual server's own server, built as the proxy's is.
fn view_server(
    name: &str,
    keys: &ServerKeys,
    shared: &Shared<'_>,
) -> Result<snodo::Server, String> {
    let mut builder =
        snodo::Server::builder(format!("snodo-proxy/{name}"), env!("CARGO_PKG_VERSION"))
            .declare(Capability::Tools)
            .declare(Capability::Resources)
            .declare(Capability::Prompts)
            .declare(Capability::Completions)
            .request_timeout(shared.request_timeout);
    if !keys.roles.is_empty() {
        let roles: Vec<Role> =
            super::config::roles_of(&keys.roles, &format!("servers.{name}.roles"))?;
        builder = builder.policy(Roles::new(roles));
    } else if let Some(roles) = shared.roles {
        builder = builder.policy(roles.clone());
    }
    builder.build().map_err(|e| format!("servers.{name}: {e}"))
}

/// The virtual server's protected resource: `[auth]`'s issuer and scopes,
/// its own resource URI.
fn resource_server(
    auth: &Auth,
    origin: &str,
    name: &str,
) -> Result<snodo::transport::http::oauth::ResourceServer, String> {
    use snodo::transport::http::oauth::{JwtVerifier, ResourceServer};
    let url = format!("{origin}{}", Mounts::path(name));
    ResourceServer::builder(&url)
        .authorization_server(&auth.issuer)
        .scopes_supported(auth.scopes.clone())
        .challenge_scopes(auth.scopes.clone())
        .resource_name(&format!("snodo proxy: {name}"))
        .verifier(JwtVerifier::new(&auth.issuer, &url))
        .build()
        .map_err(|e| format!("servers.{name}: {e}"))
}

/// `https://gw.example.com/mcp` → `https://gw.example.com`.
fn origin_of(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url[..after_scheme + i].to_owned(),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_virtual_servers_resource_is_its_path_on_the_front_doors_origin() {
        assert_eq!(
            origin_of("https://gw.example.com/mcp"),
            "https://gw.example.com"
        );
        assert_eq!(origin_of("http://127.0.0.1:4000"), "http://127.0.0.1:4000");
        assert_eq!(Mounts::path("reports"), "/servers/reports/mcp");
    }
}
