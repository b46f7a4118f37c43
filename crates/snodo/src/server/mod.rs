//! The server: an immutable registry of components and the dispatch pipeline
//! every transport calls.
//!
//! Everything that can be computed once is computed in [`ServerBuilder::build`]:
//! name and schema checks, compiled validators, the `x-mcp-header` map of each
//! tool, and the serialized list pages. The catalog changes at runtime only
//! through [`Server::add_tool`] and its siblings, which build a new catalog,
//! swap it in, and announce the change to listeners.

mod admission;
mod builder;
mod call;
mod catalog;
mod complete;
pub(crate) mod connection;
mod dispatch;
mod error;
mod extension;
mod instance;
pub mod legacy;
mod list;
mod listen;
mod outcome;
mod policy;
mod prompts;
mod rate;
mod registry;
mod reply;
mod resources;
mod scope_policy;
mod scopes;
mod shares;
#[cfg(feature = "skills")]
mod skills;
mod state_needs;
mod stream;
mod tasks;

pub use crate::events::{Event, EventHub, LISTENER_QUEUE};
pub use crate::keyring::{Keyring, KeyringError};
pub use crate::mrtr::{DEFAULT_STATE_TTL, MAX_STATE_TTL, StateError, StateSealer};
pub use builder::{DEFAULT_REQUEST_TIMEOUT, ServerBuilder};
pub use catalog::Capability;
pub use complete::MAX_COMPLETION_VALUES;
pub use error::{BuildError, RuleError};
pub use extension::Extension;
#[cfg(feature = "client")]
pub(crate) use instance::Group;
pub(crate) use instance::Inner;
pub use instance::Server;
pub use listen::{MAX_RESOURCE_SUBSCRIPTIONS, MAX_TASK_SUBSCRIPTIONS};
pub use policy::{Item, Policy};
#[cfg(feature = "client")]
pub(crate) use rate::Bucket;
#[cfg(feature = "http")]
pub(crate) use rate::Buckets;
pub use rate::{MAX_TRACKED_CALLERS, Rate};
pub use reply::{Dispatched, Forbidden, Reply};
pub use scope_policy::{ExactScopes, ScopePolicy};
pub use shares::DEFAULT_MAX_SUBSCRIPTIONS_PER_SHARE;
#[cfg(feature = "http")]
pub(crate) use stream::First;
pub use stream::{ABANDON_GRACE, ResponseStream};

/// Events: what changed ([`Event`]), the hub that fans events
/// out to the open listen streams and session streams
/// ([`EventHub`]), and the bus that carries them between the
/// nodes of one service ([`bus`](events::bus)).
pub mod events {
    pub use crate::events::*;
}

/// One keyring for everything a server seals: key ids with secrets, the
/// newest sealing, every one opening, loadable from configuration so that
/// every node of a service agrees, and reloadable so that a key rotates
/// with no downtime. It seals request state
/// ([`StateSealer`]) and authenticates what the
/// nodes of a service share: the envelopes of the event bus
/// ([`EventHub::with_bus`](crate::events::EventHub::with_bus)), each
/// purpose under a key of its own derived from the secrets.
///
/// The configuration format is one `KEY_ID=BASE64_SECRET` per line (the
/// secret at least 32 bytes, standard or URL-safe base64, padded or not;
/// blank lines and lines starting with `#` are skipped); **the last line
/// seals, every line opens.** A rotation in three steps, each rolled out to
/// every node (or picked up by [`Keyring::watch_file`]) before the next:
/// add the new key as the first line (every node opens it), move it to the
/// last line (nodes seal with it), and once the longest lifetime of sealed
/// state has passed, remove the old one.
///
/// ```
/// use snodo::server::keyring::Keyring;
/// let (old, new) = (Keyring::generate_secret()?, Keyring::generate_secret()?);
/// let ring = Keyring::parse(&format!("old={old}\nnew={new}\n")).unwrap();
/// assert_eq!(ring.sealing_id(), "new");
/// assert_eq!(ring.ids(), ["old", "new"]);
/// assert!(Keyring::parse("short=AAAA").is_err());
/// # Ok::<(), snodo::RandomUnavailable>(())
/// ```
pub mod keyring {
    pub use crate::keyring::*;
}
