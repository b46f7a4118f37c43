//! JSON-RPC request ids.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The longest string id accepted, in bytes.
pub(crate) const MAX_ID_BYTES: usize = 256;

/// A JSON-RPC request id: a string or an integer, never null.
///
/// Responses echo it with the same JSON type.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id (at most 256 bytes).
    String(Arc<str>),
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for null, floats, integers outside
    /// i64, strings over 256 bytes and every other type.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            Value::String(s) => Self::from_text(s),
            _ => None,
        }
    }

    /// A string id, `None` when it is over 256 bytes.
    pub(crate) fn from_text(s: &str) -> Option<Self> {
        (s.len() <= MAX_ID_BYTES).then(|| RequestId::String(s.into()))
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::String(s.to_string()),
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        RequestId::from_value(&value)
            .ok_or_else(|| serde::de::Error::custom("request id must be a string or an integer"))
    }
}
