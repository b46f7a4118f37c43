//! `#[snodo::prompt]`: every key, and the parameters in any order.
use snodo::prompt::{Prompt, PromptArgument, PromptArguments};
use snodo::Context;

/// Shadowed by `description`, kept on the struct.
#[snodo::prompt(
    name = "code-review",
    title = "Code review",
    description = "Reviews code",
    arguments = [
        { "name": "code", "title": "Code", "description": "The code to review", "required": true },
        { "name": "language", "required": false },
        { "name": "style", "description": "A style guide", },
    ],
    icons = [{ "src": "https://example.com/review.png" }],
    meta = { "com.example/tier": 2 },
    complete = self::languages,
)]
pub async fn r#type(args: PromptArguments, cx: Context) -> String {
    format!("{:?} {}", args.get("code"), cx.protocol_version())
}

async fn languages(_argument: &str, value: &str) -> Vec<String> {
    vec![format!("{value}rust")]
}

#[snodo::prompt]
pub(crate) async fn context_first(_cx: snodo::Context, _: snodo::prompt::PromptArguments) -> &'static str {
    "Hello"
}

/// Described by its doc comment.
#[snodo::prompt(arguments = [])]
async fn no_parameters() -> String {
    String::new()
}

#[snodo::prompt]
#[cfg(any())]
async fn compiled_out(args: PromptArguments) -> String {
    missing_function(args)
}

fn assert_prompt<T: Prompt>(_: T) {}

fn main() {
    assert_eq!(Prompt::name(&r#type), "code-review");
    assert_eq!(
        Prompt::arguments(&r#type),
        vec![
            PromptArgument::required("code").with_title("Code").with_description("The code to review"),
            PromptArgument::optional("language"),
            PromptArgument::optional("style").with_description("A style guide"),
        ]
    );
    assert!(Prompt::completes(&r#type));
    assert_prompt(context_first);
    assert_eq!(Prompt::description(&no_parameters), Some("Described by its doc comment."));
    assert!(Prompt::arguments(&no_parameters).is_empty());
}
