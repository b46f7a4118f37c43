//! Why a server could not be built.

use std::fmt;

pub use snodo_rules::RuleError;

/// Why a server could not be built. Every variant names the component and
/// the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A tool broke a definition rule (name, schema shape, `x-mcp-header`).
    Tool {
        /// The tool's name.
        tool: String,
        /// The broken rule: what it requires and, inside a schema or an
        /// attribute, the JSON pointer of the offending place.
        rule: RuleError,
    },
    /// Two tools share a name.
    DuplicateTool(String),
    /// The validator could not compile one of a tool's schemas.
    Schema {
        /// The tool's name.
        tool: String,
        /// `"input"` or `"output"`.
        which: &'static str,
        /// The validator's reason.
        message: String,
    },
    /// A resource, prompt or extension broke a rule.
    Component {
        /// `"resource"`, `"prompt"` or `"extension"`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The broken rule: what it requires and, inside a schema or an
        /// attribute, the JSON pointer of the offending place.
        rule: RuleError,
    },
    /// A handler takes [`State<S>`](crate::State) of a type the server was
    /// not given with [`ServerBuilder::state`](crate::ServerBuilder::state).
    MissingState {
        /// `"tool"`, `"resource"` or `"prompt"`.
        kind: &'static str,
        /// Its name.
        name: String,
        /// The state's type.
        type_name: &'static str,
    },
    /// A server setting is out of range.
    Config(String),
    /// The operating system's random source failed, so the node could get
    /// no random id for the tasks it runs (see
    /// [`TaskOptions::node_id`](crate::task::TaskOptions::node_id)).
    Random(crate::RandomUnavailable),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Tool { tool, rule } => write!(f, "tool `{tool}`: {rule}"),
            BuildError::DuplicateTool(name) => write!(f, "tool `{name}` is registered twice"),
            BuildError::Schema {
                tool,
                which,
                message,
            } => write!(
                f,
                "tool `{tool}`: {which} schema refused by the validator: {message}"
            ),
            BuildError::Component { kind, name, rule } => write!(f, "{kind} `{name}`: {rule}"),
            BuildError::MissingState {
                kind,
                name,
                type_name,
            } => write!(
                f,
                "{kind} `{name}` takes `State<{type_name}>`, but no state of that type was \
                 given: call `ServerBuilder::state` with one"
            ),
            BuildError::Config(message) => write!(f, "server configuration: {message}"),
            BuildError::Random(e) => write!(f, "tasks: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}
