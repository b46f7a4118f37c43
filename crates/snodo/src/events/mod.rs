//! Events: what changed ([`Event`]), the hub that fans events out to the
//! open listen streams and session streams ([`EventHub`]), and the bus that
//! carries them between the nodes of one service ([`bus`]).

pub mod bus;
pub(crate) mod envelope;
mod event;
mod hub;
mod window;

pub use event::{Event, SessionChange};
pub use hub::{EventHub, LISTENER_QUEUE, REPLAY_WINDOW};

#[cfg_attr(not(feature = "http"), allow(unused_imports))]
pub(crate) use event::SessionSink;
pub(crate) use hub::Slot;
