//! What a request names (its tool, prompt or resource URI) and the span
//! name made from it.

use serde_json::{Map, Value};

use super::Capture;
use super::text::Text;

/// The span name `{mcp.method.name} {target}` when there is a target
/// (without one, the name is the method itself).
pub(crate) fn span_name(method: &str, target: Option<&str>) -> Option<Text<128>> {
    target.map(|t| Text::pair(method, t))
}

/// What a request names: the tool, the prompt or the resource URI.
pub(crate) struct Names<'a> {
    pub(crate) tool: Option<&'a str>,
    pub(crate) prompt: Option<&'a str>,
    pub(crate) uri: Option<&'a str>,
}

impl<'a> Names<'a> {
    pub(crate) fn of(method: &str, params: &'a Map<String, Value>) -> Self {
        let get = |key: &str| params.get(key).and_then(Value::as_str);
        match method {
            "tools/call" => Names {
                tool: get("name"),
                prompt: None,
                uri: None,
            },
            "prompts/get" => Names {
                tool: None,
                prompt: get("name"),
                uri: None,
            },
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Names {
                tool: None,
                prompt: None,
                uri: get("uri"),
            },
            _ => Names {
                tool: None,
                prompt: None,
                uri: None,
            },
        }
    }

    /// The span name's target: the tool or prompt, the URI only if opted in.
    pub(crate) fn target(&self, capture: &Capture) -> Option<&'a str> {
        self.tool
            .or(self.prompt)
            .or(self.uri.filter(|_| capture.uri_in_span_name))
    }
}
