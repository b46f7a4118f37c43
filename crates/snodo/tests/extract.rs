//! Handler parameters resolved by `snodo::handler::FromCall`: shared state for
//! tools, resources and prompts, aliases and extractors of one's own, typed
//! arguments and output with derived schemas. Requests are literal JSON sent
//! through the server; responses are checked against the official schema.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use snodo::handler::{FromCall, InputSchema, Rejection};
use snodo::prompt::PromptArguments;
use snodo::resource::ReadRequest;
use snodo::{Args, Arguments, Context, Json, Server, State};

use common::assert_response;

/// Application state shared by every handler.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicU64>);

/// A second state type, to show that state is found by type.
#[derive(Clone)]
struct Greeting(&'static str);

/// Counts its calls.
#[snodo::tool]
async fn hit(State(counter): State<Counter>, State(greeting): State<Greeting>) -> String {
    let n = counter.0.fetch_add(1, Ordering::Relaxed) + 1;
    format!("{} #{n}", greeting.0)
}

/// Reads the counter.
#[snodo::resource(uri = "counter://value", mime_type = "text/plain")]
async fn counter_value(counter: State<Counter>, _req: ReadRequest) -> String {
    counter.0.0.load(Ordering::Relaxed).to_string()
}

/// Greets with the shared greeting.
#[snodo::prompt(arguments = [{ "name": "who", "required": true }])]
async fn welcome(args: PromptArguments, State(greeting): State<Greeting>) -> String {
    format!("{}, {}", greeting.0, args.get("who").unwrap_or_default())
}

/// Asks for state nobody registered.
#[snodo::tool]
async fn needs_missing(State(_n): State<u128>) -> String {
    unreachable!("never called without the state")
}

/// A type alias is as good as the type: parameters are not matched by name.
type Ctx = snodo::Context;
type In = snodo::Arguments;

/// Echoes the method and one argument.
#[snodo::tool(input_schema = { "type": "object", "properties": { "x": { "type": "string" } } })]
async fn aliased(cx: Ctx, args: In) -> String {
    format!("{} {}", cx.method(), args.str("x").unwrap_or("-"))
}

/// An extractor of one's own: the `x-tenant` header or `"none"`.
struct Tenant(String);

impl<I> FromCall<I> for Tenant {
    fn from_call(_input: &I, cx: &Context) -> Result<Self, Rejection> {
        let header = cx.headers().and_then(|h| h.get("x-tenant"));
        match header.map(|v| v.to_str()) {
            None => Ok(Tenant("none".into())),
            Some(Ok(v)) => Ok(Tenant(v.into())),
            Some(Err(_)) => Err(Rejection::arguments("the x-tenant header is not text")),
        }
    }
}

impl InputSchema for Tenant {}

/// Names the tenant.
#[snodo::tool]
async fn tenant(Tenant(t): Tenant) -> String {
    t
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Order {
    /// How many items.
    quantity: u32,
    /// Which item.
    sku: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Quote {
    total_cents: u64,
    sku: String,
}

/// Prices an order: schemas derived from both types.
#[snodo::tool]
async fn price(Args(order): Args<Order>) -> Json<Quote> {
    Json(Quote {
        total_cents: u64::from(order.quantity) * 250,
        sku: order.sku,
    })
}

/// Like `price`, but fallible: the output schema is still derived.
#[snodo::tool]
async fn price_or_fail(Args(order): Args<Order>) -> Result<Json<Quote>, std::io::Error> {
    Ok(Json(Quote {
        total_cents: u64::from(order.quantity),
        sku: order.sku,
    }))
}

fn server() -> Server {
    Server::builder("extract", "0.1.0")
        .state(Counter::default())
        .state(Greeting("Hello"))
        .tool(hit)
        .tool(aliased)
        .tool(tenant)
        .tool(price)
        .tool(price_or_fail)
        .resource(counter_value)
        .prompt(welcome)
        .build()
        .expect("valid definitions")
}

async fn send(server: &Server, method: &str, params: Value) -> Value {
    server
        .dispatch_value(snodo_test::request(method, params))
        .await
        .expect("a request gets a response")
}

async fn call(server: &Server, name: &str, arguments: Value) -> Value {
    let reply = send(
        server,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    assert_response(&reply, "CallToolResult");
    reply
}

#[tokio::test]
async fn state_reaches_tools_resources_and_prompts_by_type() {
    let server = server();
    let first = call(&server, "hit", json!({})).await;
    assert_eq!(first["result"]["content"][0]["text"], "Hello #1");
    let second = call(&server, "hit", json!({})).await;
    assert_eq!(second["result"]["content"][0]["text"], "Hello #2");

    let read = send(&server, "resources/read", json!({"uri": "counter://value"})).await;
    assert_response(&read, "ReadResourceResult");
    assert_eq!(read["result"]["contents"][0]["text"], "2");

    let prompt = send(
        &server,
        "prompts/get",
        json!({"name": "welcome", "arguments": {"who": "Ada"}}),
    )
    .await;
    assert_response(&prompt, "GetPromptResult");
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Hello, Ada"
    );
}

#[test]
fn a_tool_taking_state_never_given_is_refused_at_build_naming_it_and_the_type() {
    let refused = Server::builder("extract", "0.1.0")
        .state(Counter::default())
        .tool(needs_missing)
        .build()
        .expect_err("build refuses the server");
    assert_eq!(
        refused,
        snodo::BuildError::MissingState {
            kind: "tool",
            name: "needs_missing".into(),
            type_name: "u128",
        }
    );
    let message = refused.to_string();
    assert!(message.contains("`State<u128>`"), "{message}");
    assert!(message.contains("ServerBuilder::state"), "{message}");
    // Given the state, the same tool builds.
    let built = Server::builder("extract", "0.1.0")
        .state(7u128)
        .tool(needs_missing)
        .build();
    assert!(built.is_ok());
}

#[test]
fn a_resource_or_prompt_taking_state_never_given_is_refused_at_build() {
    let resource = Server::builder("extract", "0.1.0")
        .resource(counter_value)
        .build()
        .expect_err("the resource needs a Counter");
    assert!(
        matches!(&resource, snodo::BuildError::MissingState { kind: "resource", type_name, .. }
            if type_name.ends_with("Counter")),
        "{resource:?}"
    );
    let prompt = Server::builder("extract", "0.1.0")
        .prompt(welcome)
        .build()
        .expect_err("the prompt needs a Greeting");
    assert!(
        matches!(&prompt, snodo::BuildError::MissingState { kind: "prompt", name, type_name }
            if name == "welcome" && type_name.ends_with("Greeting")),
        "{prompt:?}"
    );
}

#[test]
fn a_component_added_at_runtime_is_checked_the_same_way() {
    let server = Server::builder("extract", "0.1.0").build().unwrap();
    let refused = server.add_tool(needs_missing).err();
    assert!(
        matches!(
            &refused,
            Some(snodo::BuildError::MissingState { kind: "tool", .. })
        ),
        "{refused:?}"
    );
    assert!(server.add_resource(counter_value).is_err());
    assert!(server.add_prompt(welcome).is_err());
}

#[tokio::test]
async fn aliases_and_own_extractors_are_parameters() {
    let server = server();
    let reply = call(&server, "aliased", json!({"x": "y"})).await;
    assert_eq!(reply["result"]["content"][0]["text"], "tools/call y");
    let reply = call(&server, "tenant", json!({})).await;
    assert_eq!(reply["result"]["content"][0]["text"], "none");
}

#[tokio::test]
async fn typed_arguments_and_output_publish_derived_schemas() {
    let server = server();
    let list = send(&server, "tools/list", json!({})).await;
    assert_response(&list, "ListToolsResult");
    let tools = list["result"]["tools"].as_array().unwrap();
    for name in ["price", "price_or_fail"] {
        let def = tools.iter().find(|t| t["name"] == name).unwrap();
        let input = &def["inputSchema"];
        assert_eq!(input["type"], "object");
        assert_eq!(input["properties"]["quantity"]["type"], "integer");
        assert_eq!(input["properties"]["sku"]["description"], "Which item.");
        assert_eq!(input["required"], json!(["quantity", "sku"]));
        let output = &def["outputSchema"];
        assert_eq!(output["type"], "object", "{def}");
        assert_eq!(output["properties"]["total_cents"]["type"], "integer");
        assert!(output.get("$schema").is_none() && output.get("title").is_none());
    }
    // Tools whose return type is not `Json<T>` publish no output schema.
    let plain = tools.iter().find(|t| t["name"] == "hit").unwrap();
    assert!(plain.get("outputSchema").is_none(), "{plain}");

    let reply = call(&server, "price", json!({"quantity": 3, "sku": "tea"})).await;
    assert_eq!(
        reply["result"]["structuredContent"],
        json!({"total_cents": 750, "sku": "tea"})
    );
}

#[tokio::test]
async fn a_rejected_argument_is_an_error_result_without_the_value() {
    let reply = call(
        &server(),
        "price",
        json!({"quantity": "secret-token-value", "sku": "tea"}),
    )
    .await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("quantity"), "{text}");
    assert!(!text.contains("secret-token-value"), "{text}");
}

#[test]
fn context_state_is_readable_directly() {
    assert!(Context::detached().state::<Counter>().is_none());
    let direct = Arguments::from(json!({"quantity": 1, "sku": "x"}));
    let parsed = <Args<Order> as FromCall<Arguments>>::from_call(&direct, &Context::detached());
    assert_eq!(parsed.ok().map(|Args(o)| o.quantity), Some(1));
}

/// Keys deliberately out of alphabetical order.
#[snodo::tool(
    input_schema = {
        "type": "object",
        "required": ["zeta"],
        "properties": {
            "zeta": { "type": "string", "maxLength": 8, "description": "last letter" },
            "alpha": { "type": "integer" }
        },
        "additionalProperties": false
    },
    output_schema = { "type": "object", "properties": { "z": {}, "a": {} } },
    icons = [{ "src": "https://example.com/ordered.png" }]
)]
async fn ordered(_args: Arguments) -> snodo::CallResult {
    Ok(snodo::ToolResult::structured(json!({"z": 1, "a": 2})))
}

#[tokio::test]
async fn tools_list_publishes_schemas_in_source_order() {
    let server = Server::builder("order", "0.1.0")
        .tool(ordered)
        .build()
        .unwrap();
    let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let snodo::Dispatched::Reply(reply) = server
        .dispatch(request, snodo::TransportInfo::default())
        .await
    else {
        panic!("one reply expected");
    };
    let body = std::str::from_utf8(&reply.body).unwrap();
    assert_schemas_in_source_order(body);
}

/// `body` carries `ordered`'s schemas exactly as they were written.
fn assert_schemas_in_source_order(body: &str) {
    assert!(
        body.contains(
            r#""inputSchema":{"type":"object","required":["zeta"],"properties":{"zeta":{"type":"string","maxLength":8,"description":"last letter"},"alpha":{"type":"integer"}},"additionalProperties":false}"#
        ),
        "{body}"
    );
    assert!(
        body.contains(r#""outputSchema":{"type":"object","properties":{"z":{},"a":{}}}"#),
        "{body}"
    );
}

/// The initialize era lists the tool without its icons (a re-encoded item),
/// and still with its schemas as written.
#[tokio::test]
async fn initialize_era_tools_list_keeps_source_order() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let server = Server::builder("order", "0.1.0")
        .tool(ordered)
        .build()
        .unwrap();
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server_side);
    let serving = tokio::spawn(async move {
        server
            .serve_lines(server_in, server_out, Default::default())
            .await
    });
    let (read, mut write) = tokio::io::split(client);
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ];
    for line in lines {
        write.write_all(line.as_bytes()).await.unwrap();
        write.write_all(b"\n").await.unwrap();
    }
    let mut output = BufReader::new(read).lines();
    let mut listed = None;
    while listed.is_none() {
        let line = tokio::time::timeout(std::time::Duration::from_secs(5), output.next_line())
            .await
            .expect("a line within 5 s")
            .unwrap()
            .expect("the server is still writing");
        if line.contains(r#""id":1"#) {
            listed = Some(line);
        }
    }
    let listed = listed.unwrap();
    assert!(!listed.contains("icons"), "{listed}");
    assert_schemas_in_source_order(&listed);
    drop(write);
    drop(output);
    serving.await.unwrap().unwrap();
}

/// A hand-written tool whose schema text says something else than its schema.
struct Mismatched;

impl snodo::Tool for Mismatched {
    fn name(&self) -> &str {
        "mismatched"
    }

    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    }

    fn input_schema_text(&self) -> Option<&str> {
        Some(r#"{"type":"object","properties":{"a":{"type":"integer"}}}"#)
    }

    async fn call(&self, _args: Arguments, _cx: Context) -> snodo::CallResult {
        Ok(snodo::ToolResult::text("unreachable"))
    }
}

#[test]
fn schema_text_must_encode_the_schema() {
    let error = Server::builder("order", "0.1.0")
        .tool(Mismatched)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("mismatched") && error.contains("inputSchema text"),
        "{error}"
    );
}
