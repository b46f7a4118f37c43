//! Tool arguments: untyped access, and typed access through serde.

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Context;
use crate::extract::{FromCall, InputSchema, Rejection};
use crate::schema::derive::DerivedSchema;

/// The `arguments` object of a `tools/call` request.
///
/// Required arguments are enforced before the handler runs, so for a key the
/// schema lists in `required`, [`Arguments::str`] and friends fail only when the
/// type is wrong. Their error converts into an `isError` result through `?`.
///
/// ```
/// use snodo::Arguments;
/// let args = Arguments::from(serde_json::json!({"name": "Ada", "n": 3}));
/// assert_eq!(args.str("name").unwrap(), "Ada");
/// assert_eq!(args.i64("n").unwrap(), 3);
/// assert!(args.str("n").is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arguments(Arc<Value>);

/// An argument that is missing or has the wrong type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    name: String,
    expected: &'static str,
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Argument `{}` must be {}", self.name, self.expected)
    }
}

impl std::error::Error for ArgumentError {}

impl Arguments {
    /// Wraps an arguments object.
    pub fn new(map: Map<String, Value>) -> Self {
        Self(Arc::new(Value::Object(map)))
    }

    /// Wraps a shared arguments object (a JSON object) without copying it.
    pub(crate) fn shared(object: Arc<Value>) -> Self {
        debug_assert!(object.is_object());
        Self(object)
    }

    /// The arguments as a JSON value (always an object).
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The raw value of an argument.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.as_map().get(name)
    }

    fn typed<'a, T>(
        &'a self,
        name: &str,
        expected: &'static str,
        read: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<T, ArgumentError> {
        self.0
            .get(name)
            .and_then(read)
            .ok_or_else(|| ArgumentError {
                name: name.into(),
                expected,
            })
    }

    /// A string argument.
    pub fn str(&self, name: &str) -> Result<&str, ArgumentError> {
        self.typed(name, "a string", Value::as_str)
    }

    /// An integer argument.
    pub fn i64(&self, name: &str) -> Result<i64, ArgumentError> {
        self.typed(name, "an integer", Value::as_i64)
    }

    /// A number argument.
    pub fn f64(&self, name: &str) -> Result<f64, ArgumentError> {
        self.typed(name, "a number", Value::as_f64)
    }

    /// A boolean argument.
    pub fn bool(&self, name: &str) -> Result<bool, ArgumentError> {
        self.typed(name, "a boolean", Value::as_bool)
    }

    /// Deserializes the whole object into `T`; the error names the field by
    /// its path (`items[1].name`), never by the value it held.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ArgumentError> {
        deserialize::<T>(self.as_value()).map_err(|(field, _)| ArgumentError {
            name: field,
            expected: "of the declared type",
        })
    }

    /// The arguments as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        self.0.as_object().unwrap_or(&EMPTY)
    }

    /// The arguments as a JSON object, by value (copied only if shared).
    pub fn into_map(self) -> Map<String, Value> {
        match Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone()) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

/// Deserializes `value` into `T`; on failure, the path of the offending
/// field and what is wrong with it. Only serde's "missing field" and
/// "unknown field" messages name a key (never a value), so only those are
/// read for a name; anything else at the root is called `arguments`.
fn deserialize<T: DeserializeOwned>(value: &Value) -> Result<T, (String, &'static str)> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let field = if path == "." {
            named_key(&inner).unwrap_or("arguments").to_string()
        } else {
            path
        };
        (field, classify(&inner))
    })
}

/// The key a "missing field `x`" or "unknown field `x`" message names.
fn named_key(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("missing field `")
        .or_else(|| message.strip_prefix("unknown field `"))?;
    rest.split('`').next()
}

impl From<Map<String, Value>> for Arguments {
    fn from(map: Map<String, Value>) -> Self {
        Self::new(map)
    }
}

impl From<Value> for Arguments {
    /// Non-object values give empty arguments.
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => Self::new(map),
            _ => Self::default(),
        }
    }
}

/// Typed arguments, deserialized from the `arguments` object before the handler
/// runs. A deserialization failure becomes an `isError` result naming the field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned> Args<T> {
    /// Deserializes `arguments` into `T`.
    pub fn from_arguments(args: &Arguments) -> Result<Self, ArgsError> {
        deserialize::<T>(args.as_value())
            .map(Args)
            .map_err(|(field, what)| ArgsError { field, what })
    }
}

impl Rejection {
    /// The tool call's outcome: an `isError` result, or the JSON-RPC error.
    pub fn into_call_result(self) -> super::CallResult {
        match self.split() {
            Ok(message) => Ok(super::ToolResult::error(message)),
            Err(error) => Err(error.into()),
        }
    }
}

impl FromCall<Arguments> for Arguments {
    fn from_call(input: &Arguments, _cx: &Context) -> Result<Self, Rejection> {
        Ok(input.clone())
    }
}

impl InputSchema for Arguments {}

impl<T: DeserializeOwned> FromCall<Arguments> for Args<T> {
    fn from_call(input: &Arguments, _cx: &Context) -> Result<Self, Rejection> {
        Self::from_arguments(input).map_err(|e| Rejection::arguments(e.to_string()))
    }
}

impl<T: DerivedSchema> InputSchema for Args<T> {
    fn input_schema() -> Option<Value> {
        Some(T::derived_schema())
    }
}

fn classify(message: &str) -> &'static str {
    if message.starts_with("missing field") {
        "is missing"
    } else if message.starts_with("unknown field") {
        "is not a known argument"
    } else if message.starts_with("invalid type") {
        "has the wrong type"
    } else if message.starts_with("invalid value") || message.starts_with("unknown variant") {
        "has an invalid value"
    } else {
        "is invalid"
    }
}

/// Typed arguments that failed to deserialize.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    field: String,
    what: &'static str,
}

impl ArgsError {
    /// The path of the offending field (`a`, `items[2].name`, ...).
    pub fn field(&self) -> &str {
        &self.field
    }
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid arguments: `{}` {}", self.field, self.what)
    }
}

impl std::error::Error for ArgsError {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Sum {
        a: i64,
        b: i64,
    }

    #[test]
    fn typed_arguments_name_the_field_not_the_value() {
        let args = Arguments::from(json!({"a": 1, "b": "secret-value"}));
        let err = Args::<Sum>::from_arguments(&args).unwrap_err();
        assert_eq!(err.field(), "b");
        assert_eq!(err.to_string(), "Invalid arguments: `b` has the wrong type");
        let err = Args::<Sum>::from_arguments(&Arguments::from(json!({"a": 1}))).unwrap_err();
        assert_eq!(err.to_string(), "Invalid arguments: `b` is missing");
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Job {
        mode: Mode,
        items: Vec<Item>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Item {
        name: String,
    }

    #[test]
    fn parse_names_paths_and_never_values() {
        let args = Arguments::from(json!({"mode": "fast", "items": [{"name": "a"}, {"name": 7}]}));
        let err = args.parse::<Job>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "Argument `items[1].name` must be of the declared type"
        );
        let args = Arguments::from(json!({"mode": "top-secret-value", "items": []}));
        let err = args.parse::<Job>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "Argument `mode` must be of the declared type"
        );
        let err = Args::<Job>::from_arguments(&args).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid arguments: `mode` has an invalid value"
        );
        // At the root, an enum's unknown variant is a value: it is not repeated.
        let root = Arguments::from(json!({"top-secret-value": null}));
        let err = root.parse::<Mode>().unwrap_err();
        assert!(!err.to_string().contains("top-secret"), "{err}");
        let err = Arguments::from(json!({"items": []}))
            .parse::<Job>()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Argument `mode` must be of the declared type"
        );
    }
}
