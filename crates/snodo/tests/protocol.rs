//! Protocol vectors: literal JSON requests in, literal expectations out, every
//! response validated against the official 2026-07-28 schema.

mod common;

use std::sync::Arc;

use serde_json::{Value, json};
use snodo::schema::{CompiledSchema, SchemaError, ValidationError, Validator, Violation};
use snodo::{Arguments, CallResult, Context, Error, Server, Tool, ToolResult};

use common::{assert_response, meta_with};

type Behaviour = Box<dyn Fn(Arguments) -> CallResult + Send + Sync>;

struct Fixture {
    name: &'static str,
    input: Value,
    output: Option<Value>,
    run: Behaviour,
}

impl Tool for Fixture {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> Option<&str> {
        Some("a test fixture")
    }
    fn input_schema(&self) -> Value {
        self.input.clone()
    }
    fn output_schema(&self) -> Option<Value> {
        self.output.clone()
    }
    async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
        (self.run)(args)
    }
}

fn fixture(
    name: &'static str,
    input: Value,
    output: Option<Value>,
    run: impl Fn(Arguments) -> CallResult + Send + Sync + 'static,
) -> Fixture {
    Fixture {
        name,
        input,
        output,
        run: Box::new(run),
    }
}

/// A validator for the tests: rejects any string property whose value is
/// `"reject-me"`, fails outright on `"crash"`, and panics on `"panic"`.
struct Picky;

struct PickyCompiled;

impl Validator for Picky {
    fn compile(&self, _schema: &Value) -> Result<Arc<dyn CompiledSchema>, SchemaError> {
        Ok(Arc::new(PickyCompiled))
    }
}

impl CompiledSchema for PickyCompiled {
    fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        for (key, value) in instance.as_object().into_iter().flatten() {
            match value.as_str() {
                Some("reject-me") => {
                    return Err(ValidationError::Invalid(Violation::new(
                        format!("/{key}"),
                        "enum: value is not one of the allowed values",
                    )));
                }
                Some("crash") => return Err(ValidationError::Failed("boom".into())),
                Some("panic") => panic!("validator bug"),
                _ => {}
            }
            if key == "sum" && !value.is_i64() {
                return Err(ValidationError::Invalid(Violation::new(
                    "/sum",
                    "type: not an integer",
                )));
            }
        }
        Ok(())
    }
}

fn server() -> Server {
    let object = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required});
    Server::builder("vectors", "1.2.3")
        .instructions("Use echo to echo.")
        .validator(Picky)
        .tool(fixture(
            "echo",
            object(json!({"text": {"type": "string"}}), json!(["text"])),
            None,
            |a| Ok(ToolResult::text(a.str("text")?)),
        ))
        .tool(fixture(
            "add",
            object(json!({"a": {"type": "integer"}, "b": {"type": "integer"}}), json!(["a", "b"])),
            Some(json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]})),
            |a| Ok(ToolResult::structured(json!({"sum": a.i64("a")? + a.i64("b")?}))),
        ))
        .tool(fixture("io_failure", json!({"type": "object"}), None, |_| {
            Err(std::io::Error::other("upstream returned 503").into())
        }))
        .tool(fixture("typed_failure", json!({"type": "object"}), None, |_| {
            Err(Error::invalid_params("Refused by policy").into())
        }))
        .tool(fixture("domain_failure", json!({"type": "object"}), None, |_| {
            Ok(ToolResult::error("No such word"))
        }))
        .tool(fixture("panics", json!({"type": "object"}), None, |_| {
            panic!("handler bug with /secret/path")
        }))
        .tool(fixture(
            "forgets_structure",
            json!({"type": "object"}),
            Some(json!({"type": "object"})),
            |_| Ok(ToolResult::text("plain")),
        ))
        .tool(fixture(
            "bad_structure",
            json!({"type": "object"}),
            Some(json!({"type": "object"})),
            |_| Ok(ToolResult::structured(json!({"sum": "three"}))),
        ))
        .tool(fixture(
            "errors_with_schema",
            json!({"type": "object"}),
            Some(json!({"type": "object"})),
            |_| Ok(ToolResult::error("failed politely")),
        ))
        .build()
        .expect("fixture server builds")
}

async fn send(server: &Server, request: Value) -> Value {
    server
        .dispatch_value(request)
        .await
        .expect("requests are answered")
}

async fn call(server: &Server, id: i64, name: &str, arguments: Value) -> Value {
    let response = send(
        server,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"_meta": meta_with(json!({})), "name": name, "arguments": arguments}}),
    )
    .await;
    assert_eq!(response["id"], id, "id echoed in {response}");
    assert_response(&response, "CallToolResult");
    response
}

#[tokio::test]
async fn discover_advertises_what_is_registered() {
    let server = server();
    let response = send(
        &server,
        json!({"jsonrpc": "2.0", "id": "d-1", "method": "server/discover", "params": {"_meta": meta_with(json!({}))}}),
    )
    .await;
    assert_response(&response, "DiscoverResult");
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": "d-1", "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "instructions": "Use echo to echo.",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "vectors", "version": "1.2.3"}}
        }})
    );
}

#[tokio::test]
async fn tools_list_is_sorted_and_verbatim() {
    let server = server();
    let response = send(
        &server,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta_with(json!({}))}}),
    )
    .await;
    assert_response(&response, "ListToolsResult");
    let names: Vec<&str> = response["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert_eq!(response["result"]["tools"][0]["name"], "add");
    assert_eq!(
        response["result"]["tools"][0]["outputSchema"],
        json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]})
    );
    assert_eq!(response["result"]["ttlMs"], 0);
    assert_eq!(response["result"]["cacheScope"], "private");
}

#[tokio::test]
async fn meta_is_required_on_every_request() {
    let server = server();
    for params in [
        json!({}),
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                         "io.modelcontextprotocol/clientCapabilities": {},
                         "io.modelcontextprotocol/logLevel": "loud"}}),
    ] {
        let response = send(
            &server,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": params}),
        )
        .await;
        assert_eq!(response["error"]["code"], -32602, "{response}");
        assert_eq!(response["id"], 3);
        assert_response(&response, "");
    }
    let no_client_info = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    assert!(send(&server, no_client_info).await.get("result").is_some());
}

#[tokio::test]
async fn unsupported_version_names_supported_and_requested() {
    let server = server();
    let response = send(
        &server,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "1900-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}}}}),
    )
    .await;
    assert_response(&response, "");
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32022, "message": "Unsupported protocol version",
               "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}}})
    );
}

#[tokio::test]
async fn removed_unknown_and_unadvertised_methods_are_not_found() {
    let server = server();
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "nope/nothing",
        "prompts/list",
        "resources/read",
        "completion/complete",
    ] {
        let response = send(&server, json!({"jsonrpc": "2.0", "id": 6, "method": method, "params": {"_meta": meta_with(json!({}))}})).await;
        assert_eq!(response["error"]["code"], -32601, "{method}: {response}");
        assert_eq!(response["id"], 6);
        assert_response(&response, "");
    }
}

#[tokio::test]
async fn envelope_errors() {
    let server = server();
    let cases: [(&[u8], i64, Value); 6] = [
        (b"{not json", -32700, Value::Null),
        (b"[]", -32600, Value::Null),
        (
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"1.0","id":9,"method":"tools/list"}"#,
            -32600,
            json!(9),
        ),
        (
            br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        (
            br#"{"jsonrpc":"2.0","id":"x","method":42}"#,
            -32600,
            json!("x"),
        ),
    ];
    for (bytes, code, id) in cases {
        let snodo::Dispatched::Reply(reply) = server.dispatch(bytes, Default::default()).await
        else {
            panic!("errors are answered");
        };
        let response: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(response["error"]["code"], code, "{response}");
        assert_eq!(
            response.get("id").cloned().unwrap_or(Value::Null),
            id,
            "{response}"
        );
        assert_eq!(reply.status, 400);
        assert_response(&response, "");
    }
}

#[tokio::test]
async fn notifications_and_peer_responses_are_never_answered() {
    let server = server();
    for message in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/whatever"}),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}),
    ] {
        assert_eq!(server.dispatch_value(message).await, None);
    }
}

#[tokio::test]
async fn step_one_unknown_tool_and_non_object_arguments() {
    let server = server();
    let response = call(&server, 10, "missing_tool", json!({})).await;
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "Unknown tool: missing_tool"})
    );
    let response = call(&server, 11, "echo", json!([1, 2])).await;
    assert_eq!(response["error"]["code"], -32602);
}

#[tokio::test]
async fn step_two_required_arguments_are_enforced_whatever_the_validator() {
    let server = server();
    let response = call(&server, 12, "add", json!({})).await;
    assert_eq!(
        response["result"],
        json!({"resultType": "complete", "isError": true,
               "content": [{"type": "text", "text": "Missing required arguments: a, b"}],
               "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "vectors", "version": "1.2.3"}}})
    );
    // A `required` the meta-schema refuses never reaches dispatch: `build()`
    // names the keyword, whatever the validator.
    let refused = Server::builder("p", "1")
        .tool(fixture(
            "needs",
            json!({"type": "object", "required": ["x", 7, "y"]}),
            None,
            |_| Ok("ran".into()),
        ))
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "tool `needs`: `required` must be an array of strings (at /required)"
    );
    let snodo::BuildError::Tool { rule, .. } = refused else {
        panic!("a tool rule: {refused:?}");
    };
    assert_eq!(rule.pointer, "/required");
    let passthrough = Server::builder("p", "1")
        .tool(fixture(
            "needs",
            json!({"type": "object", "required": ["x", "y"]}),
            None,
            |_| Ok("ran".into()),
        ))
        .build()
        .unwrap();
    let response = call(&passthrough, 13, "needs", json!({"y": 1})).await;
    assert_eq!(
        response["result"]["content"][0]["text"],
        "Missing required arguments: x"
    );
}

#[tokio::test]
async fn step_three_validator_rejection_names_location_and_rule_never_the_value() {
    let server = server();
    let response = call(&server, 14, "echo", json!({"text": "reject-me"})).await;
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(
        text,
        "Invalid arguments at /text: enum: value is not one of the allowed values"
    );
    assert!(!text.contains("reject-me"));
    for poison in ["crash", "panic"] {
        let response = call(&server, 15, "echo", json!({"text": poison})).await;
        assert_eq!(
            response["error"],
            json!({"code": -32603, "message": "Schema validator failed"})
        );
    }
}

#[tokio::test]
async fn step_four_outcomes_are_normalized() {
    let server = server();
    let ok = call(&server, 20, "echo", json!({"text": "hi"})).await;
    assert_eq!(
        ok["result"]["content"],
        json!([{"type": "text", "text": "hi"}])
    );
    assert!(ok["result"].get("isError").is_none());

    let io = call(&server, 21, "io_failure", json!({})).await;
    assert_eq!(io["result"]["isError"], true);
    assert_eq!(io["result"]["content"][0]["text"], "upstream returned 503");

    let typed = call(&server, 22, "typed_failure", json!({})).await;
    assert_eq!(
        typed["error"],
        json!({"code": -32602, "message": "Refused by policy"})
    );

    let domain = call(&server, 23, "domain_failure", json!({})).await;
    assert_eq!(domain["result"]["isError"], true);

    let panicked = call(&server, 24, "panics", json!({})).await;
    assert_eq!(
        panicked["error"],
        json!({"code": -32603, "message": "Tool raised an exception"})
    );
    assert!(!panicked.to_string().contains("secret"));
    let after = call(&server, 25, "echo", json!({"text": "still here"})).await;
    assert_eq!(after["result"]["content"][0]["text"], "still here");
}

#[tokio::test]
async fn step_five_output_schema_is_enforced() {
    let server = server();
    let ok = call(&server, 30, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(ok["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(
        ok["result"]["content"],
        json!([{"type": "text", "text": "{\"sum\":5}"}])
    );

    let missing = call(&server, 31, "forgets_structure", json!({})).await;
    assert_eq!(
        missing["error"],
        json!({"code": -32603, "message": "Tool omitted structured output required by output schema"})
    );
    let invalid = call(&server, 32, "bad_structure", json!({})).await;
    assert_eq!(
        invalid["error"],
        json!({"code": -32603, "message": "Tool output failed schema validation"})
    );
    let polite = call(&server, 33, "errors_with_schema", json!({})).await;
    assert_eq!(polite["result"]["isError"], true);
}

/// A server whose `sum` tool returns `{"sum": "three"}` against an output
/// schema asking for an integer, with `validator` installed (if any).
fn wrong_output_server(
    validator: Option<Box<dyn FnOnce(snodo::ServerBuilder) -> snodo::ServerBuilder>>,
) -> Server {
    let mut builder = Server::builder("outputs", "1").tool(fixture(
        "sum",
        json!({"type": "object"}),
        Some(json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]})),
        |_| Ok(ToolResult::structured(json!({"sum": "three"}))),
    ));
    if let Some(install) = validator {
        builder = install(builder);
    }
    builder.build().expect("builds")
}

#[tokio::test]
async fn output_is_checked_by_the_installed_validator_only() {
    // The default (pass-through) validator: structured content must be
    // there, its content is not checked.
    let default = call(&wrong_output_server(None), 40, "sum", json!({})).await;
    assert_eq!(
        default["result"]["structuredContent"],
        json!({"sum": "three"})
    );
    let refused = json!({"code": -32603, "message": "Tool output failed schema validation"});
    let basic = wrong_output_server(Some(Box::new(|b| b.validator(snodo::schema::Basic))));
    assert_eq!(call(&basic, 41, "sum", json!({})).await["error"], refused);
    #[cfg(feature = "jsonschema")]
    {
        let full = wrong_output_server(Some(Box::new(|b| b.validator(snodo::schema::Full))));
        assert_eq!(call(&full, 42, "sum", json!({})).await["error"], refused);
    }
}

#[tokio::test]
async fn pagination_walks_every_tool_once() {
    let mut builder = Server::builder("many", "1").page_size(3);
    for name in ["a", "b", "c", "d", "e", "f", "g"] {
        builder = builder.tool(fixture(name, json!({"type": "object"}), None, |_| {
            Ok("x".into())
        }));
    }
    let server = builder.build().unwrap();
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        let mut params = json!({"_meta": meta_with(json!({}))});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let response = send(
            &server,
            json!({"jsonrpc": "2.0", "id": 40, "method": "tools/list", "params": params}),
        )
        .await;
        assert_response(&response, "ListToolsResult");
        for tool in response["result"]["tools"].as_array().unwrap() {
            seen.push(tool["name"].as_str().unwrap().to_string());
        }
        match response["result"].get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ["a", "b", "c", "d", "e", "f", "g"]);
    let bad = send(
        &server,
        json!({"jsonrpc": "2.0", "id": 41, "method": "tools/list",
        "params": {"_meta": meta_with(json!({})), "cursor": "forged"}}),
    )
    .await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test]
async fn a_default_server_pages_150_tools_as_100_then_50_and_refuses_a_cursor_over_2048_bytes() {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    let mut builder = Server::builder("many", "1");
    for i in 0..150 {
        let name: &'static str = Box::leak(format!("t{i:03}").into_boxed_str());
        builder = builder.tool(fixture(name, json!({"type": "object"}), None, |_| {
            Ok("x".into())
        }));
    }
    let server = builder.build().unwrap();
    let list = |id: i64, cursor: Option<&str>| {
        let mut params = json!({"_meta": meta_with(json!({}))});
        if let Some(c) = cursor {
            params["cursor"] = json!(c);
        }
        send(
            &server,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}),
        )
    };
    let names = |r: &Value| -> Vec<String> {
        r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };

    let first = list(1, None).await;
    assert_response(&first, "ListToolsResult");
    let want: Vec<String> = (0..100).map(|i| format!("t{i:03}")).collect();
    assert_eq!(names(&first), want);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();

    let second = list(2, Some(&cursor)).await;
    assert_response(&second, "ListToolsResult");
    let want: Vec<String> = (100..150).map(|i| format!("t{i:03}")).collect();
    assert_eq!(names(&second), want);
    assert!(second["result"].get("nextCursor").is_none(), "{second}");

    // The same cursor with spaces after its JSON, to exactly 2 048 bytes,
    // still leads to the second page; one byte more is refused.
    let (prefix, body) = cursor.split_at(cursor.find('.').unwrap() + 1);
    let mut json = URL_SAFE_NO_PAD.decode(body).unwrap();
    let padded = |json: &[u8]| format!("{prefix}{}", URL_SAFE_NO_PAD.encode(json));
    while padded(&json).len() < 2048 {
        json.push(b' ');
    }
    let longest = padded(&json);
    assert_eq!(longest.len(), 2048);
    assert_eq!(names(&list(3, Some(&longest)).await), names(&second));
    json.push(b' ');
    let over = padded(&json);
    assert_eq!(over.len(), 2049);
    let refused = list(4, Some(&over)).await;
    assert_eq!(
        refused,
        json!({"jsonrpc": "2.0", "id": 4,
            "error": {"code": -32602, "message": "Invalid pagination cursor"}})
    );
}

#[test]
fn registration_errors_name_the_tool_and_the_rule() {
    let build = |name: &'static str, schema: Value| {
        Server::builder("b", "1")
            .tool(fixture(name, schema, None, |_| Ok("x".into())))
            .build()
            .unwrap_err()
            .to_string()
    };
    assert!(build("has space", json!({"type": "object"})).contains("`has space`"));
    assert!(build("s", json!({"type": "string"})).contains("\"type\": \"object\""));
    let header = build(
        "h",
        json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
    );
    assert!(
        header.contains("tool `h`") && header.contains("/properties/n/type"),
        "{header}"
    );
    let dup = Server::builder("b", "1")
        .tool(fixture("same", json!({"type": "object"}), None, |_| {
            Ok("x".into())
        }))
        .tool(fixture("same", json!({"type": "object"}), None, |_| {
            Ok("x".into())
        }))
        .build()
        .unwrap_err();
    assert_eq!(dup.to_string(), "tool `same` is registered twice");
}
