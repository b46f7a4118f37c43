//! The boxed future that object-safe traits return, for tools, resources,
//! prompts, extensions and client handlers alike.

use std::future::Future;
use std::pin::Pin;

/// A boxed, `Send` future living for `'a`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
