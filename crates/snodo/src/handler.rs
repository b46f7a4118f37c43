//! What a handler works with besides its input: the request's [`Context`],
//! the extractors its parameters are resolved by ([`FromCall`], [`State`]),
//! the input it may ask the client for mid-call ([`InputRequired`]), and the
//! boxed future object-safe traits return ([`BoxFuture`]).
//!
//! Every parameter of a `#[snodo::tool]`, `#[snodo::resource]` or
//! `#[snodo::prompt]` function is produced by [`FromCall`], from the request's
//! input (a tool's [`Arguments`](crate::Arguments), a resource's
//! [`ReadRequest`](crate::resource::ReadRequest), a prompt's
//! [`PromptArguments`](crate::prompt::PromptArguments)) and its [`Context`]. The
//! macros match no type names: any type implementing `FromCall` for that input
//! may be a parameter, in any order, including extractors of your own.
//!
//! | parameter | tool | resource | prompt |
//! |---|---|---|---|
//! | [`Context`] | yes | yes | yes |
//! | [`State<S>`] (registered with [`ServerBuilder::state`](crate::ServerBuilder::state)) | yes | yes | yes |
//! | [`Arguments`](crate::Arguments), [`Args<T>`](crate::Args) | yes | | |
//! | [`ReadRequest`](crate::resource::ReadRequest) | | yes | |
//! | [`PromptArguments`](crate::prompt::PromptArguments) | | | yes |
//!
//! A handler asks for input with
//! [`ToolResult::input_required`](crate::ToolResult::input_required) and an
//! [`InputRequired`]; the client fulfils the requests and retries the original
//! request with `inputResponses` (and the echoed `requestState`, sealed by the
//! server's [`StateSealer`](crate::server::StateSealer)).

pub use crate::context::{
    CancelSignal, ConnectionInfo, Context, ElicitAction, ElicitResponse, MAX_PROGRESS_MESSAGE,
    MAX_PROGRESS_UPDATES, Principal, ProgressError, Share, TransportInfo, TransportKind,
};
pub use crate::extract::{FromCall, InputSchema, Rejection, State, StateNeed};
pub use crate::future::BoxFuture;
pub use crate::mrtr::{InputRequired, check_form_schema};
