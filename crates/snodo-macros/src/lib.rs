//! The `#[snodo::tool]`, `#[snodo::resource]` and `#[snodo::prompt]`
//! attribute macros.
//!
//! Use them through the `snodo` crate (`snodo::tool`, `snodo::resource`,
//! `snodo::prompt`, feature `macros`, on by default); this crate holds only the
//! macros. Each turns an `async fn` into a unit struct of the same name
//! implementing `snodo::Tool`, `snodo::resource::Resource` or
//! `snodo::prompt::Prompt`, and checks the component's definition (name,
//! schemas, URI or URI template, prompt arguments, annotations) **when the code
//! compiles**, with the same rules a server applies to hand-written components
//! at `build()` (they live in the `snodo-rules` crate). A broken rule is a
//! compile error pointing at the offending key or value.
//!
//! ```ignore
//! use snodo::prelude::*;
//!
//! /// Create a greeting.
//! #[snodo::tool(
//!     annotations = { "readOnlyHint": true },
//!     input_schema = {
//!         "type": "object",
//!         "properties": { "name": { "type": "string", "x-mcp-header": "Name" } },
//!         "required": ["name"]
//!     }
//! )]
//! pub async fn greet(args: Arguments, _cx: Context) -> CallResult {
//!     Ok(format!("Hello, {}!", args.str("name")?).into())
//! }
//!
//! let server = Server::builder("greeter", "0.1.0").tool(greet).build()?;
//! ```
//!
//! See [`macro@tool`], [`macro@resource`] and [`macro@prompt`] for the full
//! grammars.

mod common;
mod json;
mod prompt;
mod resource;
mod tool;

use proc_macro::TokenStream;

/// Declares an MCP tool from an `async fn`.
///
/// # Attribute keys
///
/// Keys are written `key = value`, separated by commas (a trailing comma is
/// fine), each at most once; an unknown or repeated key is a compile error on
/// that key.
///
/// | key | value | default |
/// | --- | --- | --- |
/// | `name` | string literal, 1–128 of `A-Z a-z 0-9 _ - .` | the function's name |
/// | `title` | string literal | none |
/// | `description` | string literal | the function's doc comment, if any |
/// | `input_schema` | JSON object whose root has `"type": "object"` | with `Args<T>`: `schemars`' schema of `T` (snodo feature `schemars`); else `{"type": "object"}` |
/// | `output_schema` | JSON object or boolean | none |
/// | `annotations` | JSON object (`readOnlyHint`, ...) | none |
/// | `icons` | JSON array of icon objects | none |
/// | `meta` | JSON object (the tool's `_meta`) | none |
/// | `task` | `"never"`, `"optional"` (a task when the request declares the Tasks extension) or `"required"` | `"never"` |
/// | `task_retries` | integer literal: runs again when the task's node stops | `0` |
/// | `ui` | string literal: the `ui://` URI of the MCP App the tool renders in (`_meta.ui.resourceUri`; see `snodo::apps`) | none |
/// | `ui_visibility` | array of `"model"` and `"app"` (`_meta.ui.visibility`), with `ui` | both |
///
/// JSON values are written as Rust tokens: string literals, numbers (`-1`,
/// `2.5`, `1e-3`), `true`, `false`, `null`, `[ ... ]` and
/// `{ "key": value, ... }` with string-literal keys. One trailing comma is
/// accepted in arrays and objects (as `serde_json::json!` accepts it); bare
/// identifiers, Rust expressions, Rust-only number forms (`1_000`, `0x10`,
/// `1u8`) and duplicated object keys are compile errors on the offending token.
/// The documents are published verbatim: every keyword is kept, including
/// `$schema`, `$defs` and `x-mcp-header`, in the order written.
///
/// # Checks
///
/// - the tool name;
/// - `input_schema`: a JSON object with `"type": "object"` at its root, and valid
///   `x-mcp-header` annotations (a non-empty RFC 9110 token, on a `string`,
///   `integer` or `boolean` property reached from the root through `properties`
///   only, unique ignoring case);
/// - `output_schema`: an object or a boolean;
/// - `annotations` and `meta`: objects; `icons`: an array;
/// - `task`: one of its three values; `task_retries`: fits a `u32`;
/// - `ui`: a `ui://` URI, with `meta` not setting `ui` too; `ui_visibility`:
///   with `ui`, not empty, `"model"` and `"app"` only;
/// - `name`, `title`, `description`: string literals.
///
/// # The function
///
/// `async fn NAME(<params>) -> R`, where `R` implements `snodo::IntoCallResult`
/// (`CallResult`, `ToolResult`, `String`, `&'static str`, `Json<T>`,
/// `Result<T, E>`, ...). The parameters are, in any order and each at most
/// once: `snodo::Arguments`, `snodo::Context` and `snodo::Args<T>` (recognized by
/// the last segment of their path; the pattern may be anything, including a
/// destructuring `Args(Sum { a, b }): Args<Sum>`). With `Args<T>` the arguments
/// are deserialized before the function runs, and a failure becomes an
/// `isError` result naming the field. Generic, non-`async`, `const`, `unsafe`
/// and `extern` functions, `self` parameters and other parameter types are
/// compile errors.
///
/// # What it emits
///
/// - `#[derive(Debug, Clone, Copy, Default)] VIS struct NAME;`, with the
///   function's doc comments (so a server registers it with `.tool(NAME)`);
/// - the function itself, renamed `__snodo_tool_NAME_impl` and private, with its
///   other attributes;
/// - `impl snodo::Tool for NAME`, whose `call` deserializes `Args<T>` if asked,
///   awaits the function and converts its value with `IntoCallResult`. JSON
///   documents are embedded as string literals parsed when the method is called.
///
/// The function's name now names the struct: call the tool through
/// `snodo::Tool::call`, or move the logic to a function of your own.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Declares an MCP resource, or a family of resources under a URI template,
/// from an `async fn`.
///
/// ```ignore
/// use snodo::prelude::*;
///
/// /// One page of the documentation.
/// #[snodo::resource(uri_template = "docs://pages/{page}", mime_type = "text/markdown",
///                   complete = page_names)]
/// async fn page(req: ReadRequest) -> Result<String, HandlerError> {
///     // `page` names the struct now: a `let page` would be refused.
///     let name = req.var("page").unwrap_or_default();
///     Ok(format!("# {name}"))
/// }
///
/// async fn page_names(_variable: &str, value: &str) -> Vec<String> {
///     ["intro", "install"].iter().filter(|p| p.starts_with(value)).map(|p| p.to_string()).collect()
/// }
/// ```
///
/// # Attribute keys
///
/// Keys are written `key = value` as for [`macro@tool`]; exactly one of `uri`
/// and `uri_template` is required.
///
/// | key | value | default |
/// | --- | --- | --- |
/// | `uri` | string literal: an absolute URI (`scheme:...`) | — |
/// | `uri_template` | string literal: an RFC 6570 template in the subset `snodo::resource::template` documents | — |
/// | `name` | string literal, not empty | the function's name |
/// | `title` | string literal | none |
/// | `description` | string literal | the function's doc comment, if any |
/// | `mime_type` | string literal | none |
/// | `annotations` | JSON object (`audience`, `priority`, `lastModified`) | none |
/// | `size` | integer literal, in bytes (with `uri` only) | none |
/// | `icons` | JSON array of icon objects | none |
/// | `meta` | JSON object (the resource's `_meta`) | none |
/// | `complete` | path of an `async fn(variable: &str, value: &str) -> Vec<String>` (with `uri_template` only) | no completion |
///
/// # Checks
///
/// - exactly one of `uri` and `uri_template`;
/// - `uri`: an RFC 3986 scheme and `:` first, and no `{` (a template written
///   as a `uri`);
/// - `uri_template`: parsed by the same parser a server uses, so a shape
///   outside the supported subset (`{#frag}`, `{var:3}`, `{.ext}`, ...) is an
///   error on the literal naming the shape; its variables may not be named
///   `uri` or `_meta`;
/// - `size` only with `uri` (a template names many resources), and `complete`
///   only with `uri_template` (a fixed URI has no variables);
/// - `annotations` and `meta`: objects; `icons`: an array.
///
/// # The function
///
/// `async fn NAME(<params>) -> R`. The parameters are, in any order and each at
/// most once, `snodo::resource::ReadRequest` (the URI read and the template's
/// variables) and `snodo::Context`. `R` implements
/// `snodo::resource::IntoReadResult`: `ReadResult`, `ResourceContents`,
/// `Vec<ResourceContents>`, `String` or `&'static str` (one text item at the
/// URI read, with the declared `mime_type`), or `Result<T, E>` of one of them
/// with `E: Into<HandlerError>`. The other rules on the function are those of
/// [`macro@tool`].
///
/// # What it emits
///
/// The unit struct `NAME` (register it with `.resource(NAME)`), the function
/// renamed `__snodo_resource_NAME_impl`, and `impl snodo::resource::Resource
/// for NAME`, whose `read` awaits the function and converts its value with
/// `IntoReadResult`, passing the URI read and `Resource::mime_type`. With
/// `complete`, `completes()` is `true` and `complete(variable, value, _)`
/// awaits `path(variable, value)` (the completion context is not passed). As
/// with [`macro@tool`], the function's name now names the struct, also inside
/// the function's body.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).into()
}

/// Declares an MCP prompt from an `async fn`.
///
/// ```ignore
/// use snodo::prelude::*;
///
/// /// Asks for a short brief on a topic.
/// #[snodo::prompt(arguments = [
///     { "name": "topic", "description": "What the brief is about", "required": true },
///     { "name": "tone" },
/// ])]
/// async fn brief(args: PromptArguments) -> String {
///     let tone = args.get("tone").unwrap_or("neutral");
///     format!("Write a {tone} brief about {}.", args.get("topic").unwrap_or_default())
/// }
/// ```
///
/// # Attribute keys
///
/// | key | value | default |
/// | --- | --- | --- |
/// | `name` | string literal, not empty | the function's name |
/// | `title` | string literal | none |
/// | `description` | string literal | the function's doc comment, if any |
/// | `arguments` | JSON array of `{"name": ..., "title": ..., "description": ..., "required": ...}` | no arguments |
/// | `icons` | JSON array of icon objects | none |
/// | `meta` | JSON object (the prompt's `_meta`) | none |
/// | `complete` | path of an `async fn(argument: &str, value: &str) -> Vec<String>` | no completion |
///
/// # Checks
///
/// - `arguments`: an array of objects, each with a non-empty string `name`
///   unique in the array, an optional string `title` and `description`, an
///   optional boolean `required` (default `false`), and no other member; a
///   violation is reported on the offending element or member;
/// - `complete` needs declared `arguments`;
/// - `meta`: an object; `icons`: an array.
///
/// # The function
///
/// `async fn NAME(<params>) -> R`. The parameters are, in any order and each at
/// most once, `snodo::prompt::PromptArguments` and `snodo::Context`. `R`
/// implements `snodo::prompt::IntoPromptResult`: `PromptResult`,
/// `Vec<PromptMessage>`, `PromptMessage`, `String` or `&'static str` (one user
/// text message), or `Result<T, E>` of one of them with `E: Into<HandlerError>`.
/// The other rules on the function are those of [`macro@tool`].
///
/// # What it emits
///
/// The unit struct `NAME` (register it with `.prompt(NAME)`), the function
/// renamed `__snodo_prompt_NAME_impl`, and `impl snodo::prompt::Prompt for
/// NAME`, whose `arguments()` lists the declared arguments (the server then
/// refuses a `prompts/get` missing a required one) and whose `get` awaits the
/// function and converts its value with `IntoPromptResult`. With `complete`,
/// `completes()` is `true` and `complete(argument, value, _)` awaits
/// `path(argument, value)`. As with [`macro@tool`], the function's name now
/// names the struct, also inside the function's body.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).into()
}
