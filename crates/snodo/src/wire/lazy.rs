//! A JSON object kept as the text that was sent, read into a [`Value`] the
//! first time it is asked for: most handlers never look at the client's
//! name or capabilities, and a request need not build maps nobody reads.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

/// A JSON object, held as text until read.
///
/// The decoder keeps `io.modelcontextprotocol/clientInfo` and
/// `io.modelcontextprotocol/clientCapabilities` this way; [`get`](Self::get)
/// reads the text once and keeps the value. A clone of an object that still
/// has its text shares the text and reads it again only if asked, so a
/// session's declarations are handed to each request without a copy.
///
/// ```
/// use serde_json::json;
/// use snodo::model::LazyObject;
/// let caps = LazyObject::new(json!({"elicitation": {}}).as_object().unwrap().clone());
/// assert!(caps.get().get("elicitation").is_some());
/// assert_eq!(caps, LazyObject::shared(json!({"elicitation": {}})));
/// ```
#[derive(Default)]
pub struct LazyObject {
    /// The object's text, when it came as text (or was written out to be
    /// shared).
    text: Option<Arc<str>>,
    /// The value, once read (or from the start, when built from one).
    value: OnceLock<Value>,
}

impl LazyObject {
    /// An object already read.
    pub fn new(map: Map<String, Value>) -> Self {
        Self {
            text: None,
            value: OnceLock::from(Value::Object(map)),
        }
    }

    /// An object whose clones share its text: `value` is written out once
    /// and kept read. Anything but an object gives an empty one.
    pub fn shared(value: Value) -> Self {
        let value = match value {
            Value::Object(map) => Value::Object(map),
            _ => Value::Object(Map::new()),
        };
        let text = serde_json::to_string(&value).ok().map(Arc::from);
        Self {
            text,
            value: OnceLock::from(value),
        }
    }

    /// An object from the text the decoder checked (an object: it starts
    /// with `{`). `{}` is kept read, without text.
    pub(crate) fn from_text(text: &str) -> Self {
        if text == "{}" {
            return Self::new(Map::new());
        }
        Self {
            text: Some(Arc::from(text)),
            value: OnceLock::new(),
        }
    }

    /// The object (a [`Value::Object`]), read from its text on first use.
    pub fn get(&self) -> &Value {
        self.value.get_or_init(|| read(self.text.as_deref()))
    }

    /// The object as a value.
    pub fn into_value(self) -> Value {
        match self.value.into_inner() {
            Some(value) => value,
            None => read(self.text.as_deref()),
        }
    }

    /// The object as a map.
    pub fn into_map(self) -> Map<String, Value> {
        match self.into_value() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

/// Reads an object's text. The decoder checked the text as JSON within its
/// bounds, so this does not fail; were it to, the object is empty.
fn read(text: Option<&str>) -> Value {
    match text.map(serde_json::from_str::<Value>) {
        Some(Ok(value @ Value::Object(_))) => value,
        _ => Value::Object(Map::new()),
    }
}

impl Clone for LazyObject {
    fn clone(&self) -> Self {
        match &self.text {
            // The text is shared; the clone reads it if asked.
            Some(text) => Self {
                text: Some(text.clone()),
                value: OnceLock::new(),
            },
            None => Self {
                text: None,
                value: OnceLock::from(self.get().clone()),
            },
        }
    }
}

impl PartialEq for LazyObject {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl fmt::Debug for LazyObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.get(), f)
    }
}

impl From<Map<String, Value>> for LazyObject {
    fn from(map: Map<String, Value>) -> Self {
        Self::new(map)
    }
}

impl From<Value> for LazyObject {
    /// Anything but an object gives an empty one.
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => Self::new(map),
            _ => Self::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_read_once_and_clones_share_it() {
        let object = LazyObject::from_text(r#"{"name":"c","version":"1"}"#);
        assert!(object.value.get().is_none());
        assert_eq!(object.get(), &json!({"name": "c", "version": "1"}));
        let copy = object.clone();
        assert!(copy.value.get().is_none(), "a clone reads only if asked");
        assert!(Arc::ptr_eq(
            object.text.as_ref().unwrap(),
            copy.text.as_ref().unwrap()
        ));
        assert_eq!(copy.into_value(), json!({"name": "c", "version": "1"}));
    }

    #[test]
    fn an_empty_object_keeps_no_text() {
        let empty = LazyObject::from_text("{}");
        assert!(empty.text.is_none());
        assert_eq!(empty.get(), &json!({}));
        assert_eq!(LazyObject::default().get(), &json!({}));
    }

    #[test]
    fn shared_objects_clone_without_copying_the_value() {
        let caps = LazyObject::shared(json!({"roots": {"listChanged": true}}));
        assert!(caps.value.get().is_some());
        let copy = caps.clone();
        assert!(copy.value.get().is_none());
        assert_eq!(copy, caps);
        assert_eq!(LazyObject::shared(json!([1])).get(), &json!({}));
    }

    #[test]
    fn text_that_is_no_object_reads_as_empty() {
        assert_eq!(LazyObject::from_text("[1]").get(), &json!({}));
        assert_eq!(LazyObject::from_text("{").into_map(), Map::new());
    }
}
