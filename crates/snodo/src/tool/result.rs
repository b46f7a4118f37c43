//! Tool results and the conversions handlers may return.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Content;
use crate::error::HandlerError;
use crate::mrtr::InputRequired;

/// What a tool call produces: a result, or a [`HandlerError`].
///
/// An `Err` made from a [`crate::Error`] fails the JSON-RPC request; one made
/// from any other error (`?` on an `io::Error`, an `anyhow::Error`, ...)
/// becomes an `isError: true` result carrying its message. The error's type
/// decides, never its contents.
pub type CallResult = Result<ToolResult, HandlerError>;

/// The result of a tool call.
///
/// ```
/// use snodo::ToolResult;
/// use serde_json::json;
/// let r = ToolResult::structured(json!({"sum": 3}));
/// assert_eq!(
///     r.to_wire(),
///     json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}})
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    kind: Kind,
    meta: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text(String),
    Structured(Value),
    Content(Vec<Content>),
    Raw(Map<String, Value>),
    // Made by the proxy (feature `client`) only.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    Encoded(Box<Encoded>),
    Error(Vec<Content>),
    InputRequired(InputRequired),
}

/// A result object kept as JSON text (a proxy's, as its backend sent it),
/// decoded only when a member is asked for.
#[derive(Debug, Clone)]
struct Encoded {
    /// The object's text, as [`ToolResult::encoded`] requires it.
    text: Box<RawValue>,
    is_error: bool,
    structured: bool,
    decoded: OnceLock<Map<String, Value>>,
}

impl Encoded {
    /// The members, decoded on first use.
    fn map(&self) -> &Map<String, Value> {
        self.decoded
            .get_or_init(|| serde_json::from_str(self.text.get()).unwrap_or_default())
    }

    fn into_map(self) -> Map<String, Value> {
        match self.decoded.into_inner() {
            Some(map) => map,
            None => serde_json::from_str(self.text.get()).unwrap_or_default(),
        }
    }
}

impl PartialEq for Encoded {
    fn eq(&self, other: &Self) -> bool {
        self.map() == other.map()
    }
}

/// The shape of a [`ToolResult`], as the output-schema check sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResultShape {
    /// Text or content blocks without structured content.
    Unstructured,
    /// Carries `structuredContent`.
    Structured,
    /// An `isError: true` result.
    Error,
    /// An `input_required` result.
    InputRequired,
}

impl ToolResult {
    fn of(kind: Kind) -> Self {
        Self {
            kind,
            meta: Map::new(),
        }
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::of(Kind::Text(text.into()))
    }

    /// Structured content (any JSON value), plus its JSON text in a text block.
    pub fn structured(value: Value) -> Self {
        Self::of(Kind::Structured(value))
    }

    /// Content blocks, sent unchanged.
    pub fn content(blocks: impl IntoIterator<Item = Content>) -> Self {
        Self::of(Kind::Content(blocks.into_iter().collect()))
    }

    /// A wire-shaped result object; `content` defaults to `[]`.
    pub fn raw(result: Map<String, Value>) -> Self {
        Self::of(Kind::Raw(result))
    }

    /// A result object kept as its JSON text, written out as it is. `text`
    /// must be an object whose `content` is an array, whose
    /// `structuredContent`, when present, is an object, and that has none
    /// of `resultType`, `_meta`, `ttlMs` and `cacheScope`; `is_error` and
    /// `structured` say whether `isError` is `true` and whether it has
    /// `structuredContent`.
    #[cfg(feature = "client")]
    pub(crate) fn encoded(text: Box<RawValue>, is_error: bool, structured: bool) -> Self {
        Self::of(Kind::Encoded(Box::new(Encoded {
            text,
            is_error,
            structured,
            decoded: OnceLock::new(),
        })))
    }

    /// A tool-level failure: a successful response with `isError: true`, so the
    /// model sees the message and can correct itself.
    pub fn error(message: impl Into<String>) -> Self {
        Self::of(Kind::Error(vec![Content::text(message)]))
    }

    /// A tool-level failure with any content blocks.
    pub fn error_content(blocks: impl IntoIterator<Item = Content>) -> Self {
        Self::of(Kind::Error(blocks.into_iter().collect()))
    }

    /// A multi round-trip answer: the client must fulfil the input requests and
    /// retry with their responses.
    pub fn input_required(request: InputRequired) -> Self {
        Self::of(Kind::InputRequired(request))
    }

    /// Adds a key to the result's `_meta`.
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// The result's shape.
    pub fn shape(&self) -> ResultShape {
        match &self.kind {
            Kind::Text(_) | Kind::Content(_) => ResultShape::Unstructured,
            Kind::Structured(_) => ResultShape::Structured,
            Kind::Raw(map) => {
                if map.get("isError") == Some(&Value::Bool(true)) {
                    ResultShape::Error
                } else if map.contains_key("structuredContent") {
                    ResultShape::Structured
                } else {
                    ResultShape::Unstructured
                }
            }
            Kind::Encoded(e) if e.is_error => ResultShape::Error,
            Kind::Encoded(e) if e.structured => ResultShape::Structured,
            Kind::Encoded(_) => ResultShape::Unstructured,
            Kind::Error(_) => ResultShape::Error,
            Kind::InputRequired(_) => ResultShape::InputRequired,
        }
    }

    /// Whether the wire form holds a member the protocol layer sets
    /// (`_meta`, `resultType`), so that the server's stamp must be merged
    /// into it rather than appended.
    pub(crate) fn has_protocol_members(&self) -> bool {
        !self.meta.is_empty()
            || match &self.kind {
                Kind::Raw(map) => map.contains_key("_meta") || map.contains_key("resultType"),
                Kind::InputRequired(_) => true,
                _ => false,
            }
    }

    /// Whether its wire form is an initialize-era tool result as it is:
    /// no `_meta`, none of the members that revision lacks, and
    /// `structuredContent`, when present, an object.
    pub(crate) fn fits_initialize_era(&self) -> bool {
        self.meta.is_empty()
            && match &self.kind {
                Kind::Text(_) | Kind::Content(_) | Kind::Error(_) | Kind::Encoded(_) => true,
                Kind::Structured(value) => value.is_object(),
                Kind::Raw(_) | Kind::InputRequired(_) => false,
            }
    }

    /// Whether this is an `isError: true` result.
    pub fn is_error(&self) -> bool {
        self.shape() == ResultShape::Error
    }

    /// The structured content, if any.
    pub fn structured_content(&self) -> Option<&Value> {
        match &self.kind {
            Kind::Structured(v) => Some(v),
            Kind::Raw(map) => map.get("structuredContent"),
            Kind::Encoded(e) if e.structured => e.map().get("structuredContent"),
            _ => None,
        }
    }

    /// The text of the result's text blocks, joined by newlines (empty when
    /// there is none).
    ///
    /// ```
    /// let r: snodo::ToolResult = serde_json::from_value(serde_json::json!({
    ///     "content": [{"type": "text", "text": "a"}, {"type": "image", "data": "", "mimeType": "image/png"},
    ///                 {"type": "text", "text": "b"}],
    ///     "isError": true
    /// })).unwrap();
    /// assert_eq!(r.text_content(), "a\nb");
    /// assert!(r.is_error());
    /// ```
    pub fn text_content(&self) -> String {
        match &self.kind {
            Kind::Text(text) => text.clone(),
            _ => {
                let wire = self.to_wire();
                let blocks = wire.get("content").and_then(Value::as_array);
                blocks
                    .into_iter()
                    .flatten()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
    }

    /// The content blocks, as sent on the wire.
    pub fn content_blocks(&self) -> Vec<Content> {
        let wire = self.to_wire();
        let blocks = wire.get("content").and_then(Value::as_array).cloned();
        blocks
            .unwrap_or_default()
            .into_iter()
            .filter_map(|b| serde_json::from_value(b).ok())
            .collect()
    }

    /// The result's `_meta`: the members added with [`ToolResult::with_meta`],
    /// or those a server sent.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        match &self.kind {
            Kind::Raw(map) if self.meta.is_empty() => map.get("_meta").and_then(Value::as_object),
            _ => (!self.meta.is_empty()).then_some(&self.meta),
        }
    }

    /// The input requests of an `input_required` result.
    pub fn as_input_required(&self) -> Option<&InputRequired> {
        match &self.kind {
            Kind::InputRequired(r) => Some(r),
            _ => None,
        }
    }

    /// [`ToolResult::to_wire`]'s object, by value.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        match self.into_wire() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// [`ToolResult::to_wire`], by value: a result as received (a proxy's)
    /// is handed on without a copy.
    pub(crate) fn into_wire(self) -> Value {
        if !self.meta.is_empty() {
            return self.to_wire();
        }
        match self.kind {
            Kind::Raw(mut map) => {
                map.entry("content")
                    .or_insert_with(|| Value::Array(Vec::new()));
                Value::Object(map)
            }
            Kind::Encoded(encoded) => Value::Object((*encoded).into_map()),
            kind => Self {
                kind,
                meta: self.meta,
            }
            .to_wire(),
        }
    }

    /// The result's members as sent on the wire, without `resultType` and the
    /// server's `_meta` (the protocol layer adds those).
    pub fn to_wire(&self) -> Value {
        let mut out = Map::new();
        match &self.kind {
            Kind::Text(text) => {
                out.insert(
                    "content".into(),
                    Value::Array(vec![Content::text(text.clone()).into()]),
                );
            }
            Kind::Structured(value) => {
                let text = serde_json::to_string(value).unwrap_or_default();
                out.insert(
                    "content".into(),
                    Value::Array(vec![Content::text(text).into()]),
                );
                out.insert("structuredContent".into(), value.clone());
            }
            Kind::Content(blocks) => {
                out.insert("content".into(), blocks_value(blocks));
            }
            Kind::Raw(map) => {
                out.clone_from(map);
                out.entry("content")
                    .or_insert_with(|| Value::Array(Vec::new()));
            }
            Kind::Encoded(encoded) => out.clone_from(encoded.map()),
            Kind::Error(blocks) => {
                out.insert("content".into(), blocks_value(blocks));
                out.insert("isError".into(), Value::Bool(true));
            }
            Kind::InputRequired(request) => return request.to_wire(),
        }
        if !self.meta.is_empty() {
            let meta = out
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.extend(self.meta.clone());
            }
        }
        Value::Object(out)
    }
}

/// A result as received: every member kept, in order;
/// [`ToolResult::to_wire`] gives them back unchanged.
impl<'de> serde::Deserialize<'de> for ToolResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        Self::from_wire(map).map_err(serde::de::Error::custom)
    }
}

impl ToolResult {
    /// A result read from its wire members, kept as they are: `content`
    /// (when given) must be an array and `_meta` an object.
    pub(crate) fn from_wire(map: Map<String, Value>) -> Result<Self, &'static str> {
        if map.get("content").is_some_and(|c| !c.is_array()) {
            return Err("`content` must be an array");
        }
        if map.get("_meta").is_some_and(|m| !m.is_object()) {
            return Err("`_meta` must be an object");
        }
        Ok(Self::raw(map))
    }
}

/// The wire members, `_meta` included: written straight from the result's
/// parts, members in the order [`ToolResult::to_wire`]'s map holds them
/// (by name), without building that map.
impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if !self.meta.is_empty() {
            return self.to_wire().serialize(serializer);
        }
        match &self.kind {
            Kind::Text(text) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("content", &[TextBlock(text)])?;
                map.end()
            }
            Kind::Structured(value) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("content", &[TextBlock(JsonText(value))])?;
                map.serialize_entry("structuredContent", value)?;
                map.end()
            }
            Kind::Content(blocks) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("content", blocks)?;
                map.end()
            }
            Kind::Error(blocks) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("content", blocks)?;
                map.serialize_entry("isError", &true)?;
                map.end()
            }
            // A map that has `content` is written as it is (a proxy's
            // results are all of this kind); one without goes through
            // `to_wire`, which adds it.
            Kind::Raw(map) if map.contains_key("content") => map.serialize(serializer),
            // Written as received: its members in the backend's order.
            Kind::Encoded(encoded) => encoded.text.serialize(serializer),
            Kind::Raw(_) | Kind::InputRequired(_) => self.to_wire().serialize(serializer),
        }
    }
}

/// A text content block, `{"text": ..., "type": "text"}` (members by name,
/// as a block's map holds them).
struct TextBlock<T>(T);

impl<T: Serialize> Serialize for TextBlock<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("text", &self.0)?;
        map.serialize_entry("type", "text")?;
        map.end()
    }
}

/// A JSON value serialized as the string of its compact JSON text, written
/// as it is produced (no intermediate `String`).
struct JsonText<'a>(&'a Value);

impl Serialize for JsonText<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

fn blocks_value(blocks: &[Content]) -> Value {
    Value::Array(blocks.iter().cloned().map(Value::from).collect())
}

/// Structured output from any `Serialize` value.
///
/// ```
/// use snodo::{Json, IntoCallResult};
/// #[derive(serde::Serialize)]
/// struct Total { sum: i64 }
/// let result = Json(Total { sum: 3 }).into_call_result().unwrap();
/// assert_eq!(result.structured_content(), Some(&serde_json::json!({"sum": 3})));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// Conversion of a handler's return value into a [`CallResult`].
///
/// `#[snodo::tool]` functions may return any type implementing it:
/// [`CallResult`], [`ToolResult`], `String` and `&str` (one text block),
/// [`Content`] and `Vec<Content>`, `serde_json::Value` and [`Json<T>`]
/// (structured content), and `Result<T, E>` of one of them whose error
/// converts into [`HandlerError`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "`{Self}` does not implement `IntoCallResult`",
    note = "return `CallResult`, `ToolResult`, `String`, `&'static str`, `Content`, `Vec<Content>`, \
            `serde_json::Value`, `Json<T>` (with `T: Serialize`), or a `Result<T, E>` of one of \
            them whose error converts into `HandlerError`"
)]
pub trait IntoCallResult {
    /// Converts the value.
    fn into_call_result(self) -> CallResult;
}

impl IntoCallResult for ToolResult {
    fn into_call_result(self) -> CallResult {
        Ok(self)
    }
}

impl IntoCallResult for String {
    fn into_call_result(self) -> CallResult {
        Ok(ToolResult::text(self))
    }
}

impl IntoCallResult for &str {
    fn into_call_result(self) -> CallResult {
        Ok(ToolResult::text(self))
    }
}

impl IntoCallResult for Value {
    fn into_call_result(self) -> CallResult {
        Ok(ToolResult::structured(self))
    }
}

impl IntoCallResult for Content {
    fn into_call_result(self) -> CallResult {
        Ok(ToolResult::content([self]))
    }
}

impl IntoCallResult for Vec<Content> {
    fn into_call_result(self) -> CallResult {
        Ok(ToolResult::content(self))
    }
}

impl<T: Serialize> IntoCallResult for Json<T> {
    fn into_call_result(self) -> CallResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => Ok(ToolResult::structured(value)),
            Err(e) => Err(
                crate::Error::internal("Tool result could not be serialized")
                    .with_cause(e)
                    .into(),
            ),
        }
    }
}

impl<T: IntoCallResult, E: Into<HandlerError>> IntoCallResult for Result<T, E> {
    fn into_call_result(self) -> CallResult {
        match self {
            Ok(v) => v.into_call_result(),
            Err(e) => Err(e.into()),
        }
    }
}

impl From<String> for ToolResult {
    fn from(text: String) -> Self {
        ToolResult::text(text)
    }
}

impl From<&str> for ToolResult {
    fn from(text: &str) -> Self {
        ToolResult::text(text)
    }
}

impl<T: Serialize> From<Json<T>> for ToolResult {
    fn from(json: Json<T>) -> Self {
        ToolResult::structured(serde_json::to_value(&json.0).unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The direct encoding writes the same bytes as encoding the wire map.
    #[test]
    fn a_result_encodes_to_the_bytes_of_its_wire_map() {
        let structured = json!({
            "sum": 3, "big": 1.5e300, "text": "quote \" backslash \\ line\nend \u{1F600} \u{0001}",
            "nested": {"b": [1, null, true], "a": {}}, "empty": []
        });
        let mut raw = Map::new();
        raw.insert("content".into(), json!([{"type": "text", "text": "r"}]));
        raw.insert("zeta".into(), json!(1));
        let results = [
            ToolResult::text("plain \"text\"\twith escapes"),
            ToolResult::structured(structured.clone()),
            ToolResult::structured(json!("a string")),
            ToolResult::structured(Value::Null),
            ToolResult::content([Content::text("a"), Content::image("aGk=", "image/png")]),
            ToolResult::content([]),
            ToolResult::error("failed: \"why\""),
            ToolResult::error_content([Content::text("x").with("annotations", json!({}))]),
            ToolResult::raw(raw),
            ToolResult::raw(Map::new()),
            ToolResult::text("with meta").with_meta("k", json!(1)),
            ToolResult::structured(structured).with_meta("k", json!({"z": 1})),
        ];
        for result in results {
            assert_eq!(
                String::from_utf8(serde_json::to_vec(&result).unwrap()).unwrap(),
                serde_json::to_string(&result.to_wire()).unwrap(),
                "{result:?}"
            );
        }
    }
}
