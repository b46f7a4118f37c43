//! `#[snodo::tool]`, `#[snodo::resource]` and `#[snodo::prompt]`: compile-pass
//! and compile-fail cases (trybuild), macro-generated tools called directly, and
//! macro-generated resources and prompts served by a `Server` (literal JSON
//! requests in, responses validated against the official schema).
//!
//! Refresh the `.stderr` snapshots with `TRYBUILD=overwrite cargo test -p snodo --test macros`,
//! then read each one: the span must sit on the offending key or value.

mod common;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use snodo::prompt::{PromptArguments, PromptMessage, PromptResult};
use snodo::resource::{ReadRequest, ResourceContents};
use snodo::{Args, Arguments, CallResult, Content, Context, Json, Server, Tool};

use common::assert_response;

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    // `Args<T>` without `input_schema`: the error depends on the `schemars` feature.
    #[cfg(not(feature = "schemars"))]
    cases.compile_fail("tests/ui/fail_without_schemars/*.rs");
    #[cfg(feature = "schemars")]
    cases.compile_fail("tests/ui/fail_with_schemars/*.rs");
}

/// Create a greeting.
///
/// The name is also sent as a header.
#[snodo::tool(
    title = "Greeter",
    annotations = { "readOnlyHint": true, "openWorldHint": false },
    icons = [{ "src": "https://example.com/greet.png", "mimeType": "image/png", "sizes": ["48x48"] }],
    meta = { "com.example/owner": "docs", "weight": -1.5 },
    input_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "name": { "type": "string", "minLength": 1 } },
        "properties": {
            "name": { "type": "string", "x-mcp-header": "Name" },
            "times": { "type": "integer", "minimum": 1, "maximum": 3, "default": 1 }
        },
        "required": ["name"],
        "additionalProperties": false,
    }
)]
async fn greet(args: Arguments, cx: Context) -> CallResult {
    let times = usize::try_from(args.i64("times").unwrap_or(1)).unwrap_or(1);
    let greeting = format!("Hello, {}! ({})", args.str("name")?, cx.protocol_version());
    Ok(vec![greeting; times].join(" ").into())
}

#[derive(Deserialize)]
struct Sum {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Total {
    sum: i64,
}

#[snodo::tool(
    name = "math.add",
    description = "Add two integers",
    input_schema = {
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"]
    },
    output_schema = {
        "type": "object",
        "properties": { "sum": { "type": "integer" } },
        "required": ["sum"]
    }
)]
async fn add(Args(Sum { a, b }): Args<Sum>) -> Json<Total> {
    Json(Total { sum: a + b })
}

#[snodo::tool]
async fn read_config(_args: Arguments) -> Result<String, std::io::Error> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "no config file",
    ))
}

fn args(value: serde_json::Value) -> Arguments {
    Arguments::from(value)
}

#[tokio::test]
async fn a_generated_tool_runs_its_function() {
    let result = Tool::call(
        &greet,
        args(json!({"name": "Ada", "times": 2})),
        Context::detached(),
    )
    .await
    .unwrap();
    assert_eq!(
        result.to_wire(),
        json!({"content": [{"type": "text", "text": "Hello, Ada! (2026-07-28) Hello, Ada! (2026-07-28)"}]})
    );
}

#[tokio::test]
async fn a_generated_tool_passes_handler_errors_through() {
    let wrong = Tool::call(&greet, args(json!({"name": 3})), Context::detached()).await;
    assert_eq!(
        wrong.unwrap_err().to_string(),
        "Argument `name` must be a string"
    );
    let io = Tool::call(&read_config, args(json!({})), Context::detached()).await;
    assert_eq!(io.unwrap_err().to_string(), "no config file");
}

#[test]
fn the_definition_is_published_verbatim() {
    let def = snodo::tool::definition(&greet);
    assert_eq!(def.name, "greet");
    assert_eq!(def.title.as_deref(), Some("Greeter"));
    assert_eq!(
        def.description.as_deref(),
        Some("Create a greeting.\n\nThe name is also sent as a header.")
    );
    assert_eq!(
        def.input_schema,
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": { "name": { "type": "string", "minLength": 1 } },
            "properties": {
                "name": { "type": "string", "x-mcp-header": "Name" },
                "times": { "type": "integer", "minimum": 1, "maximum": 3, "default": 1 }
            },
            "required": ["name"],
            "additionalProperties": false
        })
    );
    assert_eq!(def.output_schema, None);
    assert_eq!(
        def.annotations,
        Some(json!({"readOnlyHint": true, "openWorldHint": false}))
    );
    assert_eq!(
        def.icons,
        Some(
            json!([{"src": "https://example.com/greet.png", "mimeType": "image/png", "sizes": ["48x48"]}])
        )
    );
    assert_eq!(
        def.meta,
        Some(json!({"com.example/owner": "docs", "weight": -1.5}))
    );
}

#[tokio::test]
async fn typed_arguments_are_deserialized_before_the_call() {
    let result = Tool::call(&add, args(json!({"a": 1, "b": 2})), Context::detached())
        .await
        .unwrap();
    assert_eq!(result.structured_content(), Some(&json!({"sum": 3})));
    let def = snodo::tool::definition(&add);
    assert_eq!(def.name, "math.add");
    assert_eq!(def.description.as_deref(), Some("Add two integers"));
    assert_eq!(def.output_schema.unwrap()["required"], json!(["sum"]));
}

#[tokio::test]
async fn a_typed_argument_failure_is_an_error_result_naming_the_field() {
    let result = Tool::call(
        &add,
        args(json!({"a": 1, "b": "secret"})),
        Context::detached(),
    )
    .await
    .unwrap();
    assert!(result.is_error());
    let text = result.to_wire()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(text, "Invalid arguments: `b` has the wrong type");
    assert!(!text.contains("secret"));

    let missing = Tool::call(&add, args(json!({"a": 1})), Context::detached())
        .await
        .unwrap();
    assert!(missing.is_error());
    assert!(
        missing.to_wire()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`b`")
    );
}

#[test]
fn without_a_schema_the_input_is_any_object() {
    let def = snodo::tool::definition(&read_config);
    assert_eq!(def.name, "read_config");
    assert_eq!(def.description, None);
    assert_eq!(def.input_schema, json!({"type": "object"}));
}

#[test]
fn the_generated_type_is_a_plain_value() {
    fn assert_tool<T: Tool + Copy + Default + std::fmt::Debug>(_: T) {}
    assert_tool(greet);
    assert_tool(add);
    assert_eq!(format!("{add:?}"), "add");
}

/// Without `input_schema`, typed arguments publish the schema `schemars` derives.
#[cfg(feature = "schemars")]
mod derived_schema {
    use super::*;

    #[derive(Deserialize, schemars::JsonSchema)]
    struct Point {
        x: i64,
        y: i64,
    }

    #[snodo::tool(description = "Manhattan norm")]
    async fn norm(Args(Point { x, y }): Args<Point>) -> String {
        (x.abs() + y.abs()).to_string()
    }

    #[tokio::test]
    async fn typed_arguments_without_a_schema_use_the_derived_one() {
        let schema = snodo::tool::definition(&norm).input_schema;
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["x"]["type"], "integer");
        assert_eq!(schema["required"], json!(["x", "y"]));
        // `__private::schema_for` drops the keywords a tool schema does not need.
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
        let result = Tool::call(&norm, args(json!({"x": -3, "y": 4})), Context::detached())
            .await
            .unwrap();
        assert_eq!(result.to_wire()["content"][0]["text"], "7");
    }
}

/// The project's readme.
#[snodo::resource(
    uri = "docs://readme",
    title = "Readme",
    mime_type = "text/markdown",
    size = 7,
    annotations = { "audience": ["user", "assistant"], "priority": 0.5 },
    icons = [{ "src": "https://example.com/readme.png", "mimeType": "image/png" }],
    meta = { "com.example/section": "top" },
)]
async fn readme() -> &'static str {
    "# Hello"
}

/// One page of the documentation, in a language.
#[snodo::resource(
    uri_template = "docs://pages/{page}{?lang}",
    name = "pages",
    mime_type = "text/plain",
    complete = page_names,
)]
async fn page(cx: Context, req: ReadRequest) -> Result<String, snodo::Error> {
    match req.var("page") {
        Some("secret") => Err(snodo::Error::invalid_params("That page is private")),
        name => Ok(format!(
            "{} in {} ({})",
            name.unwrap_or_default(),
            req.var("lang").unwrap_or("en"),
            cx.protocol_version()
        )),
    }
}

async fn page_names(variable: &str, value: &str) -> Vec<String> {
    let names: &[&str] = match variable {
        "page" => &["install", "intro", "usage"],
        "lang" => &["en", "fr"],
        _ => &[],
    };
    names
        .iter()
        .filter(|n| n.starts_with(value))
        .map(|n| n.to_string())
        .collect()
}

#[snodo::resource(uri_template = "data://logos/{id}")]
async fn logo(req: ReadRequest) -> Vec<ResourceContents> {
    vec![
        ResourceContents::blob(&req.uri, "aGk=").with_mime_type("image/png"),
        ResourceContents::text(&req.uri, req.var("id").unwrap_or_default()),
    ]
}

#[snodo::resource(uri = "data://broken")]
async fn broken(_req: ReadRequest) -> std::io::Result<ResourceContents> {
    Err(std::io::Error::other("disk on fire"))
}

/// Asks for a short brief.
#[snodo::prompt(
    title = "Brief",
    arguments = [
        { "name": "topic", "title": "Topic", "description": "What the brief is about", "required": true },
        { "name": "tone" },
    ],
    icons = [{ "src": "https://example.com/brief.png" }],
    meta = { "com.example/kind": "writing" },
    complete = tones,
)]
async fn brief(args: PromptArguments) -> String {
    format!(
        "Write a {} brief about {}.",
        args.get("tone").unwrap_or("neutral"),
        args.get("topic").unwrap_or_default()
    )
}

async fn tones(argument: &str, value: &str) -> Vec<String> {
    if argument != "tone" {
        return Vec::new();
    }
    ["formal", "friendly", "funny"]
        .iter()
        .filter(|t| t.starts_with(value))
        .map(|t| t.to_string())
        .collect()
}

#[snodo::prompt(name = "review", description = "A review conversation")]
async fn review_conversation(_cx: Context, args: PromptArguments) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user_text(format!("Review: {}", args.iter().count())),
        PromptMessage::assistant(Content::text("Send me the diff.")),
    ]
}

#[snodo::prompt]
async fn unavailable() -> Result<PromptResult, std::io::Error> {
    Err(std::io::Error::other("model offline"))
}

fn catalog() -> Server {
    Server::builder("docs", "0.1.0")
        .resource(readme)
        .resource(page)
        .resource(logo)
        .resource(broken)
        .prompt(brief)
        .prompt(review_conversation)
        .prompt(unavailable)
        .build()
        .expect("macro-made components pass the registry's rules")
}

async fn send(server: &Server, method: &str, params: Value) -> Value {
    server
        .dispatch_value(snodo_test::request(method, params))
        .await
        .expect("a request gets a response")
}

#[tokio::test]
async fn macro_resources_are_listed_with_every_key() {
    let server = catalog();
    let list = send(&server, "resources/list", json!({})).await;
    assert_response(&list, "ListResourcesResult");
    assert_eq!(
        list["result"]["resources"],
        json!([
            { "uri": "data://broken", "name": "broken" },
            {
                "uri": "docs://readme",
                "name": "readme",
                "title": "Readme",
                "description": "The project's readme.",
                "mimeType": "text/markdown",
                "annotations": { "audience": ["user", "assistant"], "priority": 0.5 },
                "size": 7,
                "icons": [{ "src": "https://example.com/readme.png", "mimeType": "image/png" }],
                "_meta": { "com.example/section": "top" }
            }
        ])
    );
    let templates = send(&server, "resources/templates/list", json!({})).await;
    assert_response(&templates, "ListResourceTemplatesResult");
    assert_eq!(
        templates["result"]["resourceTemplates"],
        json!([
            { "uriTemplate": "data://logos/{id}", "name": "logo" },
            {
                "uriTemplate": "docs://pages/{page}{?lang}",
                "name": "pages",
                "description": "One page of the documentation, in a language.",
                "mimeType": "text/plain"
            }
        ])
    );
}

#[tokio::test]
async fn macro_resources_are_read() {
    let server = catalog();
    let text = send(&server, "resources/read", json!({"uri": "docs://readme"})).await;
    assert_response(&text, "ReadResourceResult");
    assert_eq!(
        text["result"]["contents"],
        json!([{"uri": "docs://readme", "text": "# Hello", "mimeType": "text/markdown"}])
    );

    // A `String` becomes text at the URI read, with the declared MIME type.
    let read = send(
        &server,
        "resources/read",
        json!({"uri": "docs://pages/intro?lang=fr"}),
    )
    .await;
    assert_response(&read, "ReadResourceResult");
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "docs://pages/intro?lang=fr", "text": "intro in fr (2026-07-28)", "mimeType": "text/plain"}])
    );

    let logos = send(&server, "resources/read", json!({"uri": "data://logos/42"})).await;
    assert_response(&logos, "ReadResourceResult");
    assert_eq!(
        logos["result"]["contents"],
        json!([
            {"uri": "data://logos/42", "blob": "aGk=", "mimeType": "image/png"},
            {"uri": "data://logos/42", "text": "42"}
        ])
    );
}

#[tokio::test]
async fn macro_resource_errors_keep_their_two_shapes() {
    let server = catalog();
    // A typed `snodo::Error` reaches the client as is.
    let private = send(
        &server,
        "resources/read",
        json!({"uri": "docs://pages/secret"}),
    )
    .await;
    assert_response(&private, "");
    assert_eq!(
        private["error"],
        json!({"code": -32602, "message": "That page is private"})
    );
    // Any other error is an internal error whose cause stays on the server.
    let failed = send(&server, "resources/read", json!({"uri": "data://broken"})).await;
    assert_response(&failed, "");
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "Resource read failed"})
    );
}

#[tokio::test]
async fn macro_prompts_are_listed_and_rendered() {
    let server = catalog();
    let list = send(&server, "prompts/list", json!({})).await;
    assert_response(&list, "ListPromptsResult");
    assert_eq!(
        list["result"]["prompts"],
        json!([
            {
                "name": "brief",
                "title": "Brief",
                "description": "Asks for a short brief.",
                "arguments": [
                    {"name": "topic", "title": "Topic", "description": "What the brief is about", "required": true},
                    {"name": "tone", "required": false}
                ],
                "icons": [{ "src": "https://example.com/brief.png" }],
                "_meta": { "com.example/kind": "writing" }
            },
            {"name": "review", "description": "A review conversation"},
            {"name": "unavailable"}
        ])
    );

    let rendered = send(
        &server,
        "prompts/get",
        json!({"name": "brief", "arguments": {"topic": "Rust", "tone": "formal"}}),
    )
    .await;
    assert_response(&rendered, "GetPromptResult");
    assert_eq!(
        rendered["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Write a formal brief about Rust."}}])
    );

    // The registry enforces the arguments the macro declared.
    let missing = send(
        &server,
        "prompts/get",
        json!({"name": "brief", "arguments": {}}),
    )
    .await;
    assert_response(&missing, "");
    assert_eq!(missing["error"]["data"], json!({"missing": ["topic"]}));

    let review = send(
        &server,
        "prompts/get",
        json!({"name": "review", "arguments": {"a": "1", "b": "2"}}),
    )
    .await;
    assert_response(&review, "GetPromptResult");
    assert_eq!(
        review["result"]["messages"],
        json!([
            {"role": "user", "content": {"type": "text", "text": "Review: 2"}},
            {"role": "assistant", "content": {"type": "text", "text": "Send me the diff."}}
        ])
    );

    let failed = send(&server, "prompts/get", json!({"name": "unavailable"})).await;
    assert_response(&failed, "");
    assert_eq!(failed["error"]["code"], -32603);
}

#[tokio::test]
async fn macro_completion_calls_the_named_function() {
    let server = catalog();
    let discover = send(&server, "server/discover", json!({})).await;
    assert!(
        discover["result"]["capabilities"]["completions"].is_object(),
        "{discover}"
    );

    let tone = send(
        &server,
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "brief"},
            "argument": {"name": "tone", "value": "f"},
            "context": {"arguments": {"topic": "Rust"}}
        }),
    )
    .await;
    assert_response(&tone, "CompleteResult");
    assert_eq!(
        tone["result"]["completion"],
        json!({"values": ["formal", "friendly", "funny"], "total": 3, "hasMore": false})
    );

    let variable = send(
        &server,
        "completion/complete",
        json!({
            "ref": {"type": "ref/resource", "uri": "docs://pages/{page}{?lang}"},
            "argument": {"name": "page", "value": "in"}
        }),
    )
    .await;
    assert_response(&variable, "CompleteResult");
    assert_eq!(
        variable["result"]["completion"],
        json!({"values": ["install", "intro"], "total": 2, "hasMore": false})
    );

    // Without `complete`, a template offers nothing.
    let nothing = send(
        &server,
        "completion/complete",
        json!({
            "ref": {"type": "ref/resource", "uri": "data://logos/{id}"},
            "argument": {"name": "id", "value": "4"}
        }),
    )
    .await;
    assert_eq!(
        nothing["result"]["completion"],
        json!({"values": [], "total": 0, "hasMore": false})
    );
}

#[test]
fn macro_components_are_plain_values() {
    use snodo::prompt::Prompt;
    use snodo::resource::Resource;
    fn assert_resource<T: Resource + Copy + Default + std::fmt::Debug>(_: T) {}
    fn assert_prompt<T: Prompt + Copy + Default + std::fmt::Debug>(_: T) {}
    assert_resource(readme);
    assert_resource(page);
    assert_prompt(brief);
    assert_prompt(review_conversation);
    assert!(Resource::completes(&page) && !Resource::completes(&readme));
    assert_eq!(Resource::size(&readme), Some(7));
    assert_eq!(
        Resource::uri_template(&page),
        Some("docs://pages/{page}{?lang}")
    );
    assert_eq!(Prompt::arguments(&review_conversation), Vec::new());
}

/// Rolls a die, shown in the dice app.
#[snodo::tool(ui = "ui://dice/app.html", ui_visibility = ["model", "app"], meta = {"k": 1})]
async fn roll(_args: Arguments) -> &'static str {
    "4"
}

#[test]
fn the_ui_key_binds_the_tool_to_its_app() {
    let def = snodo::tool::definition(&roll);
    assert_eq!(
        def.meta,
        Some(
            json!({"k": 1, "ui": {"resourceUri": "ui://dice/app.html", "visibility": ["model", "app"]}})
        )
    );
}
