//! The `Prompt` behaviour: reusable message templates with declared
//! arguments.
//!
//! The [`#[snodo::prompt]`](macro@crate::prompt) attribute writes the impl
//! from an `async fn` returning anything [`IntoPromptResult`]; by hand:
//!
//! ```
//! use snodo::prompt::{Prompt, PromptArgument, PromptArguments, PromptMessage, PromptResult};
//! use snodo::{Context, HandlerError};
//!
//! struct Introduce;
//!
//! impl Prompt for Introduce {
//!     fn name(&self) -> &str { "introduce" }
//!     fn arguments(&self) -> Vec<PromptArgument> { vec![PromptArgument::required("name")] }
//!     async fn get(&self, args: PromptArguments, _cx: Context) -> Result<PromptResult, HandlerError> {
//!         let name = args.get("name").unwrap_or_default();
//!         Ok(PromptResult::new([PromptMessage::user_text(format!("Please introduce {name}."))]))
//!     }
//! }
//! ```

use std::future::Future;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::HandlerError;
use crate::mrtr::InputRequired;
use crate::{Content, Context};

mod definition;
mod received;

pub use definition::{PromptArgument, PromptDefinition};

/// A prompt.
pub trait Prompt: Send + Sync + 'static {
    /// A unique name.
    fn name(&self) -> &str;

    /// A human-readable title.
    fn title(&self) -> Option<&str> {
        None
    }

    /// What the prompt is for.
    fn description(&self) -> Option<&str> {
        None
    }

    /// The declared arguments.
    fn arguments(&self) -> Vec<PromptArgument> {
        Vec::new()
    }

    /// Icons, as a JSON array.
    fn icons(&self) -> Option<Value> {
        None
    }

    /// The OAuth scopes a principal needs to use this component over an
    /// authorized transport (none: the server's default scopes apply).
    fn required_scopes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The prompt's `_meta` object.
    fn meta(&self) -> Option<Value> {
        None
    }

    /// The registered state the handler needs (see
    /// [`FromCall::state_needs`](crate::extract::FromCall::state_needs)):
    /// checked when the component is registered. `#[snodo::prompt]` lists what
    /// its parameters need.
    fn state_needs(&self) -> Vec<crate::extract::StateNeed> {
        Vec::new()
    }

    /// Renders the prompt. Required arguments are present.
    fn get(
        &self,
        args: PromptArguments,
        cx: Context,
    ) -> impl Future<Output = Result<PromptResult, HandlerError>> + Send;

    /// Whether [`Prompt::complete`] offers values (advertises `completions`).
    fn completes(&self) -> bool {
        false
    }

    /// Suggests values for `argument` starting from `value`.
    fn complete(
        &self,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> impl Future<Output = Vec<String>> + Send {
        let _ = (argument, value, context);
        async { Vec::new() }
    }
}

/// The string arguments of a `prompts/get` request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptArguments(pub(crate) Map<String, Value>);

impl crate::extract::FromCall<PromptArguments> for PromptArguments {
    fn from_call(
        input: &PromptArguments,
        _cx: &crate::Context,
    ) -> Result<Self, crate::extract::Rejection> {
        Ok(input.clone())
    }
}

impl PromptArguments {
    /// An argument's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    /// Every argument.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
    }
}

/// The role of a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said: text, image, audio, an embedded resource or a resource link.
    pub content: Content,
}

impl PromptMessage {
    /// A user message with any content.
    pub fn user(content: Content) -> Self {
        Self {
            role: Role::User,
            content,
        }
    }

    /// An assistant message with any content.
    pub fn assistant(content: Content) -> Self {
        Self {
            role: Role::Assistant,
            content,
        }
    }

    /// A user text message.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(Content::text(text))
    }
}

/// What rendering a prompt produces.
///
/// A result a client received keeps every member as sent (for `serde` to
/// give back), so it equals only a result received alike: compare
/// [`messages`](Self::messages) to compare messages.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptResult {
    pub(crate) description: Option<String>,
    pub(crate) messages: Result<Vec<PromptMessage>, InputRequired>,
    /// The result as a client received it, every member in order.
    pub(crate) received: Option<Box<Map<String, Value>>>,
}

impl PromptResult {
    /// Messages.
    pub fn new(messages: impl IntoIterator<Item = PromptMessage>) -> Self {
        Self {
            description: None,
            messages: Ok(messages.into_iter().collect()),
            received: None,
        }
    }

    /// A multi round-trip answer.
    pub fn input_required(request: InputRequired) -> Self {
        Self {
            description: None,
            messages: Err(request),
            received: None,
        }
    }

    /// Sets the description of the rendered prompt.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self.received = None;
        self
    }

    /// The messages (none for an `input_required` answer).
    pub fn messages(&self) -> &[PromptMessage] {
        self.messages.as_deref().unwrap_or_default()
    }

    /// The description of the rendered prompt, when given.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The input asked for, for an `input_required` answer.
    pub fn as_input_required(&self) -> Option<&InputRequired> {
        self.messages.as_ref().err()
    }
}

/// Conversion of a prompt handler's return value into a rendered prompt.
///
/// `#[snodo::prompt]` functions may return any type implementing it:
///
/// | type | outcome |
/// | --- | --- |
/// | [`PromptResult`] | itself |
/// | `Vec<PromptMessage>` | those messages |
/// | [`PromptMessage`] | that one message |
/// | `String`, `&str` | one user text message |
/// | `Result<T, E>` with `T: IntoPromptResult`, `E: Into<HandlerError>` | `T`'s outcome, or the error |
///
/// ```
/// use snodo::prompt::{IntoPromptResult, PromptMessage, PromptResult};
///
/// let rendered = "Summarize the text.".into_prompt_result().unwrap();
/// assert_eq!(rendered, PromptResult::new([PromptMessage::user_text("Summarize the text.")]));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "`{Self}` does not implement `IntoPromptResult`",
    note = "return `PromptResult`, `Vec<PromptMessage>`, `PromptMessage`, `String`, `&'static str`, \
            or a `Result<T, E>` of one of them whose error converts into `HandlerError`"
)]
pub trait IntoPromptResult {
    /// Converts the value.
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new([self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new([PromptMessage::user_text(self)]))
    }
}

impl IntoPromptResult for &str {
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError> {
        Ok(PromptResult::new([PromptMessage::user_text(self)]))
    }
}

impl<T: IntoPromptResult, E: Into<HandlerError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<PromptResult, HandlerError> {
        match self {
            Ok(value) => value.into_prompt_result(),
            Err(error) => Err(error.into()),
        }
    }
}

/// The definition of any prompt.
pub fn definition<P: Prompt + ?Sized>(prompt: &P) -> PromptDefinition {
    PromptDefinition {
        title: prompt.title().map(str::to_owned),
        description: prompt.description().map(str::to_owned),
        arguments: prompt.arguments(),
        icons: prompt.icons(),
        meta: prompt.meta(),
        ..PromptDefinition::new(prompt.name())
    }
}
