//! A resource and a resource template as `resources/list` and
//! `resources/templates/list` publish them (and as a client receives them).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A resource with a fixed URI, as `resources/list` publishes it.
///
/// Members this version does not model are kept in
/// [`extra`](Self::extra), so that what a client received serializes back
/// with every member it held, but two: an optional member sent as `null`
/// is left out, and a missing `name` is written as `""`.
///
/// ```
/// use serde_json::json;
/// use snodo::resource::ResourceDefinition;
/// let listed = json!({"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "x-new": 1});
/// let resource: ResourceDefinition = serde_json::from_value(listed.clone()).unwrap();
/// assert_eq!(resource.mime_type.as_deref(), Some("text/plain"));
/// assert_eq!(serde_json::to_value(&resource).unwrap(), listed);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceDefinition {
    /// The resource's URI.
    pub uri: String,
    /// Its name (empty when the server left it out).
    #[serde(default)]
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Audience, priority and the like, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// Its `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Members this version does not model, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template, as `resources/templates/list` publishes it.
///
/// ```
/// use serde_json::json;
/// use snodo::resource::TemplateDefinition;
/// let listed = json!({"uriTemplate": "file:///{path}", "name": "files"});
/// let template: TemplateDefinition = serde_json::from_value(listed.clone()).unwrap();
/// assert_eq!(template.uri_template, "file:///{path}");
/// assert_eq!(serde_json::to_value(&template).unwrap(), listed);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TemplateDefinition {
    /// The RFC 6570 template of the URIs it reads.
    pub uri_template: String,
    /// Its name (empty when the server left it out).
    #[serde(default)]
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of its resources, when they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Audience, priority and the like, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// Its `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Members this version does not model, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResourceDefinition {
    /// A resource at `uri` named `name`, nothing else set.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            size: None,
            icons: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

impl TemplateDefinition {
    /// A template of `uri_template` named `name`, nothing else set.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            meta: None,
            extra: Map::new(),
        }
    }
}
