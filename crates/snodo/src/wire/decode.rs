//! Decoding one JSON-RPC message from untrusted bytes.

use serde_json::{Map, Value};

use super::RequestId;
use super::meta::Meta;
use super::scan::{ScanError, scan};
use super::target::{self, Aside};
use crate::Error;

// The usual request, read in one pass.
mod fast;

/// Bounds applied while decoding one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest message, in bytes (the transport sets it; default 2 MiB).
    pub max_bytes: usize,
    /// Deepest nesting of arrays and objects (default 64).
    pub max_depth: usize,
    /// Most digits in one number literal (default 64).
    pub max_digits: usize,
}

impl Limits {
    /// The defaults: 2 MiB, 64 levels, 64 digits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the largest message, in bytes.
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Sets the deepest nesting of arrays and objects.
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Sets the most digits in one number literal.
    pub fn max_digits(mut self, digits: usize) -> Self {
        self.max_digits = digits;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 2 * 1024 * 1024,
            max_depth: 64,
            max_digits: 64,
        }
    }
}

/// A decoded request: it gets exactly one response.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Request {
    /// The request id, echoed in the response.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The `params` object (absent params decode as an empty object),
    /// without its `_meta`, its target and its arguments.
    pub params: Map<String, Value>,
    /// `params._meta`, read in parts.
    pub meta: Meta,
    /// The string that names what the request acts on, moved out of
    /// `params`: the member that names it
    /// for the method (a tool's or prompt's `name`, a resource's `uri`, a
    /// task's `taskId`), when it is a string.
    pub target: Option<String>,
    /// The `arguments` of `tools/call` and `prompts/get`, moved out of
    /// `params`, when an object.
    pub arguments: Option<Map<String, Value>>,
}

impl Request {
    /// A request from its parts, `_meta`, the target and the arguments
    /// moved out of `params`.
    ///
    /// ```
    /// use serde_json::json;
    /// use snodo::model::{Request, RequestId};
    /// let params = json!({"name": "add", "arguments": {"a": 1}, "_meta": {"progressToken": 1}});
    /// let request = Request::new(RequestId::Number(1), "tools/call", params.as_object().unwrap().clone());
    /// assert!(request.params.is_empty());
    /// assert_eq!(request.target.as_deref(), Some("add"));
    /// assert_eq!(request.into_params(), *params.as_object().unwrap());
    /// ```
    pub fn new(id: RequestId, method: impl Into<String>, mut params: Map<String, Value>) -> Self {
        let meta = Meta::from_member(params.remove("_meta"));
        let aside = Aside::take_from(&mut params);
        Self::assemble(id, method.into(), params, meta, aside)
    }

    /// A request whose members that may be read out were kept aside.
    pub(crate) fn assemble(
        id: RequestId,
        method: String,
        mut params: Map<String, Value>,
        meta: Meta,
        aside: Aside,
    ) -> Self {
        let (target, arguments) = aside.settle(&method, &mut params);
        Self {
            id,
            method,
            params,
            meta,
            target,
            arguments,
        }
    }

    /// The whole `params` object again, `_meta`, the target and the
    /// arguments put back as sent.
    pub fn into_params(self) -> Map<String, Value> {
        let mut params = self.params;
        target::put_back(&self.method, &mut params, self.target, self.arguments);
        if let Some(meta) = self.meta.into_value() {
            params.insert("_meta".into(), meta);
        }
        params
    }
}

/// A decoded notification: it is never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The `params` object (absent params decode as an empty object).
    pub params: Map<String, Value>,
}

/// One decoded message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response from the peer (`result` or `error` without `method`); a server
    /// ignores it and never answers it.
    Response(Value),
}

impl Message {
    /// The id of a request; `None` for a notification or a response.
    pub fn request_id(&self) -> Option<&RequestId> {
        match self {
            Message::Request(request) => Some(&request.id),
            _ => None,
        }
    }
}

/// A message that could not be decoded: the error to answer with, and the
/// request id when it could be read.
#[derive(Debug)]
pub struct DecodeError {
    /// The id of the offending request, if it could be read.
    pub id: Option<RequestId>,
    /// The JSON-RPC error (`-32700` or `-32600`).
    pub error: Error,
}

impl DecodeError {
    fn parse(message: &str) -> Self {
        Self {
            id: None,
            error: Error::parse_error(message),
        }
    }

    fn invalid(id: Option<RequestId>, message: &str) -> Self {
        Self {
            id,
            error: Error::invalid_request(message),
        }
    }
}

/// Decodes one message from bytes, within `limits`. Never panics.
///
/// One leading UTF-8 byte-order mark is ignored, whatever the transport.
///
/// ```
/// use snodo::model::{decode, Limits, Message};
/// let msg = decode(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#, &Limits::default()).unwrap();
/// assert!(matches!(msg, Message::Request(r) if r.method == "tools/list"));
/// let err = decode(b"[]", &Limits::default()).unwrap_err();
/// assert_eq!(err.error.code(), -32600);
/// ```
pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Message, DecodeError> {
    decode_by(bytes, limits, true)
}

/// [`decode`], trying the member-by-member path first when `fast` is set,
/// else going straight to the `Value` path (which the fuzz target that
/// compares the two paths needs).
pub(crate) fn decode_by(bytes: &[u8], limits: &Limits, fast: bool) -> Result<Message, DecodeError> {
    let bytes = strip_bom(bytes);
    if bytes.len() > limits.max_bytes {
        return Err(DecodeError::invalid(None, "Message exceeds the size limit"));
    }
    // The usual message is read in one pass that keeps the bounds itself;
    // anything else is scanned for them, then read as a value.
    if fast && let Some(message) = fast::decode(bytes, limits) {
        return Ok(message);
    }
    match scan(bytes, limits.max_depth, limits.max_digits) {
        Ok(()) => {}
        Err(ScanError::TooDeep) => return Err(DecodeError::parse("Parse error: nesting too deep")),
        Err(ScanError::NumberTooLong) => {
            return Err(DecodeError::parse("Parse error: number literal too long"));
        }
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|_| DecodeError::parse("Parse error"))?;
    decode_value(value)
}

/// `bytes` without one leading UTF-8 byte-order mark (`EF BB BF`).
///
/// The one rule for every transport: some Windows tools write a mark before
/// JSON text; RFC 8259 lets a parser ignore it, and snodo does, once, on
/// stdio lines, HTTP bodies and in-process messages alike.
pub(crate) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Decodes one message from an already parsed JSON value.
pub(crate) fn decode_value(value: Value) -> Result<Message, DecodeError> {
    let mut map = match value {
        Value::Object(map) => map,
        Value::Array(_) => {
            return Err(DecodeError::invalid(
                None,
                "Batch requests are not supported",
            ));
        }
        _ => return Err(DecodeError::invalid(None, "Invalid Request")),
    };
    let has_id = map.contains_key("id");
    let id = map.get("id").and_then(RequestId::from_value);
    if !map.contains_key("method") && (map.contains_key("result") || map.contains_key("error")) {
        return Ok(Message::Response(Value::Object(map)));
    }
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(DecodeError::invalid(
            id,
            "Invalid Request: jsonrpc must be \"2.0\"",
        ));
    }
    let method = match map.remove("method") {
        Some(Value::String(m)) => m,
        _ => {
            return Err(DecodeError::invalid(
                id,
                "Invalid Request: method must be a string",
            ));
        }
    };
    if has_id && id.is_none() {
        return Err(DecodeError::invalid(
            None,
            "Invalid Request: id must be a string of at most 256 bytes or an integer",
        ));
    }
    let params = match map.remove("params") {
        None => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err(DecodeError::invalid(
                id,
                "Invalid Request: params must be an object",
            ));
        }
    };
    Ok(match id {
        Some(id) => Message::Request(Request::new(id, method, params)),
        None => Message::Notification(Notification { method, params }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_bom_drops_one_mark() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBF{}"), b"{}");
        assert_eq!(strip_bom(b"{}"), b"{}");
    }

    fn code(bytes: &[u8]) -> i64 {
        decode(bytes, &Limits::default()).unwrap_err().error.code()
    }

    /// The fast path and the value path agree on every message the fast
    /// path takes, and leave the rest to the value path.
    #[test]
    fn a_call_is_decoded_with_its_target_and_arguments_read_out() {
        let text = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"extra":true,"_meta":{"progressToken":1}}}"#;
        let Ok(Message::Request(request)) = decode(text.as_bytes(), &Limits::default()) else {
            panic!("not a request")
        };
        assert_eq!(request.target.as_deref(), Some("add"));
        assert_eq!(
            request.arguments.clone().map(Value::Object),
            Some(serde_json::json!({"a": 1, "b": 2}))
        );
        assert_eq!(
            Value::Object(request.params.clone()),
            serde_json::json!({"extra": true})
        );
        let sent: Value = serde_json::from_str(text).unwrap();
        assert_eq!(Value::Object(request.into_params()), sent["params"]);
    }

    #[test]
    fn both_paths_decode_alike() {
        let taken = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#,
            r#" {"method":"m","jsonrpc":"2.0","id":"abc"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m","params":{"a":{"b":[1,2.5,null,"\u00e9"]}}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}"#,
            // `_meta` as 2026-07-28 requests carry it, and as they should not.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":"p","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":[],"io.modelcontextprotocol/clientInfo":null}}}"#,
            // The client's name and capabilities, kept as text when they
            // are objects that need no reading to be checked.
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo" :  {"name" : "c", "v":[1, 2.5e3, {"x":null}]},"io.modelcontextprotocol/clientCapabilities": {} }}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"\u00e9\n"},"io.modelcontextprotocol/clientInfo":{"name":"later"}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"a":1},"io.modelcontextprotocol/clientCapabilities":5}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":"text","io.modelcontextprotocol/clientCapabilities":[{}]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_met\u0061":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28"}}}"#,
            // The target and the arguments: read out whether the method
            // comes before or after `params`, left in place when of another
            // type, the last of a repeated member winning.
            r#"{"jsonrpc":"2.0","id":1,"params":{"arguments":{"a":1},"name":"add"},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"name":"a","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"demo://x","name":"n","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t","uri":"u"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"n\u0061me":"p","arguments":{"k":"v"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"name":"n","uri":"u","taskId":"t","arguments":{}}}"#,
            // Values of every kind, read as they come, whitespace anywhere.
            " { \"jsonrpc\" : \"2.0\" ,\t\"id\" : 0 ,\r\n\"method\" : \"tools/call\" , \"params\" : { \"name\" : \"a\" , \"arguments\" : { \"s\" : \"line\\nbreak \\\"q\\\" \\ud83d\\ude00\" , \"n\" : [ -1 , 0.5 , -0 , 1e2 , 18446744073709551615 , 18446744073709551616 , true , false , null , [ ] , { } ] } } } ",
            r#"{"jsonrpc":"2.0","id":"a b","method":"m","params":{"k\u00e9y":{"d\"eep":[[[{"x":[]}]]]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a\"b"},"io.modelcontextprotocol/clientCapabilities":{"x":1.5e3}}}}"#,
            // An escape in `jsonrpc` reads as the same text.
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"x"}"#,
        ];
        for text in taken {
            let fast = super::fast::decode(text.as_bytes(), &Limits::default());
            let value = decode_value(serde_json::from_str(text).unwrap()).unwrap();
            assert_eq!(fast.as_ref(), Some(&value), "{text}");
        }
        let left = [
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#" {"method":"m","jsonrpc":"2.0","id":"abc","extra":[1,{"a":2}]}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"m","result":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
            r#"["2.0",1,"x",{}]"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            // How a number reads under serde_json's `arbitrary_precision`.
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"$serde_json::private::Number":"5"}}}"#,
        ];
        for text in left {
            assert_eq!(
                super::fast::decode(text.as_bytes(), &Limits::default()),
                None,
                "{text}"
            );
        }
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"x"}}"#,
            "a".repeat(257)
        );
        assert_eq!(
            super::fast::decode(long.as_bytes(), &Limits::default()),
            None
        );
        assert_eq!(code(long.as_bytes()), -32600);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x","params":null}"#),
            -32600
        );
    }

    /// A member the fast path would skip is checked as the value path
    /// checks it (found by the `request_decode_agree` fuzz target).
    #[test]
    fn skipped_members_are_checked_alike() {
        for text in [
            r#"{"jsonrpc":"2.0","id":-4,"method":"m","rams":{"n":[1e400]}}"#,
            r#"{"jsonrpc":"2.0","id":-4,"method":"m","x":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","id":-4,"method":"m","x":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"n":1e400}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"n":"\ud800"}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"n":-1E400}}}}"#,
        ] {
            let (both, by_value) = (
                decode(text.as_bytes(), &Limits::default()),
                decode_by(text.as_bytes(), &Limits::default(), false),
            );
            match (both, by_value) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(a), Err(b)) => assert_eq!(a.error.code(), b.error.code(), "{text}"),
                (a, b) => panic!("{text}: {a:?} / {b:?}"),
            }
        }
        for text in [
            r#"{"jsonrpc":"2.0","id":-4,"method":"m","rams":{"n":[1e400]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"n":1e400}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"n":"\ud800"}}}}"#,
        ] {
            assert_eq!(code(text.as_bytes()), -32700, "{text}");
        }
    }

    #[test]
    fn envelope_rules() {
        assert_eq!(code(b"{"), -32700);
        assert_eq!(code(b"\xff\xfe"), -32700);
        assert_eq!(
            code(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}]"),
            -32600
        );
        assert_eq!(code(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#), -32600);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#), -32600);
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#), -32600);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#),
            -32600
        );
        assert_eq!(code(br#"{"jsonrpc":"2.0","id":1,"method":7}"#), -32600);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#),
            -32600
        );
        assert_eq!(code(b"42"), -32600);
    }

    #[test]
    fn ids_keep_their_type_and_are_echoed_on_errors() {
        let err = decode(
            br#"{"jsonrpc":"1.0","id":"abc","method":"x"}"#,
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(err.id, Some(RequestId::from("abc")));
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"x"}}"#,
            "a".repeat(257)
        );
        assert_eq!(code(long.as_bytes()), -32600);
        let max = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"x"}}"#,
            "a".repeat(256)
        );
        assert!(decode(max.as_bytes(), &Limits::default()).is_ok());
    }

    #[test]
    fn responses_and_notifications() {
        let msg = decode(
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            &Limits::default(),
        )
        .unwrap();
        assert!(matches!(msg, Message::Response(_)));
        let msg = decode(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            &Limits::default(),
        )
        .unwrap();
        assert!(matches!(msg, Message::Notification(n) if n.method == "notifications/cancelled"));
    }

    #[test]
    fn bounds() {
        let limits = Limits {
            max_bytes: 10,
            ..Limits::default()
        };
        assert_eq!(
            decode(&[b' '; 11], &limits).unwrap_err().error.code(),
            -32600
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(code(deep.as_bytes()), -32700);
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"x"}}"#,
            "1".repeat(65)
        );
        assert_eq!(code(big.as_bytes()), -32700);
    }
}
