//! The protocol's data: the JSON-RPC 2.0 envelope (bounded decoding, request
//! ids) and the MCP revisions' rules (versions, the method catalog, request
//! `_meta`, log levels, cache hints), the `Mcp-Param-*` header encoding and
//! the OAuth documents and challenges MCP's authorization exchanges
//! rely on.
//!
//! Decoding never panics, whatever the bytes: a message is either a
//! [`Message`] or a [`DecodeError`] that carries the JSON-RPC error to send
//! (and the request id, when it could be read).

pub use crate::protocol::{
    CacheHints, CacheScope, LATEST_VERSION, LogLevel, Method, RequestMeta, Revision,
    SUPPORTED_VERSIONS, SubscriptionFilter, UnknownRevision, auth, headers, in_process_meta,
    in_process_request,
};
pub use crate::wire::{
    DecodeError, LazyObject, Limits, Message, Meta, MetaParts, Notification, Request, RequestId,
    decode,
};
