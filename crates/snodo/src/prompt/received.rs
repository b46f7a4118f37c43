//! Prompt results as a client receives them, and as it gives them back.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::PromptResult;

/// A `prompts/get` result as received: its messages (each a `user` or
/// `assistant` role and a content block) and description, or the input an
/// `input_required` answer asks for; every member kept, in order, for
/// [`Serialize`] to give back.
impl<'de> Deserialize<'de> for PromptResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = Map::<String, Value>::deserialize(deserializer)?;
        let mut prompt = PromptResult::from_wire(map.clone()).map_err(D::Error::custom)?;
        prompt.received = Some(Box::new(map));
        Ok(prompt)
    }
}

impl PromptResult {
    /// A result as received, its messages moved out of `result` (nothing
    /// of it is kept to give back).
    pub(crate) fn from_wire(mut result: Map<String, Value>) -> Result<Self, String> {
        let description = match result.remove("description") {
            None | Some(Value::Null) => None,
            Some(Value::String(d)) => Some(d),
            Some(_) => return Err("`description` is not a string".into()),
        };
        let messages = crate::mrtr::received(result, "messages", "a prompt result")?;
        Ok(PromptResult {
            description,
            messages,
            received: None,
        })
    }
}

/// The members received, unchanged; a result built here writes its
/// description and messages (or its `input_required` answer).
impl Serialize for PromptResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if let Some(received) = &self.received {
            return received.serialize(serializer);
        }
        match &self.messages {
            Err(input) => input.to_wire().serialize(serializer),
            Ok(messages) => {
                let mut map = serializer.serialize_map(None)?;
                if let Some(d) = &self.description {
                    map.serialize_entry("description", d)?;
                }
                map.serialize_entry("messages", messages)?;
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Content;
    use crate::prompt::PromptMessage;

    #[test]
    fn a_received_result_reads_and_writes_back_unchanged() {
        let wire = json!({
            "description": "A greeting",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hello"}},
                {"role": "assistant", "content": {"type": "text", "text": "Hi"}}
            ],
            "_meta": {"x": 1}
        });
        let result: PromptResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(result.description(), Some("A greeting"));
        assert_eq!(
            result.messages(),
            [
                PromptMessage::user_text("Hello"),
                PromptMessage::assistant(Content::text("Hi"))
            ]
        );
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            serde_json::to_string(&wire).unwrap()
        );
    }

    #[test]
    fn malformed_results_are_refused_with_the_reason() {
        for (wire, reason) in [
            (json!({}), "needs a `messages` array"),
            (
                json!({"messages": [{"role": "system", "content": {"type": "text", "text": "x"}}]}),
                "messages[0]",
            ),
            (json!({"messages": [{"role": "user"}]}), "messages[0]"),
            (json!({"messages": [], "description": 3}), "not a string"),
            (
                json!({"resultType": "input_required", "requestState": 1}),
                "requestState",
            ),
        ] {
            let err = serde_json::from_value::<PromptResult>(wire).unwrap_err();
            assert!(err.to_string().contains(reason), "{err}");
        }
    }

    #[test]
    fn a_built_result_writes_its_description_and_messages() {
        let built = PromptResult::new([PromptMessage::user_text("Hello")]).with_description("d");
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "Hello"}}]})
        );
    }
}
