//! The JSON-RPC 2.0 envelope: bounded decoding, request ids, encoding.
//!
//! Decoding never panics, whatever the bytes: a message is either a
//! [`Message`] or a [`DecodeError`] that carries the JSON-RPC error to send
//! (and the request id, when it could be read).

mod canonical;
pub(crate) mod decode;
mod encode;
// Only the client reads the envelope of a message too long to decode.
#[cfg(feature = "client")]
pub(crate) mod envelope;
mod id;
mod lazy;
pub(crate) mod lines;
pub(crate) mod meta;
mod scan;
mod target;

pub(crate) use canonical::canonical;
#[cfg(feature = "client")]
pub(crate) use decode::strip_bom;
pub use decode::{DecodeError, Limits, Message, Notification, Request, decode};
pub(crate) use encode::{encode_error, encode_notification, encode_raw_result, encode_result};
pub(crate) use encode::{encode_result_with_tail, encoded_len};
pub use id::RequestId;
pub use lazy::LazyObject;
pub use meta::{Meta, MetaParts};
#[cfg(feature = "client")]
pub(crate) use scan::scan;
pub(crate) use target::target_in;
pub(crate) use target::target_member;
