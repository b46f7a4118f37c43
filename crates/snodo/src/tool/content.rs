//! Content blocks: text, image, audio, resource links and embedded resources.

use serde::Serialize;
use serde_json::{Map, Value};

/// One content block of a tool result or prompt message.
///
/// Blocks are plain JSON objects on the wire; the constructors build the
/// shapes the specification defines, and [`Content::with`] adds any other
/// member (`annotations`, `_meta`, ...).
///
/// ```
/// use snodo::Content;
/// let block = Content::image("iVBORw0KGgo=", "image/png");
/// assert_eq!(serde_json::to_value(&block).unwrap()["type"], "image");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Content(Map<String, Value>);

impl Content {
    fn typed(kind: &str) -> Self {
        let mut map = Map::new();
        map.insert("type".into(), kind.into());
        Content(map)
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::typed("text").with("text", text.into())
    }

    /// An image block: base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::typed("image")
            .with("data", data.into())
            .with("mimeType", mime_type.into())
    }

    /// An audio block: base64 `data` and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::typed("audio")
            .with("data", data.into())
            .with("mimeType", mime_type.into())
    }

    /// A link to a resource (which need not appear in `resources/list`).
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::typed("resource_link")
            .with("uri", uri.into())
            .with("name", name.into())
    }

    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let mut resource = Map::new();
        resource.insert("uri".into(), uri.into().into());
        resource.insert("mimeType".into(), mime_type.into().into());
        resource.insert("text".into(), text.into().into());
        Self::typed("resource").with("resource", Value::Object(resource))
    }

    /// An embedded binary resource: base64 `blob`.
    pub fn embedded_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> Self {
        let mut resource = Map::new();
        resource.insert("uri".into(), uri.into().into());
        resource.insert("mimeType".into(), mime_type.into().into());
        resource.insert("blob".into(), blob.into().into());
        Self::typed("resource").with("resource", Value::Object(resource))
    }

    /// Sets any member of the block, e.g. `annotations`, `_meta`, `title`, `size`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// Sets the block's `annotations`.
    pub fn with_annotations(self, annotations: Value) -> Self {
        self.with("annotations", annotations)
    }

    /// The block as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The block's `type`.
    pub fn kind(&self) -> &str {
        self.0.get("type").and_then(Value::as_str).unwrap_or("")
    }
}

impl From<Content> for Value {
    fn from(c: Content) -> Value {
        Value::Object(c.0)
    }
}
