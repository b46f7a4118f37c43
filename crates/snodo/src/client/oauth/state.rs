//! What the flow remembers between refusals, and its bound.

use std::collections::HashMap;

use crate::protocol::auth::metadata::ServerMetadata;

/// The most authorizations one request may cause (initial, step-ups).
pub const MAX_AUTHORIZATIONS: usize = 3;

/// What the flow remembers between challenges.
#[derive(Debug, Default)]
pub(crate) struct FlowState {
    /// Per endpoint: the issuer of its tokens and the scopes asked so far.
    pub(super) endpoints: HashMap<String, EndpointFlow>,
    /// Authorization server metadata by issuer.
    pub(super) metadata: HashMap<String, ServerMetadata>,
}

/// What one endpoint's flow remembers.
#[derive(Debug, Default)]
pub(super) struct EndpointFlow {
    /// The issuer of the tokens now in use.
    pub(super) issuer: Option<String>,
    /// Every scope asked for so far from that issuer (step-up asks for the
    /// union).
    pub(super) requested: Vec<String>,
}
