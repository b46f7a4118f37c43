//! The initialize-era revisions (2025-11-25, 2025-06-18): their version
//! lists, the methods and notifications only they have, and the session
//! header. The server's dialect and the client's handshake both read them
//! from here.

#[cfg(feature = "client")]
use super::Revision;

/// The initialize-era revisions this library speaks, newest first.
#[cfg(feature = "client")]
pub const LEGACY_VERSIONS: &[&str] = &[
    Revision::V2025_11_25.as_str(),
    Revision::V2025_06_18.as_str(),
];

/// The stateless revisions this library speaks, newest first.
#[cfg(feature = "client")]
pub const MODERN_VERSIONS: &[&str] = super::SUPPORTED_VERSIONS;

/// Older initialize-era revisions a client accepts when a server answers
/// with them (their wire is a subset of 2025-06-18's; 2024-11-05 is the
/// revision of the HTTP+SSE transport). Servers built with this library
/// never offer them: such an `initialize` is answered with 2025-11-25.
#[cfg(feature = "client")]
pub(crate) const TOLERATED_LEGACY: &[&str] = &["2025-03-26", "2024-11-05"];

/// The handshake request.
pub(crate) const INITIALIZE: &str = "initialize";
/// The notification that ends the handshake.
pub(crate) const INITIALIZED: &str = "notifications/initialized";
/// Liveness check, either direction.
pub(crate) const PING: &str = "ping";
/// Sets the session's log threshold.
pub(crate) const SET_LEVEL: &str = "logging/setLevel";
/// Subscribes the session to a resource's updates.
pub(crate) const SUBSCRIBE: &str = "resources/subscribe";
/// Ends a resource subscription.
pub(crate) const UNSUBSCRIBE: &str = "resources/unsubscribe";

/// The Streamable HTTP session header (lowercase, as `http` stores names).
#[cfg(any(feature = "http", feature = "client"))]
pub(crate) const SESSION_ID_HEADER: &str = "mcp-session-id";

/// Whether the revision named `version` has a `mode` on elicitation
/// requests and declares elicitation modes as capabilities (2025-11-25 on);
/// older initialize-era revisions only know form elicitation.
#[cfg(feature = "client")]
pub(crate) fn has_elicitation_modes(version: &str) -> bool {
    Revision::parse(version).is_some_and(Revision::has_url_elicitation)
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "client")]
    #[test]
    fn the_lists_agree_with_the_revisions() {
        use super::*;
        let legacy: Vec<&str> = Revision::LEGACY.iter().map(|r| r.as_str()).collect();
        assert_eq!(LEGACY_VERSIONS, legacy.as_slice());
        assert_eq!(super::super::SUPPORTED_VERSIONS, MODERN_VERSIONS);
        assert!(has_elicitation_modes("2025-11-25"));
        assert!(!has_elicitation_modes("2025-06-18"));
    }
}
