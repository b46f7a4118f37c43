//! Choosing the protocol revision.
//!
//! The client probes with `server/discover` at its newest modern revision.
//! A discover result, or a recognized modern error (`-32022` with
//! `data.supported`, `-32020`, `-32021`), keeps the modern wire (retrying the
//! probe once at a supported revision). Anything else — another error, an
//! HTTP error without a modern body, a result that is not a discover result,
//! or no answer within the probe timeout — falls back to `initialize` at
//! 2025-11-25, then 2025-06-18. A pinned revision skips the choice.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::ProtocolErrorKind;
use super::options::{LEGACY_VERSIONS, MODERN_VERSIONS, RequestOptions, VersionPolicy};
use super::version::{Negotiated, Wire};
use super::{ClientError, Shared, legacy};
use crate::Error;
use crate::error::code;

/// The outcome of one probe.
enum Probe {
    Modern(Box<Negotiated>),
    /// A `-32022` naming the revisions the server supports.
    Unsupported(Vec<String>),
    Legacy,
}

async fn probe(shared: &Arc<Shared>, version: &str) -> Result<Probe, ClientError> {
    let wire = Wire {
        version: version.to_string(),
        legacy: false,
        handshake: false,
    };
    let mut opts = RequestOptions::new()
        .timeout(shared.config.probe_timeout)
        .max_total_timeout(shared.config.probe_timeout);
    opts.silent_timeout = true;
    match shared
        .call_on(&wire, "server/discover", &Map::new(), &opts, Vec::new())
        .await
    {
        Ok(result) => Ok(match Negotiated::from_discover(version, &result) {
            Some(n) => Probe::Modern(Box::new(n)),
            None => Probe::Legacy,
        }),
        Err(e) if e.is_rpc() => match e.code().unwrap_or_default() {
            code::UNSUPPORTED_PROTOCOL_VERSION => {
                let supported = e
                    .rpc_error()
                    .and_then(Error::data)
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .map(|list| {
                        list.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    });
                Ok(match supported {
                    Some(list) => Probe::Unsupported(list),
                    None => Probe::Legacy,
                })
            }
            code::HEADER_MISMATCH | code::MISSING_CLIENT_CAPABILITY => Ok(Probe::Modern(Box::new(
                Negotiated::modern_without_discover(version),
            ))),
            _ => Ok(Probe::Legacy),
        },
        Err(e) if e.is_timeout() => Ok(Probe::Legacy),
        Err(e) if e.is_transport() && e.status().is_none() => Err(e),
        Err(e) if e.is_transport() || e.is_protocol() => Ok(Probe::Legacy),
        Err(e) => Err(e),
    }
}

/// Falls back to `initialize`: each legacy revision in turn while the
/// server answers with an error.
async fn initialize_any(
    shared: &Arc<Shared>,
    versions: &[String],
) -> Result<Negotiated, ClientError> {
    let mut last = None;
    for version in versions {
        match legacy::initialize(shared, version).await {
            Ok(n) => return Ok(n),
            Err(e) if e.is_rpc() => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        ClientError::protocol(
            ProtocolErrorKind::Version,
            "no protocol revision in common with the server",
        )
    }))
}

/// Picks the revision and learns the server's identity and capabilities.
pub(crate) async fn negotiate(shared: &Arc<Shared>) -> Result<Negotiated, ClientError> {
    if shared.transport.initialize_only() {
        let versions: Vec<String> = match &shared.config.version {
            VersionPolicy::Pin(version) if LEGACY_VERSIONS.contains(&version.as_str()) => {
                vec![version.clone()]
            }
            VersionPolicy::Pin(version) => {
                return Err(ClientError::protocol(
                    ProtocolErrorKind::Version,
                    format!("an HTTP+SSE (2024-11-05) server cannot speak {version}"),
                ));
            }
            VersionPolicy::Auto => LEGACY_VERSIONS.iter().map(|v| v.to_string()).collect(),
        };
        return initialize_any(shared, &versions).await;
    }
    match &shared.config.version {
        VersionPolicy::Pin(version) if LEGACY_VERSIONS.contains(&version.as_str()) => {
            legacy::initialize(shared, version).await
        }
        VersionPolicy::Pin(version) => match probe(shared, version).await? {
            Probe::Modern(n) => Ok(*n),
            Probe::Unsupported(list) => Err(ClientError::protocol(
                ProtocolErrorKind::Version,
                format!(
                    "the server does not support protocol version {version} (it supports {})",
                    list.join(", ")
                ),
            )),
            Probe::Legacy => Ok(Negotiated::modern_without_discover(version)),
        },
        VersionPolicy::Auto => {
            let first = MODERN_VERSIONS[0];
            match probe(shared, first).await? {
                Probe::Modern(n) => Ok(*n),
                Probe::Legacy => {
                    initialize_any(
                        shared,
                        &LEGACY_VERSIONS
                            .iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>(),
                    )
                    .await
                }
                Probe::Unsupported(list) => {
                    if let Some(modern) = MODERN_VERSIONS
                        .iter()
                        .find(|v| list.iter().any(|s| s == *v))
                    {
                        return match probe(shared, modern).await? {
                            Probe::Modern(n) => Ok(*n),
                            Probe::Unsupported(again) => Err(ClientError::protocol(
                                ProtocolErrorKind::Version,
                                format!(
                                    "the server rejected protocol version {modern} it claims to support ({})",
                                    again.join(", ")
                                ),
                            )),
                            Probe::Legacy => Ok(Negotiated::modern_without_discover(modern)),
                        };
                    }
                    let legacy: Vec<String> = LEGACY_VERSIONS
                        .iter()
                        .filter(|v| list.iter().any(|s| s == *v))
                        .map(|v| v.to_string())
                        .collect();
                    if legacy.is_empty() {
                        return Err(ClientError::protocol(
                            ProtocolErrorKind::Version,
                            format!(
                                "no protocol revision in common with the server (it supports {})",
                                list.join(", ")
                            ),
                        ));
                    }
                    initialize_any(shared, &legacy).await
                }
            }
        }
    }
}
