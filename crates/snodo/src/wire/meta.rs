//! The `_meta` member of a request's `params`, decoded in parts: the three
//! members every 2026-07-28 request carries are read out as they arrive, the
//! rest stays a map. Nothing is checked here (admission does that, with its
//! own messages); the parts only keep a member where its type allows, so
//! that [`Meta::into_value`] gives back the members that were sent. The
//! client's name and capabilities stay text until read ([`LazyObject`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::LazyObject;

/// The request's protocol revision.
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's declared capabilities.
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The client's name and version.
pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// A request's `params._meta`, as sent.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Meta {
    /// The request has no `_meta`.
    #[default]
    Absent,
    /// An object, read in parts (boxed: a request stays small to move).
    Object(Box<MetaParts>),
    /// Anything but an object (`null` included), kept as sent.
    Other(Value),
}

/// The members of a `_meta` object: each of the three standard ones is read
/// out when it has its type, and stays in [`rest`](MetaParts::rest) when it
/// has another.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct MetaParts {
    /// `io.modelcontextprotocol/protocolVersion`, when a string.
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities`, when an object.
    pub client_capabilities: Option<LazyObject>,
    /// `io.modelcontextprotocol/clientInfo`, when an object.
    pub client_info: Option<LazyObject>,
    /// Every other member.
    pub rest: Map<String, Value>,
}

impl MetaParts {
    /// Adds one member as it arrives; a later member of the same name
    /// replaces an earlier one, as in a map.
    pub(crate) fn put(&mut self, key: Cow<'_, str>, value: Value) {
        let key = match (key.as_ref(), value) {
            (PROTOCOL_VERSION, Value::String(v)) => {
                self.protocol_version = Some(v);
                key
            }
            (CLIENT_CAPABILITIES, Value::Object(v)) => {
                self.client_capabilities = Some(v.into());
                key
            }
            (CLIENT_INFO, Value::Object(v)) => {
                self.client_info = Some(v.into());
                key
            }
            (_, value) => {
                match key.as_ref() {
                    PROTOCOL_VERSION => self.protocol_version = None,
                    CLIENT_CAPABILITIES => self.client_capabilities = None,
                    CLIENT_INFO => self.client_info = None,
                    _ => {}
                }
                self.rest.insert(key.into_owned(), value);
                return;
            }
        };
        self.rest.remove(key.as_ref());
    }

    /// Whether `key` is a member kept as text, unread, when it is an
    /// object ([`put_text`](Self::put_text)).
    pub(crate) fn keeps_text(key: &str) -> bool {
        key == CLIENT_CAPABILITIES || key == CLIENT_INFO
    }

    /// Adds one member that [`keeps_text`](Self::keeps_text), as the
    /// decoder checked it. `plain` says the text has no escape (a lone
    /// surrogate passes a check, not a read) and no number with an exponent
    /// (`1e400` passes a check, not a read; without one a number within
    /// the decoder's digit limit is in range): such an object's text is kept
    /// unread; anything else is read and put as [`put`](Self::put) would.
    pub(crate) fn put_text(
        &mut self,
        key: Cow<'_, str>,
        text: &str,
        plain: bool,
    ) -> Result<(), serde_json::Error> {
        if !text.starts_with('{') || !plain {
            self.put(key, serde_json::from_str(text)?);
            return Ok(());
        }
        let object = LazyObject::from_text(text);
        if key == CLIENT_CAPABILITIES {
            self.client_capabilities = Some(object);
        } else {
            self.client_info = Some(object);
        }
        self.rest.remove(key.as_ref());
        Ok(())
    }

    /// The whole object again.
    pub fn into_map(self) -> Map<String, Value> {
        let mut map = self.rest;
        if let Some(v) = self.protocol_version {
            map.insert(PROTOCOL_VERSION.into(), Value::String(v));
        }
        if let Some(v) = self.client_capabilities {
            map.insert(CLIENT_CAPABILITIES.into(), v.into_value());
        }
        if let Some(v) = self.client_info {
            map.insert(CLIENT_INFO.into(), v.into_value());
        }
        map
    }
}

impl Meta {
    /// Reads a `_meta` value in parts.
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Object(map) => {
                let mut parts = MetaParts::default();
                for (key, value) in map {
                    parts.put(Cow::Owned(key), value);
                }
                Meta::Object(Box::new(parts))
            }
            other => Meta::Other(other),
        }
    }

    /// The `_meta` member of a request's params: absent, or read in parts.
    pub fn from_member(member: Option<Value>) -> Self {
        member.map_or(Meta::Absent, Meta::from_value)
    }

    /// The `_meta` value as sent, `None` when absent.
    pub fn into_value(self) -> Option<Value> {
        match self {
            Meta::Absent => None,
            Meta::Object(parts) => Some(Value::Object(parts.into_map())),
            Meta::Other(value) => Some(value),
        }
    }

    /// Whether the request has a `_meta` member, of any type.
    pub fn is_present(&self) -> bool {
        !matches!(self, Meta::Absent)
    }

    /// Whether it claims 2026-07-28: an
    /// `io.modelcontextprotocol/protocolVersion` member, of any type.
    pub fn claims_modern(&self) -> bool {
        match self {
            Meta::Object(parts) => {
                parts.protocol_version.is_some() || parts.rest.contains_key(PROTOCOL_VERSION)
            }
            _ => false,
        }
    }

    /// The protocol version, when sent as a string.
    pub fn protocol_version(&self) -> Option<&str> {
        match self {
            Meta::Object(parts) => parts.protocol_version.as_deref(),
            _ => None,
        }
    }

    /// The members other than the three standard ones (`None` unless
    /// `_meta` is an object).
    pub fn rest(&self) -> Option<&Map<String, Value>> {
        match self {
            Meta::Object(parts) => Some(&parts.rest),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_keeps_the_revision_and_the_rest() {
        let meta = Meta::from_value(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        }));
        let Meta::Object(parts) = &meta else {
            unreachable!()
        };
        assert_eq!(parts.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(parts.rest.contains_key("traceparent"));
        assert_eq!(
            meta.into_value().unwrap()["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
    }

    /// Whatever is sent comes back unchanged, a standard member of the
    /// wrong type staying among the rest.
    #[test]
    fn parts_round_trip_whatever_was_sent() {
        for sent in [
            json!({}),
            json!({PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {"x": {}},
                   CLIENT_INFO: {"name": "c"}, "progressToken": 1}),
            json!({PROTOCOL_VERSION: 7, CLIENT_CAPABILITIES: [], CLIENT_INFO: null}),
            json!(null),
            json!("x"),
        ] {
            assert_eq!(Meta::from_value(sent.clone()).into_value(), Some(sent));
        }
        let Meta::Object(parts) = Meta::from_value(json!({PROTOCOL_VERSION: 7})) else {
            panic!("an object");
        };
        assert_eq!(parts.protocol_version, None);
        assert_eq!(parts.rest[PROTOCOL_VERSION], 7);
    }

    /// A later member of the same name wins, whichever types the two have.
    #[test]
    fn a_later_member_replaces_an_earlier_one() {
        let mut parts = MetaParts::default();
        parts.put(Cow::Borrowed(PROTOCOL_VERSION), json!("2026-07-28"));
        parts.put(Cow::Borrowed(PROTOCOL_VERSION), json!(7));
        assert_eq!(parts.protocol_version, None);
        assert_eq!(parts.rest[PROTOCOL_VERSION], 7);
        parts.put(Cow::Borrowed(PROTOCOL_VERSION), json!("2025-11-25"));
        assert_eq!(parts.protocol_version.as_deref(), Some("2025-11-25"));
        assert!(parts.rest.is_empty());
    }

    #[test]
    fn claims_modern_whatever_the_version_type() {
        assert!(Meta::from_value(json!({PROTOCOL_VERSION: "x"})).claims_modern());
        assert!(Meta::from_value(json!({PROTOCOL_VERSION: 1})).claims_modern());
        assert!(!Meta::from_value(json!({"progressToken": 1})).claims_modern());
        assert!(!Meta::Absent.claims_modern());
        assert!(!Meta::Other(json!(null)).claims_modern());
    }
}
