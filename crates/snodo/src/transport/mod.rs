//! Transports: stdio, the Streamable HTTP listener and the tower `Service`.
//!
//! A transport adds framing, concurrency, limits, cancellation and streaming;
//! it never re-implements a protocol rule.

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod stdio;

pub use stdio::StdioOptions;
