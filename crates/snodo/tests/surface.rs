//! The 2026-07-28 server surface beyond tools: resources, templates, prompts,
//! completion, progress, logging, listen, multi round-trip requests, policy,
//! extensions and runtime change. Literal JSON in, literal expectations out,
//! every frame validated against the official schema.

mod common;

use serde_json::{Map, Value, json};
use snodo::Error;
use snodo::model::LogLevel;
use snodo::prelude::*;
use snodo::prompt::PromptArguments;
use snodo::prompt::{Prompt, PromptArgument, PromptMessage, PromptResult};
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo::server::StateSealer;
use snodo::server::{Event, Extension, Item, Policy};
use snodo::tool::{BoxFuture, from_fn};
use snodo::{Principal, TransportInfo};

use common::{assert_response, assert_valid, meta_with};

struct Readme;

impl Resource for Readme {
    fn uri(&self) -> Option<&str> {
        Some("demo://readme")
    }
    fn name(&self) -> &str {
        "readme"
    }
    fn mime_type(&self) -> Option<&str> {
        Some("text/markdown")
    }
    fn size(&self) -> Option<u64> {
        Some(7)
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        Ok(ResourceContents::text(req.uri, "# Hello")
            .with_mime_type("text/markdown")
            .into())
    }
}

struct Files;

impl Resource for Files {
    fn uri_template(&self) -> Option<&str> {
        Some("file:///{+path}")
    }
    fn name(&self) -> &str {
        "files"
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let path = req.var("path").unwrap_or_default().to_string();
        if path == "secret" {
            return Err(std::io::Error::other("disk detail").into());
        }
        Ok(ResourceContents::blob(req.uri, "aGk=")
            .with_mime_type("application/octet-stream")
            .into())
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(&self, _var: &str, value: &str, _cx: &Map<String, Value>) -> Vec<String> {
        (0..150).map(|i| format!("{value}{i}")).collect()
    }
}

struct Introduce;

impl Prompt for Introduce {
    fn name(&self) -> &str {
        "introduce"
    }
    fn description(&self) -> Option<&str> {
        Some("Introduce someone")
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![
            PromptArgument::required("name"),
            PromptArgument::optional("tone"),
        ]
    }
    async fn get(&self, args: PromptArguments, _cx: Context) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new([
            PromptMessage::user_text(format!(
                "Introduce {}",
                args.get("name").unwrap_or_default()
            )),
            PromptMessage::user(Content::image("aGk=", "image/png")),
            PromptMessage::user(Content::resource_link("demo://readme", "readme")),
        ])
        .with_description("An introduction"))
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(&self, _arg: &str, value: &str, _cx: &Map<String, Value>) -> Vec<String> {
        ["Ada", "Alan", "Grace"]
            .iter()
            .filter(|n| n.starts_with(value))
            .map(|n| n.to_string())
            .collect()
    }
}

struct Echo;

impl Extension for Echo {
    fn name(&self) -> &str {
        "com.example/echo"
    }
    fn methods(&self) -> Vec<String> {
        vec!["echo/say".into()]
    }
    fn handle<'a>(
        &'a self,
        _method: &'a str,
        params: Map<String, Value>,
        _cx: Context,
    ) -> BoxFuture<'a, Result<Map<String, Value>, Error>> {
        Box::pin(async move {
            let mut out = Map::new();
            out.insert(
                "said".into(),
                params.get("text").cloned().unwrap_or(Value::Null),
            );
            Ok(out)
        })
    }
}

fn sealer() -> StateSealer {
    StateSealer::new("test", [42u8; 32]).unwrap()
}

fn server() -> Server {
    let sealer = sealer();
    Server::builder("surface", "2.0.0")
        .resource(Readme)
        .resource(Files)
        .prompt(Introduce)
        .extension(Echo)
        .tool(from_fn("count", |args, cx| async move {
            let to = args.i64("to")?;
            for i in 1..=to {
                let _ = cx
                    .progress(i as f64, Some(to as f64), Some(&format!("step {i}")))
                    .await;
                cx.log(LogLevel::Debug, format!("debug {i}")).await;
                cx.log(LogLevel::Warning, format!("warn {i}")).await;
            }
            Ok(ToolResult::text(format!("counted to {to}")))
        }))
        .tool(from_fn("confirm", move |_, cx| {
            let sealer = sealer.clone();
            async move {
                if let (Some(state), Some(answer)) = (sealer.open(&cx)?, cx.elicitation("ok")) {
                    return Ok(ToolResult::text(format!(
                        "{} {}",
                        state["step"],
                        answer.bool("ok").unwrap_or(false)
                    )));
                }
                Ok(ToolResult::input_required(
                    InputRequired::new()
                        .elicit_form(
                            "ok",
                            "Sure?",
                            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                        )
                        .state(sealer.seal(&cx, &json!({"step": "asked"}))),
                ))
            }
        }))
        .tool(from_fn("needs_sampling", |_, _| async {
            Ok(ToolResult::input_required(
                InputRequired::new().sample("s", json!({"messages": [], "maxTokens": 5})),
            ))
        }))
        .tool(from_fn("wait_for_cancel", |_, cx| async move {
            cx.cancellation().cancelled().await;
            Ok(ToolResult::text("never sent"))
        }))
        .build()
        .unwrap()
}

fn request(id: Value, method: &str, mut params: Value) -> Value {
    let meta = params
        .get("_meta")
        .cloned()
        .unwrap_or_else(|| meta_with(json!({})));
    params["_meta"] = meta;
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn send(server: &Server, id: i64, method: &str, params: Value) -> Value {
    let response = server
        .dispatch_value(request(json!(id), method, params))
        .await
        .unwrap();
    assert_eq!(response["id"], id);
    response
}

#[tokio::test]
async fn discover_derives_capabilities_from_the_catalog() {
    let response = send(&server(), 1, "server/discover", json!({})).await;
    assert_response(&response, "DiscoverResult");
    assert_eq!(
        response["result"]["capabilities"],
        json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {},
            "extensions": {"com.example/echo": {}}
        })
    );
}

#[tokio::test]
async fn resources_and_templates_are_listed_and_read() {
    let server = server();
    let list = send(&server, 2, "resources/list", json!({})).await;
    assert_response(&list, "ListResourcesResult");
    assert_eq!(
        list["result"]["resources"],
        json!([{"uri": "demo://readme", "name": "readme", "mimeType": "text/markdown", "size": 7}])
    );
    let templates = send(&server, 3, "resources/templates/list", json!({})).await;
    assert_response(&templates, "ListResourceTemplatesResult");
    assert_eq!(
        templates["result"]["resourceTemplates"],
        json!([{"uriTemplate": "file:///{+path}", "name": "files"}])
    );

    let text = send(
        &server,
        4,
        "resources/read",
        json!({"uri": "demo://readme"}),
    )
    .await;
    assert_response(&text, "ReadResourceResult");
    assert_eq!(
        text["result"]["contents"],
        json!([{"uri": "demo://readme", "mimeType": "text/markdown", "text": "# Hello"}])
    );
    assert_eq!(text["result"]["ttlMs"], 0);
    assert_eq!(text["result"]["cacheScope"], "private");

    let blob = send(
        &server,
        5,
        "resources/read",
        json!({"uri": "file:///a/b%20c.txt"}),
    )
    .await;
    assert_response(&blob, "ReadResourceResult");
    assert_eq!(blob["result"]["contents"][0]["blob"], "aGk=");

    let missing = send(
        &server,
        6,
        "resources/read",
        json!({"uri": "demo://nothing"}),
    )
    .await;
    assert_response(&missing, "");
    assert_eq!(
        missing["error"],
        json!({"code": -32602, "message": "Resource not found", "data": {"uri": "demo://nothing"}})
    );

    let failing = send(
        &server,
        7,
        "resources/read",
        json!({"uri": "file:///secret"}),
    )
    .await;
    assert_eq!(
        failing["error"],
        json!({"code": -32603, "message": "Resource read failed"})
    );
}

#[tokio::test]
async fn prompts_enforce_string_and_required_arguments() {
    let server = server();
    let list = send(&server, 10, "prompts/list", json!({})).await;
    assert_response(&list, "ListPromptsResult");
    assert_eq!(
        list["result"]["prompts"][0]["arguments"],
        json!([{"name": "name", "required": true}, {"name": "tone", "required": false}])
    );

    let ok = send(
        &server,
        11,
        "prompts/get",
        json!({"name": "introduce", "arguments": {"name": "Ada"}}),
    )
    .await;
    assert_response(&ok, "GetPromptResult");
    assert_eq!(
        ok["result"]["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "Introduce Ada"}})
    );
    assert_eq!(ok["result"]["description"], "An introduction");

    let missing = send(
        &server,
        12,
        "prompts/get",
        json!({"name": "introduce", "arguments": {}}),
    )
    .await;
    assert_eq!(
        missing["error"],
        json!({"code": -32602, "message": "Missing required prompt arguments", "data": {"missing": ["name"]}})
    );
    let typed = send(
        &server,
        13,
        "prompts/get",
        json!({"name": "introduce", "arguments": {"name": 7}}),
    )
    .await;
    assert_eq!(typed["error"]["code"], -32602);
    let unknown = send(&server, 14, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(
        unknown["error"],
        json!({"code": -32602, "message": "Unknown prompt: nope"})
    );
}

#[tokio::test]
async fn completion_caps_values_at_one_hundred() {
    let server = server();
    let prompt = send(&server, 20, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "introduce"}, "argument": {"name": "name", "value": "A"}})).await;
    assert_response(&prompt, "CompleteResult");
    assert_eq!(
        prompt["result"]["completion"],
        json!({"values": ["Ada", "Alan"], "total": 2, "hasMore": false})
    );
    let template = send(&server, 21, "completion/complete", json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"}, "argument": {"name": "path", "value": "x"}})).await;
    assert_response(&template, "CompleteResult");
    assert_eq!(
        template["result"]["completion"]["values"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
    assert_eq!(template["result"]["completion"]["total"], 150);
    assert_eq!(template["result"]["completion"]["hasMore"], true);
}

#[tokio::test]
async fn progress_and_logs_precede_the_response_only_when_asked() {
    let server = server();
    let plain = server
        .dispatch_collect(request(
            json!(30),
            "tools/call",
            json!({"name": "count", "arguments": {"to": 3}}),
        ))
        .await;
    assert_eq!(
        plain.len(),
        1,
        "no notifications without a token: {plain:?}"
    );

    let mut meta = meta_with(json!({}));
    meta["progressToken"] = json!("tok");
    meta["io.modelcontextprotocol/logLevel"] = json!("warning");
    let frames = server
        .dispatch_collect(request(
            json!(31),
            "tools/call",
            json!({"_meta": meta, "name": "count", "arguments": {"to": 3}}),
        ))
        .await;
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or("response"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "response"
        ]
    );
    assert_eq!(
        frames[0]["params"],
        json!({"progressToken": "tok", "progress": 1, "total": 3, "message": "step 1"})
    );
    assert_eq!(
        frames[1]["params"],
        json!({"level": "warning", "data": "warn 1"})
    );
    for frame in &frames[..6] {
        assert_valid("JSONRPCNotification", frame);
    }
    assert_response(&frames[6], "CallToolResult");
    assert_eq!(frames[6]["result"]["content"][0]["text"], "counted to 3");

    let mut bad = meta_with(json!({}));
    bad["io.modelcontextprotocol/logLevel"] = json!("loud");
    let refused = send(
        &server,
        32,
        "tools/call",
        json!({"_meta": bad, "name": "count", "arguments": {"to": 1}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602);
}

#[tokio::test]
async fn sealed_state_round_trip_and_tampering() {
    let server = server();
    let elicit = json!({"elicitation": {}});
    let first = send(
        &server,
        40,
        "tools/call",
        json!({"_meta": meta_with(elicit.clone()), "name": "confirm"}),
    )
    .await;
    assert_response(&first, "InputRequiredResult");
    assert_eq!(first["result"]["resultType"], "input_required");
    assert_eq!(
        first["result"]["inputRequests"]["ok"]["method"],
        "elicitation/create"
    );
    let state = first["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();

    let retry = send(&server, 41, "tools/call", json!({"_meta": meta_with(elicit.clone()), "name": "confirm",
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}, "requestState": state})).await;
    assert_eq!(retry["result"]["content"][0]["text"], "\"asked\" true");

    let tampered = send(&server, 42, "tools/call", json!({"_meta": meta_with(elicit.clone()), "name": "confirm",
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}, "requestState": format!("{state}x")})).await;
    assert_eq!(
        tampered["error"],
        json!({"code": -32602, "message": "Invalid or expired request state"})
    );

    let other_tool_args = send(&server, 43, "tools/call", json!({"_meta": meta_with(elicit.clone()), "name": "confirm", "arguments": {"extra": 1},
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}, "requestState": state})).await;
    assert_eq!(
        other_tool_args["error"]["code"], -32602,
        "state is bound to the params"
    );

    let no_caps = send(&server, 44, "tools/call", json!({"name": "confirm"})).await;
    assert_eq!(
        no_caps["error"],
        json!({"code": -32021, "message": "Missing required client capability", "data": {"requiredCapabilities": {"elicitation": {"form": {}}}}})
    );
    let sampling = send(&server, 45, "tools/call", json!({"name": "needs_sampling"})).await;
    assert_eq!(
        sampling["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );

    let malformed = send(
        &server,
        46,
        "tools/call",
        json!({"_meta": meta_with(elicit), "name": "confirm", "inputResponses": [1]}),
    )
    .await;
    assert_eq!(malformed["error"]["code"], -32602);
}

#[tokio::test]
async fn listen_acknowledges_then_forwards_only_requested_events() {
    use futures_util::StreamExt;
    let server = server();
    let listen = request(
        json!("sub-1"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": false, "resourceSubscriptions": ["demo://readme"]}}),
    );
    let snodo::Dispatched::Stream(mut stream) = server
        .dispatch(
            &serde_json::to_vec(&listen).unwrap(),
            TransportInfo::default(),
        )
        .await
    else {
        panic!("listen streams");
    };
    let next = |frame: Option<bytes::Bytes>| -> Value {
        serde_json::from_slice(&frame.expect("a frame")).unwrap()
    };
    let ack = next(stream.next().await);
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
        "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]},
        "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"}}})
    );
    assert_valid("JSONRPCNotification", &ack);

    server.events().prompts_changed();
    server.events().resource_updated("demo://other");
    server.events().resource_updated("demo://readme");
    server
        .add_tool(from_fn("added_later", |_, _| async {
            Ok(ToolResult::text("hi"))
        }))
        .unwrap();
    assert_eq!(
        next(stream.next().await),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "demo://readme", "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"}}})
    );
    assert_eq!(
        next(stream.next().await)["method"],
        "notifications/tools/list_changed"
    );

    server.events().publish(Event::Shutdown);
    let cancelled = next(stream.next().await);
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], "sub-1");
    let last = next(stream.next().await);
    assert_response(&last, "SubscriptionsListenResult");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert!(stream.next().await.is_none());
    assert_eq!(server.events().open_subscriptions(), 0);
}

#[tokio::test]
async fn runtime_change_invalidates_cursors() {
    let server = Server::builder("rt", "1")
        .page_size(1)
        .tool(from_fn("a", |_, _| async { Ok(ToolResult::text("a")) }))
        .tool(from_fn("b", |_, _| async { Ok(ToolResult::text("b")) }))
        .build()
        .unwrap();
    let first = send(&server, 50, "tools/list", json!({})).await;
    let cursor = first["result"]["nextCursor"].clone();
    assert!(server.remove_tool("b"));
    let stale = send(&server, 51, "tools/list", json!({"cursor": cursor})).await;
    assert_eq!(
        stale["error"],
        json!({"code": -32602, "message": "Pagination cursor has expired"})
    );
    let gone = send(&server, 52, "tools/call", json!({"name": "b"})).await;
    assert_eq!(gone["error"]["message"], "Unknown tool: b");
}

struct HideAdmin;

impl Policy for HideAdmin {
    fn can_see(&self, who: Option<&Principal>, item: Item<'_>) -> bool {
        !matches!(item, Item::Tool(n) if n.starts_with("admin"))
            || who.is_some_and(|p| p.subject == "root")
    }
    fn check(&self, cx: &Context, item: Item<'_>) -> Result<(), Error> {
        if self.can_see(cx.principal(), item) {
            Ok(())
        } else {
            Err(Error::new(-31001, "Forbidden"))
        }
    }
}

#[tokio::test]
async fn policy_filters_lists_and_guards_calls() {
    let server = Server::builder("p", "1")
        .policy(HideAdmin)
        .tool(from_fn("admin_reset", |_, _| async {
            Ok(ToolResult::text("reset"))
        }))
        .tool(from_fn("public", |_, _| async {
            Ok(ToolResult::text("ok"))
        }))
        .build()
        .unwrap();
    let list = send(&server, 60, "tools/list", json!({})).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 1);
    let denied = send(&server, 61, "tools/call", json!({"name": "admin_reset"})).await;
    assert_eq!(
        denied["error"],
        json!({"code": -31001, "message": "Forbidden"})
    );
    let root = TransportInfo {
        principal: Some(Principal::new("root")),
        ..Default::default()
    };
    let body = serde_json::to_vec(&request(
        json!(62),
        "tools/call",
        json!({"name": "admin_reset"}),
    ))
    .unwrap();
    let snodo::Dispatched::Reply(reply) = server.dispatch(&body, root).await else {
        panic!()
    };
    let reply: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "reset");
}

#[tokio::test]
async fn extension_methods_need_both_sides() {
    let server = server();
    let undeclared = send(&server, 70, "echo/say", json!({"text": "hi"})).await;
    assert_eq!(undeclared["error"]["code"], -32021);
    let declared = send(
        &server,
        71,
        "echo/say",
        json!({"_meta": meta_with(json!({"extensions": {"com.example/echo": {}}})), "text": "hi"}),
    )
    .await;
    assert_eq!(declared["result"]["said"], "hi");
    assert_eq!(declared["result"]["resultType"], "complete");
}

#[tokio::test]
async fn build_refuses_conflicting_resources() {
    struct Fixed(&'static str, &'static str);
    impl Resource for Fixed {
        fn uri(&self) -> Option<&str> {
            Some(self.1)
        }
        fn name(&self) -> &str {
            self.0
        }
        async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
            Ok(ResourceContents::text(req.uri, "").into())
        }
    }
    let shadowed = Server::builder("x", "1")
        .resource(Files)
        .resource(Fixed("f", "file:///etc/hosts"))
        .build()
        .unwrap_err();
    assert!(
        shadowed
            .to_string()
            .contains("already matched by the template"),
        "{shadowed}"
    );
    let dup = Server::builder("x", "1")
        .resource(Fixed("a", "x://1"))
        .resource(Fixed("b", "x://1"))
        .build()
        .unwrap_err();
    assert!(dup.to_string().contains("registered twice"), "{dup}");
    struct Bad;
    impl Resource for Bad {
        fn uri_template(&self) -> Option<&str> {
            Some("x://{#frag}")
        }
        fn name(&self) -> &str {
            "bad"
        }
        async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
            Ok(ResourceContents::text(req.uri, "").into())
        }
    }
    let refused = Server::builder("x", "1").resource(Bad).build().unwrap_err();
    assert!(refused.to_string().contains("fragment"), "{refused}");
}
