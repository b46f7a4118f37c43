//! Negotiated extensions: extra methods that run only when both sides
//! declared the extension.

use serde_json::{Map, Value};

use crate::tool::BoxFuture;
use crate::{Context, Error};

/// A protocol extension, advertised in `capabilities.extensions` under its
/// name (which contains a `/`, e.g. `com.example/search`).
///
/// Its methods run only when the request's client capabilities declare the
/// extension too (unless [`Extension::client_declares`] says it defines no
/// client declaration); otherwise they fail with -32021 naming it.
pub trait Extension: Send + Sync + 'static {
    /// The extension id, e.g. `com.example/search`.
    fn name(&self) -> &str;

    /// The settings object advertised for the extension.
    fn settings(&self) -> Value {
        Value::Object(Map::new())
    }

    /// The methods the extension adds.
    fn methods(&self) -> Vec<String>;

    /// Whether its methods need the client to declare the extension too
    /// (the default). An extension that defines no client declaration
    /// answers whoever saw the server's.
    fn client_declares(&self) -> bool {
        true
    }

    /// Handles one of its methods; the result object gets `resultType` and
    /// server info like any other.
    fn handle<'a>(
        &'a self,
        method: &'a str,
        params: Map<String, Value>,
        cx: Context,
    ) -> BoxFuture<'a, Result<Map<String, Value>, Error>>;
}
