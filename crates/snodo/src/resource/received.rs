//! Read results as a client receives them, and as it gives them back.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::{ReadKind, ReadResult, ResourceContents};

/// Contents as received: a non-empty `uri` and exactly one string `text`
/// or base64 `blob`; every member kept.
impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let contents = ResourceContents(Map::deserialize(deserializer)?);
        if !contents.is_valid() {
            return Err(serde::de::Error::custom(
                "resource contents need a non-empty `uri` and exactly one string `text` or base64 `blob`",
            ));
        }
        Ok(contents)
    }
}

/// A `resources/read` result as received: its contents, or the input an
/// `input_required` answer asks for; every member kept, in order, for
/// [`Serialize`] to give back.
impl<'de> Deserialize<'de> for ReadResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = Map::<String, Value>::deserialize(deserializer)?;
        let mut read = ReadResult::from_wire(map.clone()).map_err(D::Error::custom)?;
        read.received = Some(Box::new(map));
        Ok(read)
    }
}

impl ReadResult {
    /// A result as received, its contents moved out of `result` (nothing
    /// of it is kept to give back).
    pub(crate) fn from_wire(result: Map<String, Value>) -> Result<Self, String> {
        let kind = match crate::mrtr::received(result, "contents", "a read result")? {
            Ok(contents) => ReadKind::Contents(contents),
            Err(input) => ReadKind::InputRequired(input),
        };
        Ok(ReadResult {
            kind,
            cache: None,
            received: None,
        })
    }
}

/// The members received, unchanged; a result built here writes its
/// contents (or its `input_required` answer) and the cache hints it sets.
impl Serialize for ReadResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(received) = &self.received {
            return received.serialize(serializer);
        }
        match &self.kind {
            ReadKind::InputRequired(input) => input.to_wire().serialize(serializer),
            ReadKind::Contents(contents) => {
                let mut out = Map::new();
                out.insert(
                    "contents".into(),
                    Value::Array(contents.iter().map(|c| c.clone().into_value()).collect()),
                );
                if let Some(cache) = self.cache {
                    cache.apply(&mut out);
                }
                out.serialize(serializer)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_received_result_reads_and_writes_back_unchanged() {
        let wire = json!({
            "_meta": {"x": 1},
            "contents": [
                {"uri": "docs://a", "text": "# A", "mimeType": "text/markdown"},
                {"uri": "docs://b", "blob": "AAEC"}
            ],
            "ttl": 5
        });
        let result: ReadResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(result.items().len(), 2);
        assert_eq!(result.items()[0].as_text(), Some("# A"));
        assert_eq!(result.items()[0].mime_type(), Some("text/markdown"));
        assert_eq!(result.items()[1].as_blob(), Some("AAEC"));
        assert_eq!(result.items()[1].uri(), "docs://b");
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            serde_json::to_string(&wire).unwrap()
        );
    }

    #[test]
    fn malformed_results_are_refused_with_the_reason() {
        for (wire, reason) in [
            (json!({"contents": {}}), "needs a `contents` array"),
            (json!({"contents": [{"uri": "a"}]}), "contents[0]"),
            (
                json!({"contents": [{"uri": "", "text": "x"}]}),
                "non-empty `uri`",
            ),
            (
                json!({"contents": [{"uri": "a", "text": "x", "blob": "AA=="}]}),
                "exactly one",
            ),
            (
                json!({"contents": [{"uri": "a", "blob": "not base64!"}]}),
                "base64",
            ),
            (
                json!({"resultType": "input_required", "inputRequests": {"k": {}}}),
                "has no method",
            ),
        ] {
            let err = serde_json::from_value::<ReadResult>(wire).unwrap_err();
            assert!(err.to_string().contains(reason), "{err}");
        }
    }

    #[test]
    fn an_input_required_answer_keeps_its_requests_and_state() {
        let wire = json!({
            "resultType": "input_required",
            "inputRequests": {"ok": {"method": "elicitation/create", "params": {"message": "?"}}},
            "requestState": "s1"
        });
        let result: ReadResult = serde_json::from_value(wire).unwrap();
        let input = result.as_input_required().unwrap();
        assert_eq!(input.request_state(), Some("s1"));
        assert_eq!(input.requests()["ok"]["method"], "elicitation/create");
        assert!(result.items().is_empty());
    }

    #[test]
    fn a_built_result_writes_its_contents() {
        let built = ReadResult::contents([ResourceContents::text("docs://a", "A")]);
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"contents": [{"uri": "docs://a", "text": "A"}]})
        );
    }
}
