//! The proxy (`snodo::proxy`) in process: backends are servers reached by
//! direct clients, and the proxy's server is driven with literal JSON-RPC
//! requests, as a host would send them.

#![cfg(all(feature = "client", feature = "macros"))]

#[path = "../client_support/mod.rs"]
mod client_support;

mod audit;
mod backend;
mod host;
mod limits;
mod membership;
mod per_caller;
mod pinning;
mod resilience;
mod routing;
mod shaping;
mod views;
