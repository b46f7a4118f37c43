//! URI templates for resource templates: the RFC 6570 subset MCP servers use.
//!
//! A resource template such as `file:///{+path}` or
//! `https://{host}/repos{/owner}{?page,per_page}` is parsed once, when the
//! server is built (and already when the code compiles, for templates given to
//! `#[snodo::resource(uri_template = ...)]`), and then matched against the URIs
//! `resources/read` receives (`snodo` re-exports this module as
//! `snodo::resource::template`). The subset is deliberately small, so that a
//! URI splits one way only and matching is linear in the length of the URI:
//!
//! | Shape         | Matches                                                        |
//! |---------------|----------------------------------------------------------------|
//! | `{var}`       | one whole, non-empty path segment (or the whole authority)     |
//! | `{+path}`     | one or more non-empty segments; the value may contain `/`      |
//! | `{/var}`      | zero or one non-empty segment, introduced by `/`               |
//! | `{/var*}`     | zero or more non-empty segments, each introduced by `/`        |
//! | `{?q,lang}`   | named query parameters, in any order, each optional            |
//! | `{&x}`        | the same as `{?x}`                                             |
//!
//! The scheme is a literal matched case-insensitively. The authority is one
//! literal, one `{var}`, or empty when a `/` follows it (`file:///{+path}`).
//! A path holds at most one variable-length expression (`{+path}`, `{/var}`,
//! `{/var*}`); the literal and `{var}` segments around it are matched from
//! both ends.
//!
//! Values are percent-decoded once and must be valid UTF-8; `+` stays `+`.
//! A decoded value may contain `/`, `..` or NUL: applications that turn it
//! into a file path must sanitize it.

mod error;
mod lex;
mod matching;
mod parse;
#[cfg(test)]
mod tests;
mod uri;

pub use error::TemplateError;
pub use parse::UriTemplate;
pub(crate) use uri::is_valid_scheme;
