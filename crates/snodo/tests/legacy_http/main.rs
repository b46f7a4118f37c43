//! The initialize-era Streamable HTTP transport on a real loopback socket:
//! sessions, their errors and limits, requests to the client on a call's own
//! stream, resumption with `Last-Event-ID`, and the standalone GET stream.

#[path = "../common/mod.rs"]
mod common;
#[path = "../legacy_support/mod.rs"]
mod legacy_support;

mod call_streams;
mod events;
mod listener;
mod session_streams;
mod sessions;

const V: &str = "2025-11-25";
