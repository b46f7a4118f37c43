//! The requests the load generator sends (real MCP 2026-07-28 messages with
//! per-request `_meta`) and the checks every response must pass. A response
//! that fails a check is an error, never throughput.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use snodo_bench_common::{PROTOCOL_VERSION, TOTAL_TOOLS};

/// The `_meta` member every request carries.
pub(crate) const META: &str = snodo_bench_common::REQUEST_META;

/// The text the ceiling answers with.
pub(crate) const CEILING_TEXT: &str = "ceiling";

/// What a request asks for, and so what its response must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// `tools/call echo {text: "echo-<id>"}`: the text must come back.
    Echo,
    /// `tools/list`: all 52 tools, in one page, with cache hints.
    List,
    /// `tools/call add {a: <id>, b: 1}`: `structuredContent.sum` must be
    /// `id + 1` (the servers check it against the output schema).
    Add,
}

impl Work {
    /// The `Mcp-Method` header value.
    pub(crate) fn method(self) -> &'static str {
        match self {
            Work::Echo | Work::Add => "tools/call",
            Work::List => "tools/list",
        }
    }

    /// The `Mcp-Name` header value, for methods that need one.
    pub(crate) fn name(self) -> Option<&'static str> {
        match self {
            Work::Echo => Some("echo"),
            Work::Add => Some("add"),
            Work::List => None,
        }
    }

    /// The request body for JSON-RPC id `id` (compact: one line).
    pub(crate) fn body(self, id: u64) -> String {
        match self {
            Work::Echo => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"echo-{id}"}},{META}}}}}"#
            ),
            Work::Add => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{id},"b":1}},{META}}}}}"#
            ),
            Work::List => {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{META}}}}}"#
                )
            }
        }
    }
}

/// The initialize-era revision the session workloads negotiate.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";

/// An `initialize` request at [`LEGACY_VERSION`].
pub(crate) fn initialize_body(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"{LEGACY_VERSION}","capabilities":{{}},"clientInfo":{{"name":"snodo-bench","version":"0.1.0"}}}}}}"#
    )
}

/// The notification that ends the handshake.
pub(crate) const INITIALIZED_BODY: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `tools/call echo` inside an initialize-era session (no `_meta`).
pub(crate) fn session_echo_body(id: u64, tool: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"text":"echo-{id}"}}}}}}"#
    )
}

/// The body of a `subscriptions/listen` request.
pub(crate) fn listen_body(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{META}}}}}"#
    )
}

#[derive(Deserialize)]
struct Envelope<'a, R> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: Option<u64>,
    method: Option<IgnoredAny>,
    result: Option<R>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct AddResult<'a> {
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
    #[serde(rename = "structuredContent")]
    structured: Option<Sum>,
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Sum {
    sum: u64,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ListResult<'a> {
    #[serde(rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tools: Vec<ToolEntry<'a>>,
    #[serde(rename = "nextCursor")]
    next_cursor: Option<Value>,
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope", borrow)]
    cache_scope: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ToolEntry<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(rename = "inputSchema")]
    input_schema: Option<IgnoredAny>,
}

/// How a response is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// The echo text of the request's id comes back.
    Echo,
    /// The ceiling's fixed answer (its id and text are fixed).
    Ceiling,
    /// The full tool list.
    List,
    /// `{"sum": id + 1}` as structured content.
    Add,
    /// The echo text inside an initialize-era session: no `resultType`.
    SessionEcho,
}

/// What a line or body turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A correct response to request `id`.
    Response(u64),
    /// A notification (stdio only): not a response, skip it.
    Notification,
}

fn envelope_checks<R>(env: &Envelope<'_, R>, sent: Option<u64>) -> Result<u64, String> {
    if env.jsonrpc != "2.0" {
        return Err(format!("jsonrpc is {:?}", env.jsonrpc));
    }
    if let Some(error) = &env.error {
        return Err(format!("JSON-RPC error {error}"));
    }
    let id = env.id.ok_or("response without an integer id")?;
    if let Some(sent) = sent
        && sent != id
    {
        return Err(format!("id {id} answers request {sent}"));
    }
    Ok(id)
}

/// Checks one JSON response. `sent` is the request id when the transport pairs
/// responses with requests itself (HTTP); stdio passes `None` and uses the id
/// the verdict returns.
pub(crate) fn check(expect: Expect, sent: Option<u64>, json: &[u8]) -> Result<Verdict, String> {
    match expect {
        Expect::Echo | Expect::Ceiling | Expect::SessionEcho => {
            let env: Envelope<'_, CallResult<'_>> =
                serde_json::from_slice(json).map_err(|e| format!("bad JSON: {e}"))?;
            if env.method.is_some() && env.id.is_none() {
                return Ok(Verdict::Notification);
            }
            let id = envelope_checks(
                &env,
                if expect == Expect::Ceiling {
                    None
                } else {
                    sent
                },
            )?;
            let result = env.result.ok_or("no result")?;
            let wanted = if expect == Expect::SessionEcho {
                None
            } else {
                Some("complete")
            };
            if result.result_type.as_deref() != wanted {
                return Err(format!("resultType is {:?}", result.result_type));
            }
            if result.is_error == Some(true) {
                return Err("isError is true".into());
            }
            let block = result.content.first().ok_or("empty content")?;
            if block.kind != "text" {
                return Err(format!("first block is {:?}", block.kind));
            }
            let text = block.text.as_deref().unwrap_or_default();
            let ok = match expect {
                Expect::Ceiling => text == CEILING_TEXT,
                _ => {
                    text.strip_prefix("echo-")
                        .and_then(|n| n.parse::<u64>().ok())
                        == Some(id)
                }
            };
            if !ok {
                return Err(format!("echo text {text:?} does not match request {id}"));
            }
            Ok(Verdict::Response(if expect == Expect::Ceiling {
                sent.unwrap_or(id)
            } else {
                id
            }))
        }
        Expect::Add => {
            let env: Envelope<'_, AddResult<'_>> =
                serde_json::from_slice(json).map_err(|e| format!("bad JSON: {e}"))?;
            if env.method.is_some() && env.id.is_none() {
                return Ok(Verdict::Notification);
            }
            let id = envelope_checks(&env, sent)?;
            let result = env.result.ok_or("no result")?;
            if result.result_type.as_deref() != Some("complete") {
                return Err(format!("resultType is {:?}", result.result_type));
            }
            if result.is_error == Some(true) {
                return Err("isError is true".into());
            }
            let sum = result.structured.ok_or("no structuredContent")?.sum;
            if Some(sum) != id.checked_add(1) {
                return Err(format!("sum {sum} does not answer request {id}"));
            }
            Ok(Verdict::Response(id))
        }
        Expect::List => {
            let env: Envelope<'_, ListResult<'_>> =
                serde_json::from_slice(json).map_err(|e| format!("bad JSON: {e}"))?;
            if env.method.is_some() && env.id.is_none() {
                return Ok(Verdict::Notification);
            }
            let id = envelope_checks(&env, sent)?;
            let result = env.result.ok_or("no result")?;
            let wanted = if expect == Expect::SessionEcho {
                None
            } else {
                Some("complete")
            };
            if result.result_type.as_deref() != wanted {
                return Err(format!("resultType is {:?}", result.result_type));
            }
            if result.tools.len() != TOTAL_TOOLS {
                return Err(format!(
                    "{} tools listed, {TOTAL_TOOLS} expected",
                    result.tools.len()
                ));
            }
            if !matches!(result.next_cursor, None | Some(Value::Null)) {
                return Err("the list is paginated".into());
            }
            if result.tools.iter().any(|t| t.input_schema.is_none()) {
                return Err("a tool has no inputSchema".into());
            }
            for wanted in ["echo", "add", "inert_00", "inert_49"] {
                if !result.tools.iter().any(|t| t.name == wanted) {
                    return Err(format!("tool {wanted} missing"));
                }
            }
            if result.ttl_ms.is_none() || result.cache_scope.is_none() {
                return Err("ttlMs or cacheScope missing".into());
            }
            Ok(Verdict::Response(id))
        }
    }
}

/// The JSON-RPC message of an HTTP response body: the body itself for
/// `application/json`, or the last `data:` payload of a `text/event-stream`
/// body (the response ends the stream; earlier events are notifications or
/// priming events).
pub(crate) fn http_payload<'a>(
    content_type: Option<&[u8]>,
    body: &'a [u8],
) -> Result<Cow<'a, [u8]>, String> {
    let ct = content_type.unwrap_or_default();
    if ct.starts_with(b"application/json") {
        return Ok(Cow::Borrowed(body));
    }
    if ct.starts_with(b"text/event-stream") {
        return sse_events(body)
            .into_iter()
            .rev()
            .find(|d| !d.is_empty())
            .map(Cow::Owned)
            .ok_or_else(|| "event stream without data".to_string());
    }
    Err(format!(
        "content-type {:?}",
        String::from_utf8_lossy(content_type.unwrap_or(b"<none>"))
    ))
}

/// The `data` of each complete event in `text` (events end with a blank line).
pub(crate) fn sse_events(text: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let mut has_data = false;
    for raw in text.split(|&b| b == b'\n') {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            if has_data {
                events.push(std::mem::take(&mut data));
            }
            has_data = false;
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"data:") {
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            if has_data {
                data.push(b'\n');
            }
            data.extend_from_slice(rest);
            has_data = true;
        }
    }
    events
}

/// Whether `payload` is a `subscriptions/listen` acknowledgment.
pub(crate) fn is_listen_ack(payload: &[u8]) -> bool {
    serde_json::from_slice::<Value>(payload)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_string))
        .is_some_and(|m| m == "notifications/subscriptions/acknowledged")
}

/// The protocol version header value.
pub(crate) fn protocol_version() -> &'static str {
    PROTOCOL_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_round_trip() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"echo-7"}]}}"#;
        assert_eq!(check(Expect::Echo, Some(7), ok), Ok(Verdict::Response(7)));
        assert!(check(Expect::Echo, Some(8), ok).is_err());
        let wrong = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"echo-6"}]}}"#;
        assert!(check(Expect::Echo, Some(7), wrong).is_err());
        let note = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        assert_eq!(check(Expect::Echo, None, note), Ok(Verdict::Notification));
    }

    #[test]
    fn add_round_trip() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"sum\":8}"}],"structuredContent":{"sum":8}}}"#;
        assert_eq!(check(Expect::Add, Some(7), ok), Ok(Verdict::Response(7)));
        let wrong = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[],"structuredContent":{"sum":7}}}"#;
        assert!(check(Expect::Add, Some(7), wrong).is_err());
        let unstructured = br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","content":[{"type":"text","text":"8"}]}}"#;
        assert!(check(Expect::Add, Some(7), unstructured).is_err());
    }

    #[test]
    fn sse_payload() {
        let body = b"retry: 3000\n\ndata: {\"a\":1}\n\nevent: message\ndata: {\"b\":2}\n\n";
        let p = http_payload(Some(b"text/event-stream"), body).unwrap();
        assert_eq!(&*p, b"{\"b\":2}");
    }

    #[test]
    fn bodies_are_json() {
        for id in [1, 1 << 40] {
            for w in [Work::Echo, Work::List, Work::Add] {
                serde_json::from_str::<Value>(&w.body(id)).unwrap();
            }
            serde_json::from_str::<Value>(&listen_body(id)).unwrap();
        }
    }
}
