//! `completion/complete` from the client's side: what to complete, and the
//! values the server offers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// A reference to complete an argument of (`completion/complete`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionRef {
    /// A prompt, by name (`ref/prompt`).
    Prompt(String),
    /// A resource or resource template, by URI (`ref/resource`).
    Resource(String),
}

impl CompletionRef {
    /// The `ref` object of a `completion/complete` request.
    pub fn to_json(&self) -> Value {
        match self {
            CompletionRef::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            CompletionRef::Resource(uri) => json!({"type": "ref/resource", "uri": uri}),
        }
    }
}

/// The values a server offers for one argument: the `completion` member of
/// a `completion/complete` result.
///
/// ```
/// use serde_json::json;
/// use snodo::client::Completion;
/// let offered = json!({"values": ["python", "pytorch"], "total": 10, "hasMore": true});
/// let completion: Completion = serde_json::from_value(offered.clone()).unwrap();
/// assert_eq!(completion.values, ["python", "pytorch"]);
/// assert_eq!((completion.total, completion.has_more), (Some(10), Some(true)));
/// assert_eq!(serde_json::to_value(&completion).unwrap(), offered);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// The values, best first.
    pub values: Vec<String>,
    /// How many values there are in all, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more values than these, when the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    /// Members this version does not model, kept as received.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `completion` member of a result, read as a [`Completion`].
pub(super) fn from_result(mut result: Value) -> Result<Completion, serde_json::Error> {
    let completion = result
        .get_mut("completion")
        .map(Value::take)
        .unwrap_or(Value::Null);
    serde_json::from_value(completion)
}
