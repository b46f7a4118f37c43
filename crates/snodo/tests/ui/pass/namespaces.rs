//! `snodo::tool`, `snodo::resource` and `snodo::prompt` each name a module and
//! an attribute macro: importing one name brings both, and they don't clash.
use snodo::{prompt, resource, tool};

#[resource(uri = "docs://readme")]
async fn readme(req: resource::ReadRequest) -> resource::ResourceContents {
    resource::ResourceContents::text(req.uri, "# Hello")
}

#[prompt(arguments = [{ "name": "topic", "required": true }])]
async fn brief(args: prompt::PromptArguments) -> prompt::PromptMessage {
    prompt::PromptMessage::user_text(args.get("topic").unwrap_or_default())
}

#[tool]
async fn ping(_args: snodo::Arguments) -> &'static str {
    "pong"
}

fn main() {
    // The URI template parser lives in `snodo-rules`; every path to it still works.
    let parsed: resource::template::UriTemplate = resource::UriTemplate::parse("docs://{page}").unwrap();
    let refused: resource::TemplateError = resource::template::UriTemplate::parse("docs://{#x}").unwrap_err();
    assert!(refused.to_string().contains("fragment expansion"));
    assert_eq!(parsed.variables().collect::<Vec<_>>(), ["page"]);
    let _ = tool::definition(&ping);
    let server = snodo::Server::builder("namespaces", "0.1.0")
        .tool(ping)
        .resource(readme)
        .prompt(brief)
        .build();
    assert!(server.is_ok());
}
