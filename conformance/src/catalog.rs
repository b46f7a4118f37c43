//! Resources and prompts of the fixture contract.

use serde_json::{Map, Value};
use snodo::Error;
use snodo::prelude::*;
use snodo::prompt::{Prompt, PromptArgument, PromptArguments, PromptMessage, PromptResult};
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};

use crate::fixtures::PNG;

/// A fixed resource with constant contents.
struct Fixed {
    uri: &'static str,
    name: &'static str,
    mime: &'static str,
    text: Option<&'static str>,
    blob: Option<&'static str>,
}

impl Resource for Fixed {
    fn uri(&self) -> Option<&str> {
        Some(self.uri)
    }
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> Option<&str> {
        Some("A fixture resource")
    }
    fn mime_type(&self) -> Option<&str> {
        Some(self.mime)
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let contents = match (self.text, self.blob) {
            (Some(text), _) => ResourceContents::text(req.uri, text),
            (_, Some(blob)) => ResourceContents::blob(req.uri, blob),
            _ => return Err(Error::internal("fixture without contents").into()),
        };
        Ok(contents.with_mime_type(self.mime).into())
    }
}

/// `test://template/{id}/data`.
struct Template;

impl Resource for Template {
    fn uri_template(&self) -> Option<&str> {
        Some("test://template/{id}/data")
    }
    fn name(&self) -> &str {
        "template"
    }
    fn description(&self) -> Option<&str> {
        Some("A templated fixture resource")
    }
    fn mime_type(&self) -> Option<&str> {
        Some("application/json")
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let id = req.var("id").unwrap_or_default().to_string();
        let body = serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        Ok(ResourceContents::text(req.uri, body.to_string())
            .with_mime_type("application/json")
            .into())
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(
        &self,
        _variable: &str,
        value: &str,
        _context: &Map<String, Value>,
    ) -> Vec<String> {
        ["123", "456", "789"]
            .iter()
            .filter(|v| v.starts_with(value))
            .map(|v| v.to_string())
            .collect()
    }
}

/// A prompt defined by a render function.
struct Fixture {
    name: &'static str,
    description: &'static str,
    arguments: Vec<PromptArgument>,
    render: fn(&PromptArguments) -> Vec<PromptMessage>,
}

impl Prompt for Fixture {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> Option<&str> {
        Some(self.description)
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        self.arguments.clone()
    }
    async fn get(&self, args: PromptArguments, _cx: Context) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new((self.render)(&args)))
    }
    fn completes(&self) -> bool {
        !self.arguments.is_empty()
    }
    async fn complete(
        &self,
        _argument: &str,
        value: &str,
        _context: &Map<String, Value>,
    ) -> Vec<String> {
        ["test", "testValue1", "testValue2"]
            .iter()
            .filter(|v| v.starts_with(value))
            .map(|v| v.to_string())
            .collect()
    }
}

/// Registers the resources and prompts.
pub(crate) fn register(builder: snodo::ServerBuilder) -> snodo::ServerBuilder {
    builder
        .resource(Fixed {
            uri: "test://static-text",
            name: "static-text",
            mime: "text/plain",
            text: Some("This is the content of the static text resource."),
            blob: None,
        })
        .resource(Fixed {
            uri: "test://static-binary",
            name: "static-binary",
            mime: "image/png",
            text: None,
            blob: Some(PNG),
        })
        .resource(Fixed {
            uri: "test://watched-resource",
            name: "watched-resource",
            mime: "text/plain",
            text: Some("Watched resource content"),
            blob: None,
        })
        .resource(Template)
        .prompt(Fixture {
            name: "test_simple_prompt",
            description: "A prompt without arguments",
            arguments: Vec::new(),
            render: |_| {
                vec![PromptMessage::user_text(
                    "This is a simple prompt for testing.",
                )]
            },
        })
        .prompt(Fixture {
            name: "test_prompt_with_arguments",
            description: "A prompt with two required arguments",
            arguments: vec![
                PromptArgument::required("arg1").with_description("First argument"),
                PromptArgument::required("arg2").with_description("Second argument"),
            ],
            render: |a| {
                vec![PromptMessage::user_text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    a.get("arg1").unwrap_or_default(),
                    a.get("arg2").unwrap_or_default()
                ))]
            },
        })
        .prompt(Fixture {
            name: "test_prompt_with_embedded_resource",
            description: "A prompt that embeds a resource",
            arguments: vec![
                PromptArgument::required("resourceUri").with_description("The resource to embed"),
            ],
            render: |a| {
                vec![
                    PromptMessage::user(Content::embedded_text(
                        a.get("resourceUri").unwrap_or("test://example-resource"),
                        "text/plain",
                        "Embedded resource content for testing.",
                    )),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]
            },
        })
        .prompt(Fixture {
            name: "test_prompt_with_image",
            description: "A prompt with an image",
            arguments: Vec::new(),
            render: |_| {
                vec![
                    PromptMessage::user(Content::image(PNG, "image/png")),
                    PromptMessage::user_text("Please analyze the image above."),
                ]
            },
        })
}
