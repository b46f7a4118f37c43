//! A resource template: `demo://greetings/{name}` serves a greeting for any
//! name, percent-decoded once.
//!
//! Run with `cargo run -p snodo --example resource_template`.

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo_test::request;

struct Greetings;

impl Resource for Greetings {
    fn uri_template(&self) -> Option<&str> {
        Some("demo://greetings/{name}")
    }
    fn name(&self) -> &str {
        "greetings"
    }
    fn mime_type(&self) -> Option<&str> {
        Some("text/plain")
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let name = req.var("name").unwrap_or("stranger").to_string();
        Ok(ResourceContents::text(req.uri, format!("Hello, {name}!"))
            .with_mime_type("text/plain")
            .into())
    }
}

async fn run() -> Value {
    let server = Server::builder("templates", "1.0.0")
        .resource(Greetings)
        .build()
        .expect("valid");
    let templates = server
        .dispatch_value(request("resources/templates/list", json!({})))
        .await
        .expect("answered");
    println!("{}", templates["result"]["resourceTemplates"]);
    let read = server
        .dispatch_value(request(
            "resources/read",
            json!({"uri": "demo://greetings/Ada%20Lovelace"}),
        ))
        .await
        .expect("answered");
    println!("{}", read["result"]["contents"]);
    read
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run().await;
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn reads_a_templated_uri() {
        let read = super::run().await;
        assert_eq!(
            read["result"]["contents"][0]["text"],
            "Hello, Ada Lovelace!"
        );
    }
}
