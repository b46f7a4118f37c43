//! Where a client keeps what it got from each authorization server: its
//! registration and its tokens, keyed by the issuer they are bound to (a
//! registration or token of one issuer is never sent to another).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::net::now_secs;

/// A client identity at one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret`, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The token endpoint auth method the server registered, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<String>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// Tokens from one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// `Bearer`, or `DPoP` for a token bound to the client's DPoP key.
    pub token_type: String,
    /// For a DPoP-bound token, the thumbprint of the key it is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (as the server said, else as requested).
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl TokenSet {
    /// The `Authorization` value that presents the access token: `DPoP`
    /// for a bound token, `Bearer` otherwise.
    pub fn authorization(&self) -> String {
        let scheme = if self.dpop_jkt.is_some() {
            "DPoP"
        } else {
            "Bearer"
        };
        format!("{scheme} {}", self.access_token)
    }

    /// Whether the access token expires within `margin_secs`.
    pub fn expires_within(&self, margin_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_secs().saturating_add(margin_secs))
    }
}

impl fmt::Debug for TokenSet {
    /// Tokens are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field("token_type", &self.token_type)
            .field("dpop_jkt", &self.dpop_jkt)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl Default for TokenSet {
    fn default() -> Self {
        Self {
            access_token: String::new(),
            token_type: "Bearer".into(),
            dpop_jkt: None,
            refresh_token: None,
            expires_at: None,
            scopes: Vec::new(),
        }
    }
}

/// Everything kept for one issuer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuerState {
    /// The issuer identifier, exactly as its metadata spells it.
    pub issuer: String,
    /// The resource the tokens were requested for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The client's registration there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// The tokens it issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
}

impl IssuerState {
    /// A state for `issuer` with nothing in it yet.
    pub fn new(issuer: &str) -> Self {
        Self {
            issuer: issuer.to_string(),
            resource: None,
            registration: None,
            tokens: None,
        }
    }
}

/// A place to keep [`IssuerState`]s. The default is [`MemoryStore`]; the
/// CLI keeps one file per issuer.
pub trait TokenStore: Send + Sync + fmt::Debug {
    /// What is kept for `issuer`.
    fn load(&self, issuer: &str) -> Option<IssuerState>;
    /// Keeps `state` (replacing what was kept for its issuer).
    fn save(&self, state: &IssuerState);
    /// Forgets `issuer`.
    fn remove(&self, issuer: &str);
}

/// A [`TokenStore`] in memory, gone with the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: Mutex<HashMap<String, IssuerState>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryStore {
    fn load(&self, issuer: &str) -> Option<IssuerState> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(issuer)
            .cloned()
    }

    fn save(&self, state: &IssuerState) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(state.issuer.clone(), state.clone());
    }

    fn remove(&self, issuer: &str) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(issuer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_prints_a_secret() {
        let state = IssuerState {
            registration: Some(Registration {
                client_id: "id".into(),
                client_secret: Some("s3cret".into()),
                auth_method: None,
            }),
            tokens: Some(TokenSet {
                access_token: "tok-123".into(),
                refresh_token: Some("ref-456".into()),
                expires_at: Some(1),
                ..TokenSet::default()
            }),
            ..IssuerState::new("http://a")
        };
        let text = format!("{state:?}");
        for secret in ["s3cret", "tok-123", "ref-456"] {
            assert!(!text.contains(secret), "{text}");
        }
        let store = MemoryStore::new();
        store.save(&state);
        assert_eq!(store.load("http://a"), Some(state));
        store.remove("http://a");
        assert_eq!(store.load("http://a"), None);
        assert!(
            TokenSet {
                expires_at: Some(1),
                ..Default::default()
            }
            .expires_within(0)
        );
    }
}
