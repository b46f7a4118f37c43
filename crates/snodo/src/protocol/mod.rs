//! The MCP 2026-07-28 revision: request `_meta`, versions, the method
//! catalog, HTTP header rules and result shaping.

pub mod auth;
pub mod headers;
pub(crate) mod keys;
pub(crate) mod legacy;
mod meta;
mod method;
mod revision;
mod shape;
mod subscription;

pub use meta::{LogLevel, RequestMeta};
pub(crate) use meta::{cancelled_request, claims_modern};
pub use meta::{in_process_meta, in_process_request};
pub use method::Method;
pub use revision::{LATEST_VERSION, Revision, SUPPORTED_VERSIONS, UnknownRevision};
pub use shape::{CacheHints, CacheScope};
pub use subscription::SubscriptionFilter;
pub(crate) use subscription::uri_covers;

pub(crate) use method::is_removed;
pub(crate) use shape::stamp_result;
