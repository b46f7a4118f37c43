//! A prompt and its arguments as `prompts/list` publishes them (and as a
//! client receives them).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A prompt as `prompts/list` publishes it.
///
/// Members this version does not model are kept in
/// [`extra`](Self::extra) (a [`PromptArgument`] keeps only its four
/// members). An argument received without `required` reads as optional
/// (and is written back with `"required": false`); an optional member sent
/// as `null` is left out.
///
/// ```
/// use serde_json::json;
/// use snodo::prompt::PromptDefinition;
/// let listed = json!({"name": "review", "arguments": [{"name": "code", "required": true}]});
/// let prompt: PromptDefinition = serde_json::from_value(listed.clone()).unwrap();
/// assert!(prompt.arguments[0].required);
/// assert_eq!(serde_json::to_value(&prompt).unwrap(), listed);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptDefinition {
    /// The prompt's name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes (none: left out of the JSON).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
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

impl PromptDefinition {
    /// A prompt named `name`, nothing else set.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: None,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// A declared prompt argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default)]
    pub required: bool,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            required: true,
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>) -> Self {
        Self {
            required: false,
            ..Self::required(name)
        }
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}
