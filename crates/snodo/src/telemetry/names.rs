//! What a request names (its tool, prompt or resource URI) and the span
//! name made from it.

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
    /// What a request for `method` names, from the params it sends.
    #[cfg(feature = "client")]
    pub(crate) fn in_params(
        method: &str,
        params: &'a serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        Self::of(method, crate::wire::target_in(method, params))
    }

    /// What a request for `method` names, given its target (read out of its
    /// params when it was decoded).
    pub(crate) fn of(method: &str, target: Option<&'a str>) -> Self {
        match method {
            "tools/call" => Names {
                tool: target,
                prompt: None,
                uri: None,
            },
            "prompts/get" => Names {
                tool: None,
                prompt: target,
                uri: None,
            },
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Names {
                tool: None,
                prompt: None,
                uri: target,
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
