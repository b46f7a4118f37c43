//! What a policy hides stays out of reach beyond calls, reads and gets: a
//! hidden prompt or resource template cannot be completed, and a listener
//! does not hear of updates to resources it cannot see, even under a
//! subscription that covers them. Literal JSON in, literal expectations out.

mod common;

use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use snodo::prelude::*;
use snodo::prompt::{Prompt, PromptArgument, PromptArguments, PromptMessage, PromptResult};
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo::server::{Item, Policy};
use snodo::{Dispatched, Error, Principal, TransportInfo};

use common::meta_with;

/// A template whose variable completes.
struct Files;

impl Resource for Files {
    fn uri_template(&self) -> Option<&str> {
        Some("secret:///{path}")
    }
    fn name(&self) -> &str {
        "files"
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        Ok(ResourceContents::text(req.uri, "x").into())
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(&self, _var: &str, value: &str, _cx: &Map<String, Value>) -> Vec<String> {
        vec![format!("{value}1")]
    }
}

/// A prompt whose argument completes.
struct Brief;

impl Prompt for Brief {
    fn name(&self) -> &str {
        "brief"
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("path")]
    }
    async fn get(
        &self,
        _args: PromptArguments,
        _cx: Context,
    ) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new([PromptMessage::user_text("brief")]))
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(&self, _arg: &str, value: &str, _cx: &Map<String, Value>) -> Vec<String> {
        vec![format!("{value}1")]
    }
}

/// `secret:` resources and the `brief` prompt are for `root` only.
struct RootOnly;

impl Policy for RootOnly {
    fn can_see(&self, who: Option<&Principal>, item: Item<'_>) -> bool {
        let hidden = match item {
            Item::Resource(uri) => uri.starts_with("secret:"),
            Item::Prompt(name) => name == "brief",
            _ => false,
        };
        !hidden || who.is_some_and(|p| p.subject == "root")
    }
    fn check(&self, cx: &Context, item: Item<'_>) -> Result<(), Error> {
        if self.can_see(cx.principal(), item) {
            Ok(())
        } else {
            Err(Error::new(-31001, "Forbidden"))
        }
    }
}

fn server() -> Server {
    Server::builder("reach", "1.0.0")
        .policy(RootOnly)
        .resource(Files)
        .prompt(Brief)
        .build()
        .unwrap()
}

fn as_who(subject: &str) -> TransportInfo {
    TransportInfo {
        principal: Some(Principal::new(subject)),
        ..Default::default()
    }
}

async fn send(server: &Server, who: &str, body: Value) -> Value {
    let Dispatched::Reply(reply) = server
        .dispatch(&serde_json::to_vec(&body).unwrap(), as_who(who))
        .await
    else {
        panic!("a plain reply");
    };
    serde_json::from_slice(&reply.body).unwrap()
}

fn complete(id: i64, reference: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "completion/complete", "params": {
        "ref": reference, "argument": {"name": "path", "value": "a"},
        "_meta": meta_with(json!({}))}})
}

#[tokio::test]
async fn a_hidden_prompt_or_template_cannot_be_completed() {
    let server = server();
    for (id, reference) in [
        (1, json!({"type": "ref/prompt", "name": "brief"})),
        (
            2,
            json!({"type": "ref/resource", "uri": "secret:///{path}"}),
        ),
    ] {
        assert_eq!(
            send(&server, "guest", complete(id, reference.clone())).await,
            json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -31001, "message": "Forbidden"}})
        );
        let allowed = send(&server, "root", complete(id, reference)).await;
        assert_eq!(
            allowed["result"]["completion"],
            json!({"values": ["a1"], "total": 1, "hasMore": false})
        );
    }
}

/// Subscribes `who` to the whole `secret:` scheme and `demo://readme`,
/// publishes an update of a hidden resource then one of a visible one, and
/// returns the first update heard.
async fn first_update_heard(server: &Server, who: &str) -> Value {
    let listen = json!({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen",
        "params": {"_meta": meta_with(json!({})), "notifications": {
            "resourceSubscriptions": ["secret:///", "demo://readme"]}}});
    let Dispatched::Stream(mut stream) = server
        .dispatch(&serde_json::to_vec(&listen).unwrap(), as_who(who))
        .await
    else {
        panic!("listen streams");
    };
    let ack: Value = serde_json::from_slice(&stream.next().await.unwrap()).unwrap();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    server.events().resource_updated("secret:///plans");
    server.events().resource_updated("demo://readme");
    serde_json::from_slice(&stream.next().await.unwrap()).unwrap()
}

#[tokio::test]
async fn a_listener_hears_only_of_resources_it_may_see() {
    let server = server();
    let tag = json!({"io.modelcontextprotocol/subscriptionId": "sub"});
    assert_eq!(
        first_update_heard(&server, "guest").await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "demo://readme", "_meta": tag}})
    );
    assert_eq!(
        first_update_heard(&server, "root").await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "secret:///plans", "_meta": tag}})
    );
}

/// An initialize-era session over stdio (no principal: the policy decides
/// for the anonymous caller) subscribed to the whole `secret:` scheme and
/// `demo://readme` hears only of the resource it may see.
#[tokio::test]
async fn an_initialize_era_session_hears_only_of_resources_it_may_see() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let server = server();
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (server_in, server_out) = tokio::io::split(server_end);
    let serving = server.clone();
    let _serving = tokio::spawn(async move {
        serving
            .serve_lines(server_in, server_out, Default::default())
            .await
    });
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut lines = BufReader::new(client_in).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(5), lines.next_line())
            .await
            .expect("a line within 5 s")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    };
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "reach", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "secret:///"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe",
            "params": {"uri": "demo://readme"}}),
    ] {
        client_out
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    assert_eq!(next().await["id"], 1);
    assert_eq!(
        next().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    assert_eq!(
        next().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    server.events().resource_updated("secret:///plans");
    server.events().resource_updated("demo://readme");
    assert_eq!(
        next().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "demo://readme"}})
    );
}
