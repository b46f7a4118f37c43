//! The `Resource` behaviour: data a server exposes by URI, at a fixed `uri` or
//! under an RFC 6570 `uri_template` (the subset [`template`] documents).
//!
//! The [`#[snodo::resource]`](macro@crate::resource) attribute writes the impl
//! from an `async fn` returning anything [`IntoReadResult`]; by hand:
//!
//! ```
//! use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
//! use snodo::{Context, HandlerError};
//!
//! struct Greeting;
//!
//! impl Resource for Greeting {
//!     fn uri_template(&self) -> Option<&str> { Some("demo://greetings/{name}") }
//!     fn name(&self) -> &str { "greeting" }
//!     fn mime_type(&self) -> Option<&str> { Some("text/plain") }
//!     async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
//!         let name = req.var("name").unwrap_or("stranger");
//!         Ok(ResourceContents::text(&req.uri, format!("Hello, {name}!")).into())
//!     }
//! }
//! ```

pub use snodo_rules::template;
pub use snodo_rules::template::{TemplateError, UriTemplate};

mod definition;
mod received;

pub use definition::{ResourceDefinition, TemplateDefinition};

use std::future::Future;

use serde_json::{Map, Value};

use crate::Context;
use crate::error::HandlerError;
use crate::mrtr::InputRequired;
use crate::protocol::CacheHints;

/// A resource or a family of resources under a URI template.
pub trait Resource: Send + Sync + 'static {
    /// The fixed URI of this resource (exactly one of `uri` and
    /// `uri_template` must be given).
    fn uri(&self) -> Option<&str> {
        None
    }

    /// The RFC 6570 template of this family of resources.
    fn uri_template(&self) -> Option<&str> {
        None
    }

    /// A unique name.
    fn name(&self) -> &str;

    /// A human-readable title.
    fn title(&self) -> Option<&str> {
        None
    }

    /// What the resource holds.
    fn description(&self) -> Option<&str> {
        None
    }

    /// The MIME type of the contents.
    fn mime_type(&self) -> Option<&str> {
        None
    }

    /// Annotations (`audience`, `priority`, `lastModified`), as a JSON object.
    fn annotations(&self) -> Option<Value> {
        None
    }

    /// The size in bytes, if known (fixed resources only).
    fn size(&self) -> Option<u64> {
        None
    }

    /// Icons, as a JSON array.
    fn icons(&self) -> Option<Value> {
        None
    }

    /// The OAuth scopes a principal needs to use this component over an
    /// authorized transport (none: the server's default scopes apply).
    fn required_scopes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The resource's `_meta` object.
    fn meta(&self) -> Option<Value> {
        None
    }

    /// The registered state the handler needs (see
    /// [`FromCall::state_needs`](crate::extract::FromCall::state_needs)):
    /// checked when the component is registered. `#[snodo::resource]` lists what
    /// its parameters need.
    fn state_needs(&self) -> Vec<crate::extract::StateNeed> {
        Vec::new()
    }

    /// Reads the resource. For a template, `req.vars` holds the matched
    /// variables, percent-decoded once.
    fn read(
        &self,
        req: ReadRequest,
        cx: Context,
    ) -> impl Future<Output = Result<ReadResult, HandlerError>> + Send;

    /// Whether [`Resource::complete`] offers values (advertises `completions`).
    fn completes(&self) -> bool {
        false
    }

    /// Suggests values for the template variable `variable` starting from `value`.
    fn complete(
        &self,
        variable: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> impl Future<Output = Vec<String>> + Send {
        let _ = (variable, value, context);
        async { Vec::new() }
    }
}

/// The request a resource reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadRequest {
    /// The requested URI, as sent.
    pub uri: String,
    /// Variables matched by the template (empty for fixed resources).
    pub vars: Vec<(String, String)>,
}

impl crate::extract::FromCall<ReadRequest> for ReadRequest {
    fn from_call(input: &ReadRequest, _cx: &Context) -> Result<Self, crate::extract::Rejection> {
        Ok(input.clone())
    }
}

impl ReadRequest {
    /// A matched variable.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One item of a read's `contents`: text or base64 blob.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct ResourceContents(Map<String, Value>);

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        let mut map = Map::new();
        map.insert("uri".into(), uri.into().into());
        map.insert("text".into(), text.into().into());
        Self(map)
    }

    /// Binary contents, base64-encoded.
    pub fn blob(uri: impl Into<String>, base64: impl Into<String>) -> Self {
        let mut map = Map::new();
        map.insert("uri".into(), uri.into().into());
        map.insert("blob".into(), base64.into().into());
        Self(map)
    }

    /// Sets the MIME type.
    pub fn with_mime_type(self, mime: impl Into<String>) -> Self {
        self.with("mimeType", mime.into())
    }

    /// Sets any member (`annotations`, `_meta`, ...).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// Whether the contents are well formed: a URI and exactly one of
    /// string `text` or base64 `blob`.
    pub(crate) fn is_valid(&self) -> bool {
        let uri = self
            .0
            .get("uri")
            .and_then(Value::as_str)
            .is_some_and(|u| !u.is_empty());
        let text = self.0.get("text").map(Value::is_string);
        let blob = self.0.get("blob").and_then(Value::as_str).map(is_base64);
        uri && matches!((text, blob), (Some(true), None) | (None, Some(true)))
    }

    pub(crate) fn into_value(self) -> Value {
        Value::Object(self.0)
    }

    /// The same contents at another URI.
    #[cfg(feature = "client")]
    pub(crate) fn at(mut self, uri: String) -> Self {
        self.0.insert("uri".into(), uri.into());
        self
    }

    /// The URI these contents are of.
    pub fn uri(&self) -> &str {
        self.0
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        self.0.get("text").and_then(Value::as_str)
    }

    /// The base64 bytes, for binary contents.
    pub fn as_blob(&self) -> Option<&str> {
        self.0.get("blob").and_then(Value::as_str)
    }

    /// The MIME type, when given.
    pub fn mime_type(&self) -> Option<&str> {
        self.0.get("mimeType").and_then(Value::as_str)
    }

    /// Any member (`annotations`, `_meta`, ...).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
}

fn is_base64(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

/// What a read produces.
///
/// A result a client received keeps every member as sent (for `serde` to
/// give back), so it equals only a result received alike: compare
/// [`items`](Self::items) to compare contents.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadResult {
    pub(crate) kind: ReadKind,
    pub(crate) cache: Option<CacheHints>,
    /// The result as a client received it, every member in order.
    pub(crate) received: Option<Box<Map<String, Value>>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ReadKind {
    Contents(Vec<ResourceContents>),
    InputRequired(InputRequired),
}

impl ReadResult {
    /// Contents.
    pub fn contents(items: impl IntoIterator<Item = ResourceContents>) -> Self {
        Self {
            kind: ReadKind::Contents(items.into_iter().collect()),
            cache: None,
            received: None,
        }
    }

    /// A multi round-trip answer.
    pub fn input_required(request: InputRequired) -> Self {
        Self {
            kind: ReadKind::InputRequired(request),
            cache: None,
            received: None,
        }
    }

    /// Overrides the server's cache hints for this read.
    pub fn with_cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self.received = None;
        self
    }

    /// The contents read (none for an `input_required` answer).
    pub fn items(&self) -> &[ResourceContents] {
        match &self.kind {
            ReadKind::Contents(items) => items,
            ReadKind::InputRequired(_) => &[],
        }
    }

    /// The input asked for, for an `input_required` answer.
    pub fn as_input_required(&self) -> Option<&InputRequired> {
        match &self.kind {
            ReadKind::InputRequired(input) => Some(input),
            ReadKind::Contents(_) => None,
        }
    }
}

impl From<ResourceContents> for ReadResult {
    fn from(c: ResourceContents) -> Self {
        ReadResult::contents([c])
    }
}

impl From<Vec<ResourceContents>> for ReadResult {
    fn from(c: Vec<ResourceContents>) -> Self {
        ReadResult::contents(c)
    }
}

/// Conversion of a read handler's return value into a read's outcome.
///
/// `#[snodo::resource]` functions may return any type implementing it:
///
/// | type | outcome |
/// | --- | --- |
/// | [`ReadResult`] | itself |
/// | [`ResourceContents`] | one item of contents |
/// | `Vec<ResourceContents>` | those contents |
/// | `String`, `&str` | one text item at the URI that was read, with the resource's MIME type |
/// | `Result<T, E>` with `T: IntoReadResult`, `E: Into<HandlerError>` | `T`'s outcome, or the error |
///
/// A conversion learns which URI was read and the resource's declared MIME
/// type (the macro passes `ReadRequest::uri` and [`Resource::mime_type`]);
/// only the conversions that build contents themselves use them.
///
/// ```
/// use snodo::resource::{IntoReadResult, ReadResult, ResourceContents};
///
/// let text = "# Title".into_read_result("docs://readme", Some("text/markdown")).unwrap();
/// assert_eq!(
///     text,
///     ReadResult::from(
///         ResourceContents::text("docs://readme", "# Title").with_mime_type("text/markdown")
///     )
/// );
///
/// let failed: Result<String, std::io::Error> = Err(std::io::ErrorKind::NotFound.into());
/// assert!(failed.into_read_result("docs://readme", None).is_err());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource read",
    label = "`{Self}` does not implement `IntoReadResult`",
    note = "return `ReadResult`, `ResourceContents`, `Vec<ResourceContents>`, `String`, `&'static str`, \
            or a `Result<T, E>` of one of them whose error converts into `HandlerError`"
)]
pub trait IntoReadResult {
    /// Converts the value. `uri` is the URI that was read and `mime_type` the
    /// resource's declared MIME type.
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError>;
}

impl IntoReadResult for ReadResult {
    fn into_read_result(
        self,
        _uri: &str,
        _mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError> {
        Ok(self)
    }
}

impl IntoReadResult for ResourceContents {
    fn into_read_result(
        self,
        _uri: &str,
        _mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError> {
        Ok(self.into())
    }
}

impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(
        self,
        _uri: &str,
        _mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError> {
        Ok(self.into())
    }
}

impl IntoReadResult for String {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError> {
        let contents = ResourceContents::text(uri, self);
        Ok(match mime_type {
            Some(mime) => contents.with_mime_type(mime),
            None => contents,
        }
        .into())
    }
}

impl IntoReadResult for &str {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError> {
        self.to_owned().into_read_result(uri, mime_type)
    }
}

impl<T: IntoReadResult, E: Into<HandlerError>> IntoReadResult for Result<T, E> {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResult, HandlerError> {
        match self {
            Ok(value) => value.into_read_result(uri, mime_type),
            Err(error) => Err(error.into()),
        }
    }
}

/// What `resources/list` (a resource with a fixed URI) or
/// `resources/templates/list` (a template) publishes of `resource`; `None`
/// for a resource with neither, which a server refuses to build.
pub(crate) fn listed<R: Resource + ?Sized>(resource: &R) -> Option<Value> {
    let text = |s: Option<&str>| s.map(str::to_owned);
    let listed = if let Some(uri) = resource.uri() {
        serde_json::to_value(ResourceDefinition {
            title: text(resource.title()),
            description: text(resource.description()),
            mime_type: text(resource.mime_type()),
            annotations: resource.annotations(),
            size: resource.size(),
            icons: resource.icons(),
            meta: resource.meta(),
            ..ResourceDefinition::new(uri, resource.name())
        })
    } else {
        serde_json::to_value(TemplateDefinition {
            title: text(resource.title()),
            description: text(resource.description()),
            mime_type: text(resource.mime_type()),
            annotations: resource.annotations(),
            icons: resource.icons(),
            meta: resource.meta(),
            ..TemplateDefinition::new(resource.uri_template()?, resource.name())
        })
    };
    listed.ok()
}
