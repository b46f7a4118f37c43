//! The Tasks extension in process: literal request vectors, every answer
//! checked field by field, and the memory store against the store contract.

mod cancellation;
mod extension;
mod input;
mod listeners;
mod principals;
mod requests;
mod server;
mod store;
