//! A backend's answers turned into the proxy server's: results with the
//! backend's protocol members taken off, `input_required` rebuilt, errors
//! kept as they were sent.

use serde_json::{Map, Value};

use super::naming::Naming;
use crate::Error;
use crate::client::ClientError;
use crate::client::answer::RawResult;
use crate::error::{HandlerError, code};
use crate::mrtr::InputRequired;
use crate::prompt::PromptResult;
use crate::resource::{ReadKind, ReadResult};
use crate::tool::ToolResult;

/// A failed request to backend `id`: a JSON-RPC error the backend sent is
/// passed on as it is (code, message, data); any other failure (the
/// backend is gone, timed out, broke the protocol) is an internal error
/// naming the backend.
pub(crate) fn error(id: &str, e: ClientError) -> HandlerError {
    match e.into_rpc_error() {
        Ok(error) => HandlerError::protocol(error),
        Err(other) => HandlerError::protocol(Error::new(
            code::INTERNAL_ERROR,
            format!("backend {id:?} failed: {other}"),
        )),
    }
}

/// A backend's tool result as the proxy's own: the usual one kept as the
/// backend's text (written out as it is), any other decoded, the members
/// the proxy's own server sets (`resultType`, the backend's server info)
/// taken off either way.
pub(crate) fn tool_result(answer: RawResult) -> Result<ToolResult, HandlerError> {
    match answer {
        RawResult::Split(split) => Ok(ToolResult::encoded(
            split.members,
            split.is_error,
            split.structured,
        )),
        answer => match answer.into_value() {
            Value::Object(map) => {
                ToolResult::from_wire(map).map_err(|e| protocol(format!("a tool result: {e}")))
            }
            _ => Err(protocol("a tool result that is not an object".into())),
        },
    }
}

/// The `input_required` answer of a backend, as the proxy's own.
pub(crate) fn input_required(result: &Value) -> Result<InputRequired, HandlerError> {
    let Value::Object(map) = result else {
        return Err(protocol(
            "an input_required answer that is not an object".into(),
        ));
    };
    InputRequired::from_wire(map).map_err(protocol)
}

/// A backend result that broke the protocol.
pub(crate) fn protocol(message: String) -> HandlerError {
    HandlerError::protocol(Error::new(
        code::INTERNAL_ERROR,
        format!("the backend sent a malformed result: {message}"),
    ))
}

/// A `resources/read` result, its URIs as the proxy's clients see them (an
/// `input_required` answer never reaches here: the forwarder takes it).
pub(crate) fn read_result(result: Value, naming: &Naming) -> Result<ReadResult, HandlerError> {
    let read = ReadResult::from_wire(object(result, "a read result")?)
        .map_err(|e| protocol(format!("a read result: {e}")))?;
    let contents = match read.kind {
        ReadKind::Contents(contents) => contents.into_iter(),
        ReadKind::InputRequired(_) => Vec::new().into_iter(),
    };
    Ok(ReadResult::contents(
        contents
            .map(|item| {
                let uri = naming.uri(item.uri());
                item.at(uri)
            })
            .collect::<Vec<_>>(),
    ))
}

/// A `prompts/get` result (an `input_required` answer never reaches here:
/// the forwarder takes it).
pub(crate) fn prompt_result(result: Value) -> Result<PromptResult, HandlerError> {
    PromptResult::from_wire(object(result, "a prompt result")?)
        .map_err(|e| protocol(format!("a prompt result: {e}")))
}

/// A backend's result as the object it must be.
fn object(result: Value, what: &str) -> Result<Map<String, Value>, HandlerError> {
    match result {
        Value::Object(map) => Ok(map),
        _ => Err(protocol(format!("{what} that is not an object"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Content;
    use crate::client::answer::FromResult;
    use crate::prompt::PromptMessage;
    use crate::resource::ResourceContents;

    #[test]
    fn rpc_errors_pass_through_and_other_failures_name_the_backend() {
        let sent = Error::new(-32602, "Unknown tool: nope").with_data(json!({"x": 1}));
        let e = error("demo", ClientError::rpc(sent, None));
        let e = e.as_protocol().expect("a protocol error");
        assert_eq!((e.code(), e.message()), (-32602, "Unknown tool: nope"));
        assert_eq!(e.data(), Some(&json!({"x": 1})));
        let gone = ClientError::invalid_argument("closed");
        let e = error("demo", gone);
        let e = e.as_protocol().expect("a protocol error");
        assert_eq!(e.code(), -32603);
        assert!(
            e.message().contains("backend \"demo\" failed"),
            "{}",
            e.message()
        );
    }

    /// A tool result, read as the backend's client reads it.
    fn tool(text: &str) -> Result<ToolResult, HandlerError> {
        tool_result(<RawResult as FromResult>::read(text).unwrap())
    }

    #[test]
    fn the_backends_protocol_members_are_taken_off() {
        let usual = r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b"}},"isError":true}"#;
        let result = tool(usual).unwrap();
        // Written out as the backend wrote it, the two members left out.
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"content":[{"type":"text","text":"hi"}],"isError":true}"#
        );
        assert!(result.is_error());
        // An initialize-era session takes it as it is.
        assert!(result.fits_initialize_era());
        let other = r#"{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b"},"k":1},"structuredContent":{"a":1}}"#;
        let result = tool(other).unwrap();
        assert_eq!(
            result.to_wire(),
            json!({"content": [], "_meta": {"k": 1}, "structuredContent": {"a": 1}})
        );
        assert_eq!(result.structured_content(), Some(&json!({"a": 1})));
        assert!(tool(r#"{"content":{}}"#).is_err());
        assert!(tool("[]").is_err());
    }

    #[test]
    fn input_required_keeps_requests_and_state() {
        let m = json!({
            "resultType": "input_required",
            "inputRequests": {"ok": {"method": "elicitation/create", "params": {"message": "Sure?"}}},
            "requestState": "s1",
        });
        let ir = input_required(&m).unwrap();
        assert_eq!(ir.request_state(), Some("s1"));
        assert_eq!(ir.requests()["ok"]["method"], "elicitation/create");
        let bad = json!({"inputRequests": {"k": {"params": {}}}});
        assert!(input_required(&bad).is_err());
    }

    #[test]
    fn read_results_are_renamed_and_checked() {
        let naming = Naming::prefixed("fs", ".");
        let r = read_result(
            json!({"contents": [{"uri": "file:///a", "text": "hi", "mimeType": "text/plain"}]}),
            &naming,
        )
        .unwrap();
        assert_eq!(
            r,
            ReadResult::contents([
                ResourceContents::text("fs+file:///a", "hi").with_mime_type("text/plain")
            ])
        );
        assert!(read_result(json!({"contents": [{"uri": "x:y"}]}), &naming).is_err());
        assert!(read_result(json!([]), &naming).is_err());
    }

    #[test]
    fn prompt_results_keep_roles_and_description() {
        let p = prompt_result(json!({
            "description": "d",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "a"}},
                {"role": "assistant", "content": {"type": "text", "text": "b"}},
            ],
        }))
        .unwrap();
        assert_eq!(
            p.messages(),
            [
                PromptMessage::user_text("a"),
                PromptMessage::assistant(Content::text("b")),
            ]
        );
        assert_eq!(p.description(), Some("d"));
        assert!(
            prompt_result(
                json!({"messages": [{"role": "system", "content": {"type": "text", "text": "a"}}]})
            )
            .is_err()
        );
    }

    mod arbitrary {
        use proptest::prelude::*;
        use serde_json::Value;

        use super::super::*;
        use crate::client::answer::FromResult;

        /// JSON shaped like a backend's answers, and anything else.
        fn answer() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                "input_required|complete|user|assistant|text|x:y|.{0,8}".prop_map(Value::from),
            ];
            leaf.prop_recursive(5, 64, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
                    prop::collection::btree_map(
                        "contents|uri|text|blob|messages|role|content|type|resultType|inputRequests|method|params|requestState|_meta|description|[a-z]{1,4}",
                        inner,
                        0..5,
                    )
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1000))]

            #[test]
            fn any_backend_answer_converts_or_fails_without_panicking(value in answer()) {
                let naming = Naming::prefixed("b", ".");
                let _ = read_result(value.clone(), &naming);
                let _ = prompt_result(value.clone());
                let _ = input_required(&value);
                let text = value.to_string();
                if let Ok(result) = tool_result(<RawResult as FromResult>::read(&text).unwrap()) {
                    let wire = result.to_wire();
                    prop_assert!(wire.get("resultType").is_none());
                    let written: Value = serde_json::to_value(&result).unwrap();
                    prop_assert_eq!(written, wire);
                }
            }
        }
    }
}
