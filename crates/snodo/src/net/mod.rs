//! The HTTP client building block shared by the MCP client and the resource
//! server's token checks (JWKS, introspection): a keep-alive pool (rustls)
//! and bounded exchanges. No MCP here, so that `auth` need not build the MCP
//! client.

// The OAuth exchanges serve the client, and the resource server (`auth`
// with `http`).
#[cfg(any(feature = "client", all(feature = "auth", feature = "http")))]
mod fetch;
mod pool;

#[cfg(any(feature = "client", all(feature = "auth", feature = "http")))]
pub(crate) use fetch::OAuthHttp;
#[cfg(feature = "client")]
pub(crate) use fetch::{Answer, FetchError};
#[cfg(feature = "client")]
pub(crate) use pool::{Pool, new_pool};

/// Seconds since the Unix epoch (0 when the clock is before it).
#[cfg(any(feature = "client", all(feature = "auth", feature = "http")))]
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
