//! A client calling a server over stdio (a child process) and over Streamable
//! HTTP (a socket), with typed results.
//!
//! Run: `cargo run -p snodo --features client --example client -- TARGET...`, where a
//! target is a command line (`"cargo run -p snodo-cli -- demo --stdio"`) or an
//! `http(s)://` URL (`snodo demo --http 127.0.0.1:0` prints one). Without
//! targets it spawns the `stdio_server` example built beside it and serves
//! an HTTP server of its own on 127.0.0.1.

use serde_json::json;
use snodo::Client;
use snodo::client::ClientError;

/// Lists the tools and greets through the first one that takes a `name`.
async fn greet_through(client: &Client) -> Result<String, ClientError> {
    let tools = client.list_tools().await?;
    let Some(tool) = tools
        .iter()
        .find(|t| t.input_schema["properties"].get("name").is_some())
    else {
        return Ok(format!("{} tools, none takes a name", tools.len()));
    };
    let result = client.call_tool(&tool.name, json!({"name": "Ada"})).await?;
    Ok(result.text_content())
}

/// The `stdio_server` example's binary, built next to this one.
fn stdio_server() -> String {
    let here = std::env::current_exe().expect("the running binary");
    let dir = here.parent().expect("a folder");
    let path = dir.join("stdio_server");
    assert!(
        path.exists(),
        "{} is missing: build the examples first (`cargo build -p snodo --examples --features client`)",
        path.display()
    );
    path.display().to_string()
}

/// An HTTP server of our own on 127.0.0.1, for the HTTP leg.
async fn local_http() -> String {
    use snodo::prelude::*;
    #[snodo::tool(input_schema = {"type": "object", "properties": {"name": {"type": "string"}}})]
    async fn hello(args: Arguments) -> CallResult {
        Ok(format!("Hello over HTTP, {}!", args.str("name").unwrap_or("you")).into())
    }
    let server = Server::builder("http-example", "0.1.0")
        .tool(hello)
        .build()
        .unwrap();
    let listener = snodo::transport::http::HttpListener::bind(
        &server,
        "127.0.0.1:0".parse().unwrap(),
        Default::default(),
    )
    .await
    .expect("bind 127.0.0.1:0");
    let url = listener.url();
    tokio::spawn(listener.run(std::future::pending()));
    url
}

async fn run(targets: Vec<String>) -> Result<Vec<String>, ClientError> {
    let targets = if targets.is_empty() {
        vec![stdio_server(), local_http().await]
    } else {
        targets
    };
    let mut answers = Vec::new();
    for target in targets {
        // Explicit constructors: a URL is never run as a program.
        let client = if target.starts_with("http://") || target.starts_with("https://") {
            Client::http(&target).await?
        } else {
            Client::spawn(&target).await?
        };
        answers.push(format!(
            "{} over {:?} ({}): {}",
            client
                .server_info()
                .map(|i| i["name"].to_string())
                .unwrap_or_default(),
            client.transport_kind(),
            client.protocol_version(),
            greet_through(&client).await?
        ));
        client.close().await;
    }
    Ok(answers)
}

#[tokio::main]
async fn main() -> Result<(), ClientError> {
    for answer in run(std::env::args().skip(1).collect()).await? {
        println!("{answer}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn greets_over_stdio_and_http() {
        let answers = super::run(Vec::new()).await.unwrap();
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert!(
            answers[0].contains("Stdio") && answers[0].ends_with("Hello, Ada!"),
            "{answers:?}"
        );
        assert!(
            answers[1].contains("Http") && answers[1].ends_with("Hello over HTTP, Ada!"),
            "{answers:?}"
        );
    }
}
