//! A prompt whose `name` argument completes from a list, and its rendering.
//!
//! Run with `cargo run -p snodo --example prompt_completion`.

use serde_json::{Map, Value, json};
use snodo::prelude::*;
use snodo::prompt::{Prompt, PromptArgument, PromptArguments, PromptMessage, PromptResult};
use snodo_test::request;

const NAMES: &[&str] = &["Ada", "Alan", "Grace", "Margaret"];

struct Introduce;

impl Prompt for Introduce {
    fn name(&self) -> &str {
        "introduce"
    }
    fn description(&self) -> Option<&str> {
        Some("Introduce someone")
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("name").with_description("Who to introduce")]
    }
    async fn get(&self, args: PromptArguments, _cx: Context) -> Result<PromptResult, HandlerError> {
        let name = args.get("name").unwrap_or_default();
        Ok(PromptResult::new([PromptMessage::user_text(format!(
            "Please introduce {name}."
        ))]))
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(&self, _arg: &str, value: &str, _cx: &Map<String, Value>) -> Vec<String> {
        NAMES
            .iter()
            .filter(|n| n.starts_with(value))
            .map(|n| n.to_string())
            .collect()
    }
}

async fn run() -> (Value, Value) {
    let server = Server::builder("prompts", "1.0.0")
        .prompt(Introduce)
        .build()
        .expect("valid");
    let completion = server
        .dispatch_value(request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "introduce"}, "argument": {"name": "name", "value": "A"}}),
        ))
        .await
        .expect("answered");
    println!("{}", completion["result"]["completion"]);
    let rendered = server
        .dispatch_value(request(
            "prompts/get",
            json!({"name": "introduce", "arguments": {"name": "Ada"}}),
        ))
        .await
        .expect("answered");
    println!("{}", rendered["result"]["messages"]);
    (completion, rendered)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run().await;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[tokio::test]
    async fn completes_then_renders() {
        let (completion, rendered) = super::run().await;
        assert_eq!(
            completion["result"]["completion"],
            json!({"values": ["Ada", "Alan"], "total": 2, "hasMore": false})
        );
        assert_eq!(
            rendered["result"]["messages"][0]["content"]["text"],
            "Please introduce Ada."
        );
    }
}
