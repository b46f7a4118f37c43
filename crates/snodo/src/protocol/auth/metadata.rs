//! The discovery documents: Protected Resource Metadata (RFC 9728) and
//! authorization server metadata (RFC 8414, OpenID Connect Discovery), and
//! where each is looked up.
//!
//! Identifiers (`resource`, `issuer`) are kept as the exact strings the
//! documents carry: the spec compares them byte for byte, and a URL parser
//! that adds a `/` to `http://host` would break those comparisons. The URLs
//! to probe are therefore built by string surgery on the path.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The well-known path of Protected Resource Metadata.
pub const PRM_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// A Protected Resource Metadata document (RFC 9728 §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ResourceMetadata {
    /// The resource's identifier: the MCP endpoint's canonical URI.
    pub resource: String,
    /// The issuers that hand out tokens for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authorization_servers: Vec<String>,
    /// The scopes a client needs for basic use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How tokens may be presented (`["header"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// The DPoP proof algorithms the resource accepts (RFC 9449 §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether the resource accepts DPoP-bound tokens only (RFC 9449 §5.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Authorization server metadata (RFC 8414 §2; the OpenID Connect fields
/// MCP uses are the same).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ServerMetadata {
    /// The issuer identifier.
    pub issuer: String,
    /// Where the user agent is sent to authorize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and credentials are exchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Token introspection (RFC 7662).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// The issuer's signing keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Scopes the issuer knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Grants the issuer accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; MCP clients refuse an issuer without `S256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Whether the issuer accepts Client ID Metadata Documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether the authorization response carries `iss` (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// The DPoP proof algorithms the issuer accepts (RFC 9449 §5.1): a
    /// client with a DPoP key asks for bound tokens only where its
    /// algorithm is listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Every other member, kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ServerMetadata {
    /// Whether the issuer supports PKCE with S256.
    pub fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
    }

    /// Whether `scope` is among `scopes_supported`.
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == scope))
    }

    /// Whether the issuer binds tokens to DPoP proofs signed with `alg`.
    pub fn supports_dpop(&self, alg: &str) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|a| a.iter().any(|a| a == alg))
    }
}

/// An absolute `http(s)` URL split into its origin and path (query and
/// fragment dropped), without normalising either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// `scheme://authority`, as written.
    pub origin: &'a str,
    /// The path, possibly empty.
    pub path: &'a str,
}

/// Splits `url` into origin and path; `None` unless it is an absolute
/// `http` or `https` URL with a host.
///
/// ```
/// use snodo::model::auth::metadata::split_url;
/// let p = split_url("http://localhost:3000/tenant1?x#y").unwrap();
/// assert_eq!((p.origin, p.path), ("http://localhost:3000", "/tenant1"));
/// assert_eq!(split_url("http://h").unwrap().path, "");
/// assert!(split_url("file:///etc").is_none());
/// ```
pub fn split_url(url: &str) -> Option<UrlParts<'_>> {
    let rest = if let Some(r) = url.strip_prefix("https://") {
        r
    } else {
        url.strip_prefix("http://")?
    };
    let scheme_len = url.len() - rest.len();
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if authority_len == 0 || rest[..authority_len].contains('@') {
        return None;
    }
    let origin = &url[..scheme_len + authority_len];
    let after = &rest[authority_len..];
    let path_len = after.find(['?', '#']).unwrap_or(after.len());
    Some(UrlParts {
        origin,
        path: &after[..path_len],
    })
}

/// Whether `url` names a loopback host (`localhost`, `127.0.0.0/8`, `[::1]`).
pub fn is_loopback(url: &str) -> bool {
    let Some(parts) = split_url(url) else {
        return false;
    };
    let authority = parts.origin.split_once("://").map_or("", |(_, a)| a);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    if host.eq_ignore_ascii_case("localhost") || host == "::1" {
        return true;
    }
    host.parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The Protected Resource Metadata URLs to try for an MCP endpoint when the
/// challenge names none: the path-inserted one, then the root one.
///
/// ```
/// use snodo::model::auth::metadata::resource_metadata_urls;
/// assert_eq!(
///     resource_metadata_urls("http://h:1/public/mcp/"),
///     ["http://h:1/.well-known/oauth-protected-resource/public/mcp",
///      "http://h:1/.well-known/oauth-protected-resource"],
/// );
/// assert_eq!(resource_metadata_urls("http://h:1/"), ["http://h:1/.well-known/oauth-protected-resource"]);
/// ```
pub fn resource_metadata_urls(endpoint: &str) -> Vec<String> {
    let Some(parts) = split_url(endpoint) else {
        return Vec::new();
    };
    let path = parts.path.strip_suffix('/').unwrap_or(parts.path);
    let root = format!("{}{PRM_WELL_KNOWN}", parts.origin);
    if path.is_empty() {
        vec![root]
    } else {
        vec![format!("{}{PRM_WELL_KNOWN}{path}", parts.origin), root]
    }
}

/// The path of the Protected Resource Metadata a server publishes for an
/// endpoint at `endpoint_path` (the path-inserted form).
///
/// ```
/// use snodo::model::auth::metadata::resource_metadata_path;
/// assert_eq!(resource_metadata_path("/mcp"), "/.well-known/oauth-protected-resource/mcp");
/// assert_eq!(resource_metadata_path("/"), "/.well-known/oauth-protected-resource");
/// ```
pub fn resource_metadata_path(endpoint_path: &str) -> String {
    let path = endpoint_path.strip_suffix('/').unwrap_or(endpoint_path);
    if path.is_empty() {
        PRM_WELL_KNOWN.to_string()
    } else {
        format!("{PRM_WELL_KNOWN}{path}")
    }
}

/// The authorization server metadata URLs to try for `issuer`, in the
/// spec's order: RFC 8414 path-inserted, OpenID path-inserted, OpenID
/// path-appended (an issuer without a path: RFC 8414, then OpenID).
///
/// ```
/// use snodo::model::auth::metadata::server_metadata_urls;
/// assert_eq!(server_metadata_urls("http://h/tenant1"), [
///     "http://h/.well-known/oauth-authorization-server/tenant1",
///     "http://h/.well-known/openid-configuration/tenant1",
///     "http://h/tenant1/.well-known/openid-configuration",
/// ]);
/// assert_eq!(server_metadata_urls("http://h"), [
///     "http://h/.well-known/oauth-authorization-server",
///     "http://h/.well-known/openid-configuration",
/// ]);
/// ```
pub fn server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(parts) = split_url(issuer) else {
        return Vec::new();
    };
    let origin = parts.origin;
    let path = parts.path.strip_suffix('/').unwrap_or(parts.path);
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether a Protected Resource Metadata `resource` covers the endpoint a
/// client connected to: the same origin (scheme and authority, ignoring
/// ASCII case) and a path that is a prefix of the endpoint's at a segment
/// boundary.
///
/// ```
/// use snodo::model::auth::metadata::resource_covers;
/// assert!(resource_covers("http://h:1", "http://h:1/mcp"));
/// assert!(resource_covers("http://h:1/mcp", "http://h:1/mcp"));
/// assert!(!resource_covers("http://h:1/mc", "http://h:1/mcp"));
/// assert!(!resource_covers("https://evil.example.com/mcp", "http://h:1/mcp"));
/// ```
pub fn resource_covers(resource: &str, endpoint: &str) -> bool {
    let (Some(r), Some(e)) = (split_url(resource), split_url(endpoint)) else {
        return false;
    };
    if !r.origin.eq_ignore_ascii_case(e.origin) {
        return false;
    }
    let rp = r.path.strip_suffix('/').unwrap_or(r.path);
    let ep = e.path.strip_suffix('/').unwrap_or(e.path);
    ep == rp || (ep.starts_with(rp) && ep.as_bytes().get(rp.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for yes in [
            "http://localhost:3000/x",
            "http://127.0.0.1/",
            "http://127.8.9.1:4",
            "http://[::1]:80/a",
            "http://LOCALHOST",
        ] {
            assert!(is_loopback(yes), "{yes}");
        }
        for no in [
            "http://localhost.evil.com/",
            "http://10.0.0.1/",
            "https://example.com",
            "http://user@127.0.0.1/",
            "ftp://127.0.0.1",
        ] {
            assert!(!is_loopback(no), "{no}");
        }
    }

    #[test]
    fn documents_keep_unknown_members() {
        let prm: ResourceMetadata = serde_json::from_str(
            r#"{"resource":"http://h","authorization_servers":["http://a"],"x":1}"#,
        )
        .unwrap();
        assert_eq!(prm.resource, "http://h");
        assert_eq!(prm.extra["x"], 1);
        let asm: ServerMetadata = serde_json::from_str(
            r#"{"issuer":"http://a","code_challenge_methods_supported":["plain"]}"#,
        )
        .unwrap();
        assert!(!asm.supports_s256());
        assert!(serde_json::from_str::<ServerMetadata>(r#"{"token_endpoint":"x"}"#).is_err());
    }
}
