//! [`AppResource`]: an app's HTML as a `ui://` resource, with what the
//! host needs to sandbox it (`_meta.ui`).

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::names::{MIME_TYPE, SCHEME};
use crate::Context;
use crate::error::HandlerError;
use crate::resource::{ReadRequest, ReadResult, Resource, ResourceContents};

/// The origins an app may reach (its Content Security Policy); each list
/// empty or left out means none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// `connect-src`: fetch, XHR and WebSocket origins.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Images, scripts, styles, fonts and media.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Nested frames.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// `base-uri`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// The sandbox permissions an app asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions {
    /// The camera.
    pub camera: bool,
    /// The microphone.
    pub microphone: bool,
    /// Geolocation.
    pub geolocation: bool,
    /// Writing to the clipboard.
    pub clipboard_write: bool,
}

impl Permissions {
    fn to_value(self) -> Value {
        let mut out = Map::new();
        for (on, name) in [
            (self.camera, "camera"),
            (self.microphone, "microphone"),
            (self.geolocation, "geolocation"),
            (self.clipboard_write, "clipboardWrite"),
        ] {
            if on {
                out.insert(name.into(), json!({}));
            }
        }
        Value::Object(out)
    }
}

/// An app: an HTML document served at a `ui://` URI as
/// `text/html;profile=mcp-app`, with its `_meta.ui` (CSP, permissions,
/// dedicated domain, border preference) in the listing and on the content
/// read.
#[derive(Debug, Clone)]
pub struct AppResource {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    html: String,
    csp: Option<Csp>,
    permissions: Option<Permissions>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

impl AppResource {
    /// The app `html` at `uri` (`ui://…`, checked when the server is built),
    /// named `name`.
    pub fn html(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            html: html.into(),
            csp: None,
            permissions: None,
            domain: None,
            prefers_border: None,
        }
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the app shows.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The origins the app may reach (by default: none).
    pub fn csp(mut self, csp: Csp) -> Self {
        self.csp = Some(csp);
        self
    }

    /// The sandbox permissions the app asks for (by default: none).
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// The dedicated origin the host should give the app, in the host's
    /// format.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border around the app.
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.prefers_border = Some(prefers);
        self
    }

    /// Whether the URI is a `ui://` one with something after the scheme.
    pub(crate) fn has_app_uri(&self) -> bool {
        self.uri.len() > SCHEME.len() && self.uri.starts_with(SCHEME)
    }

    /// The `_meta.ui` object (empty when nothing was set).
    pub fn ui_meta(&self) -> Value {
        let mut ui = Map::new();
        if let Some(csp) = &self.csp {
            ui.insert(
                "csp".into(),
                serde_json::to_value(csp).unwrap_or_else(|_| json!({})),
            );
        }
        if let Some(p) = self.permissions {
            ui.insert("permissions".into(), p.to_value());
        }
        if let Some(d) = &self.domain {
            ui.insert("domain".into(), d.clone().into());
        }
        if let Some(b) = self.prefers_border {
            ui.insert("prefersBorder".into(), b.into());
        }
        Value::Object(ui)
    }
}

impl Resource for AppResource {
    fn uri(&self) -> Option<&str> {
        Some(&self.uri)
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    fn mime_type(&self) -> Option<&str> {
        Some(MIME_TYPE)
    }

    fn size(&self) -> Option<u64> {
        Some(self.html.len() as u64)
    }

    fn meta(&self) -> Option<Value> {
        let ui = self.ui_meta();
        (ui.as_object().is_some_and(|m| !m.is_empty())).then(|| json!({"ui": ui}))
    }

    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let mut item =
            ResourceContents::text(req.uri, self.html.as_str()).with_mime_type(MIME_TYPE);
        if let Some(meta) = self.meta() {
            item = item.with("_meta", meta);
        }
        Ok(item.into())
    }
}
