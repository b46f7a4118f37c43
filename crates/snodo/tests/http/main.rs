//! Streamable HTTP end to end: real loopback sockets, a hyper client (HTTP/1.1
//! keep-alive and HTTP/2 prior knowledge), raw TCP for hostile clients, and
//! literal 2026-07-28 JSON bodies.
#![cfg(feature = "http")]

mod clients;
mod connections;
mod lifecycle;
mod refusals;
mod server;
mod statuses;

use std::time::Duration;

/// Generous bound for anything that should happen "soon".
const SOON: Duration = Duration::from_secs(10);
