//! Anything implementing `IntoPromptResult` may be returned.
use snodo::prompt::{Prompt, PromptMessage, PromptResult};
use snodo::{Content, HandlerError};

#[snodo::prompt]
async fn text() -> String {
    "text".to_string()
}

#[snodo::prompt]
async fn static_text() -> &'static str {
    "text"
}

#[snodo::prompt]
async fn message() -> PromptMessage {
    PromptMessage::assistant(Content::text("hi"))
}

#[snodo::prompt]
async fn messages() -> Vec<PromptMessage> {
    vec![PromptMessage::user_text("a"), PromptMessage::user_text("b")]
}

#[snodo::prompt]
async fn result() -> PromptResult {
    PromptResult::new([PromptMessage::user_text("a")]).with_description("rendered")
}

#[snodo::prompt]
async fn io() -> std::io::Result<String> {
    std::fs::read_to_string("/nonexistent")
}

#[snodo::prompt]
async fn boxed() -> Result<PromptResult, HandlerError> {
    Err("no".into())
}

fn assert_prompt<T: Prompt>(_: T) {}

fn main() {
    assert_prompt(text);
    assert_prompt(static_text);
    assert_prompt(message);
    assert_prompt(messages);
    assert_prompt(result);
    assert_prompt(io);
    assert_prompt(boxed);
}
