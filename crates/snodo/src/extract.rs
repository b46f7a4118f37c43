//! Extractors (public at `snodo::handler`, where they are documented).

use std::any::{TypeId, type_name};
use std::fmt;

use serde_json::Value;

use crate::{Context, Error};

/// A handler parameter produced from a request's `Input` and its [`Context`].
///
/// `Input` is [`Arguments`](crate::Arguments) for tools,
/// [`ReadRequest`](crate::resource::ReadRequest) for resources and
/// [`PromptArguments`](crate::prompt::PromptArguments) for prompts. Implement it
/// for `Input` generically to make an extractor every kind of handler accepts.
///
/// ```
/// use snodo::handler::{FromCall, Rejection};
/// use snodo::Context;
///
/// /// The caller's subject, or `"anonymous"`.
/// struct Caller(String);
///
/// impl<I> FromCall<I> for Caller {
///     fn from_call(_input: &I, cx: &Context) -> Result<Self, Rejection> {
///         let subject = cx.principal().map(|p| p.subject.clone());
///         Ok(Caller(subject.unwrap_or_else(|| "anonymous".into())))
///     }
/// }
/// # let _ = Caller::from_call(&(), &Context::detached());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a parameter of this handler",
    label = "not an extractor for this kind of handler",
    note = "a tool takes `Arguments`, `Args<T>`, `Context` and `State<S>`; a resource `ReadRequest`, \
            `Context` and `State<S>`; a prompt `PromptArguments`, `Context` and `State<S>`",
    note = "or implement `snodo::handler::FromCall<{I}>` for `{Self}`"
)]
pub trait FromCall<I>: Sized {
    /// Produces the parameter, or rejects the call.
    fn from_call(input: &I, cx: &Context) -> Result<Self, Rejection>;

    /// The registered state this parameter reads (none by default):
    /// [`ServerBuilder::build`](crate::ServerBuilder::build) refuses a server
    /// whose handlers need state it was not given, so a missing
    /// [`ServerBuilder::state`](crate::ServerBuilder::state) fails once, at
    /// start, not on every call.
    fn state_needs() -> Vec<StateNeed> {
        Vec::new()
    }
}

/// A type of state a handler needs, registered with
/// [`ServerBuilder::state`](crate::ServerBuilder::state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateNeed {
    id: TypeId,
    name: &'static str,
}

impl StateNeed {
    /// The need of a value of type `S`.
    pub fn of<S: 'static>() -> Self {
        Self {
            id: TypeId::of::<S>(),
            name: type_name::<S>(),
        }
    }

    /// The type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        self.name
    }

    pub(crate) fn type_id(&self) -> TypeId {
        self.id
    }
}

/// Whether a tool parameter describes the tool's input schema.
///
/// Used when `#[snodo::tool]` has no `input_schema`: the first parameter that
/// returns `Some` gives the schema ([`Args<T>`](crate::Args) with a
/// `schemars::JsonSchema` type), else it is `{"type": "object"}`. An extractor of
/// your own implements it with the default body.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say whether it describes the tool's input schema",
    label = "this parameter needs `snodo::handler::InputSchema` when the tool has no `input_schema`",
    note = "write `input_schema = {{ ... }}` in the attribute, or `impl snodo::handler::InputSchema for {Self} {{}}`"
)]
pub trait InputSchema {
    /// The input schema this parameter implies, if any.
    fn input_schema() -> Option<Value> {
        None
    }
}

/// Why an extractor refused a call.
///
/// For a tool, [`Rejection::arguments`] becomes a result with `isError: true`
/// (the model can correct its arguments) and [`Rejection::error`] a JSON-RPC
/// error. For a resource or a prompt both become a JSON-RPC error.
#[derive(Debug)]
pub struct Rejection {
    kind: RejectionKind,
}

#[derive(Debug)]
enum RejectionKind {
    Arguments(String),
    Error(Error),
}

impl Rejection {
    /// The arguments are unusable: `message` says which one and why (it must
    /// not repeat the argument's value).
    pub fn arguments(message: impl Into<String>) -> Self {
        Self {
            kind: RejectionKind::Arguments(message.into()),
        }
    }

    /// The request fails with a JSON-RPC error.
    pub fn error(error: Error) -> Self {
        Self {
            kind: RejectionKind::Error(error),
        }
    }

    /// The message of an arguments rejection.
    pub fn arguments_message(&self) -> Option<&str> {
        match &self.kind {
            RejectionKind::Arguments(message) => Some(message),
            RejectionKind::Error(_) => None,
        }
    }

    /// The JSON-RPC error this rejection is, for a resource or a prompt (an
    /// arguments rejection is `-32602`).
    pub fn into_error(self) -> Error {
        match self.kind {
            RejectionKind::Arguments(message) => Error::invalid_params(message),
            RejectionKind::Error(error) => error,
        }
    }

    /// The arguments message, or the JSON-RPC error.
    pub(crate) fn split(self) -> Result<String, Error> {
        match self.kind {
            RejectionKind::Arguments(message) => Ok(message),
            RejectionKind::Error(error) => Err(error),
        }
    }
}

impl From<Error> for Rejection {
    fn from(error: Error) -> Self {
        Self::error(error)
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RejectionKind::Arguments(message) => f.write_str(message),
            RejectionKind::Error(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl<I> FromCall<I> for Context {
    fn from_call(_input: &I, cx: &Context) -> Result<Self, Rejection> {
        Ok(cx.clone())
    }
}

impl InputSchema for Context {}

/// Shared state registered with [`ServerBuilder::state`](crate::ServerBuilder::state),
/// handed to a handler by type.
///
/// `S` is cloned for each call: wrap large or mutable state in an `Arc`. A
/// server whose handlers take a `State<S>` that was never registered is
/// refused by [`ServerBuilder::build`](crate::ServerBuilder::build) (and by
/// [`Server::add_tool`](crate::Server::add_tool) and its siblings), naming the
/// type and the component.
#[derive(Debug, Clone, Copy, Default)]
pub struct State<S>(pub S);

impl<I, S: Clone + Send + Sync + 'static> FromCall<I> for State<S> {
    fn from_call(_input: &I, cx: &Context) -> Result<Self, Rejection> {
        match cx.state::<S>() {
            Some(state) => Ok(State(state.clone())),
            None => Err(Rejection::error(Error::internal(format!(
                "no state of type `{}` was registered: call `ServerBuilder::state` with it",
                type_name::<S>()
            )))),
        }
    }

    fn state_needs() -> Vec<StateNeed> {
        vec![StateNeed::of::<S>()]
    }
}

impl<S> InputSchema for State<S> {}

impl<S> std::ops::Deref for State<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0
    }
}
