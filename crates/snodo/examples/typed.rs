//! Typed arguments and output: `Args<T>` derives the input schema and
//! `Json<T>` the output schema (through `schemars`), and the structured
//! content is checked against it.
//!
//! Run: `cargo run -p snodo --example typed`

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::{Args, Json};

/// What `convert` takes.
#[derive(Deserialize, schemars::JsonSchema)]
struct Conversion {
    /// Degrees Celsius.
    celsius: f64,
}

/// What `convert` returns.
#[derive(Serialize, schemars::JsonSchema)]
struct Converted {
    fahrenheit: f64,
    kelvin: f64,
}

/// Converts a temperature
#[snodo::tool(annotations = { "readOnlyHint": true })]
async fn convert(Args(Conversion { celsius }): Args<Conversion>) -> Json<Converted> {
    Json(Converted {
        fahrenheit: celsius * 9.0 / 5.0 + 32.0,
        kelvin: celsius + 273.15,
    })
}

async fn run() -> (Value, Value, Value) {
    let server = Server::builder("typed", "0.1.0")
        .tool(convert)
        .build()
        .expect("derived schemas pass the definition rules");
    let list = server
        .dispatch_value(snodo_test::request("tools/list", json!({})))
        .await
        .expect("a response");
    let ok = server
        .dispatch_value(snodo_test::request(
            "tools/call",
            json!({"name": "convert", "arguments": {"celsius": 100}}),
        ))
        .await
        .expect("a response");
    // A value of the wrong type never reaches the function.
    let wrong = server
        .dispatch_value(snodo_test::request(
            "tools/call",
            json!({"name": "convert", "arguments": {"celsius": "hot"}}),
        ))
        .await
        .expect("a response");
    (list, ok, wrong)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (list, ok, wrong) = run().await;
    println!(
        "{}",
        serde_json::to_string_pretty(&list["result"]["tools"]).unwrap()
    );
    println!("{}", ok["result"]["structuredContent"]);
    println!("{}", wrong["result"]["content"][0]["text"]);
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn schemas_are_derived_and_output_is_structured() {
        let (list, ok, wrong) = super::run().await;
        let tool = &list["result"]["tools"][0];
        assert_eq!(
            tool["inputSchema"]["properties"]["celsius"]["type"],
            "number"
        );
        assert_eq!(
            tool["inputSchema"]["properties"]["celsius"]["description"],
            "Degrees Celsius."
        );
        assert_eq!(
            tool["outputSchema"]["required"],
            serde_json::json!(["fahrenheit", "kelvin"])
        );
        assert_eq!(ok["result"]["structuredContent"]["fahrenheit"], 212.0);
        assert_eq!(wrong["result"]["isError"], true);
        let text = wrong["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("celsius") && !text.contains("hot"), "{text}");
    }
}
