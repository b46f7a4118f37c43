//! The `#[snodo::tool]` attribute macro.
//!
//! Use it through the `snodo` crate (`snodo::tool`, feature `macros`, on by
//! default); this crate holds only the macro. It turns an `async fn` into a unit
//! struct of the same name implementing `snodo::Tool`, and checks the tool's
//! definition (name, schemas, annotations) **when the code compiles**, with the
//! same rules a server applies to hand-written tools at `build()` (they live in
//! the `snodo-rules` crate). A broken rule is a compile error pointing at the
//! offending key or value.
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
//! See [`macro@tool`] for the full grammar.

mod json;
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
