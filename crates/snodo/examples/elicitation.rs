//! A tool that asks for confirmation through a form elicitation (a multi
//! round-trip request), with its request state sealed so the client cannot
//! forge or replay it for other arguments.
//!
//! Run with `cargo run -p snodo --example elicitation`.

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::{handler::ElicitAction, server::StateSealer};
use snodo_test::request;

struct DeleteFile {
    sealer: StateSealer,
}

impl Tool for DeleteFile {
    fn name(&self) -> &str {
        "delete_file"
    }
    fn description(&self) -> Option<&str> {
        Some("Deletes a file after the user confirms")
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    }
    async fn call(&self, args: Arguments, cx: Context) -> CallResult {
        let path = args.str("path")?;
        if let (Some(_), Some(answer)) = (self.sealer.open(&cx)?, cx.elicitation("confirm")) {
            let yes = answer.action == ElicitAction::Accept && answer.bool("confirm") == Some(true);
            return Ok(if yes {
                format!("Deleted {path}").into()
            } else {
                format!("Kept {path}").into()
            });
        }
        let form = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
        Ok(ToolResult::input_required(
            InputRequired::new()
                .elicit_form("confirm", &format!("Delete {path}?"), form)
                .state(self.sealer.seal(&cx, &json!({"asked": true}))),
        ))
    }
}

async fn run() -> (Value, Value) {
    let sealer = StateSealer::new("k1", [7u8; 32]).expect("32-byte secret");
    let server = Server::builder("confirm", "1.0.0")
        .tool(DeleteFile { sealer })
        .build()
        .expect("valid");
    let caps = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let ask = server
        .dispatch_value(request(
            "tools/call",
            json!({"_meta": caps, "name": "delete_file", "arguments": {"path": "notes.txt"}}),
        ))
        .await
        .expect("answered");
    println!("{}", ask["result"]);
    let done = server
        .dispatch_value(request(
            "tools/call",
            json!({
                "_meta": caps,
                "name": "delete_file",
                "arguments": {"path": "notes.txt"},
                "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}},
                "requestState": ask["result"]["requestState"],
            }),
        ))
        .await
        .expect("answered");
    println!("{}", done["result"]);
    (ask, done)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run().await;
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn asks_then_completes() {
        let (ask, done) = super::run().await;
        assert_eq!(ask["result"]["resultType"], "input_required");
        assert_eq!(
            ask["result"]["inputRequests"]["confirm"]["method"],
            "elicitation/create"
        );
        assert_eq!(done["result"]["content"][0]["text"], "Deleted notes.txt");
    }
}
