//! Full JSON Schema validation through the `jsonschema` crate.

use std::sync::Arc;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ReferencingError, Retrieve, Uri};
use serde_json::Value;

use super::{CompiledSchema, SchemaError, ValidationError, Validator, Violation};

/// Full JSON Schema validation through the `jsonschema` crate (feature
/// `jsonschema`).
///
/// [`Full`] compiles each schema once with `jsonschema`:
///
/// - **Dialect.** A schema without `$schema` is JSON Schema 2020-12. A
///   `$schema` naming draft-04, draft-06, draft-07, 2019-09 or 2020-12 (`http`
///   or `https`, with or without a trailing `#`) selects that dialect; any
///   other value is refused with `unsupported JSON Schema dialect: <uri>`.
/// - **References.** `$ref` resolves inside the document only: JSON pointers,
///   `$defs`/`definitions`, `$anchor`, and resources embedded with their own
///   `$id`. A reference to anything else (an `http(s)://` or `file://` URL, or
///   a relative reference that no embedded `$id` matches) is refused at
///   compile time; nothing is ever fetched, whatever features the
///   `jsonschema` crate was built with.
/// - **Schema check.** The schema itself is validated against its dialect's
///   meta-schema, so a keyword value of the wrong type is refused at compile
///   time.
/// - **`format`.** Left at the `jsonschema` crate's default: an annotation
///   only (not checked) in 2019-09 and 2020-12, the default dialect, and an
///   assertion in draft-04/06/07, as those drafts are commonly read.
/// - **`pattern`.** Uses the crate's default ECMA-262-like regex engine,
///   which gives up on catastrophic backtracking; that is reported as
///   [`ValidationError::Failed`], not as a violation.
///
/// A violation's location is the instance path as an RFC 6901 JSON pointer
/// and its rule is `<keyword>: <description>`, built from the error kind and
/// never from the `jsonschema` crate's own messages, which quote the value.
#[derive(Debug, Clone, Copy, Default)]
pub struct Full;

impl Validator for Full {
    fn compile(&self, schema: &Value) -> Result<Arc<dyn CompiledSchema>, SchemaError> {
        let draft = dialect(schema)?;
        let validator = jsonschema::options()
            .with_draft(draft)
            .with_retriever(NeverFetch)
            .build(schema)
            .map_err(|error| build_error(&error))?;
        Ok(Arc::new(Compiled { validator }))
    }
}

struct Compiled {
    validator: jsonschema::Validator,
}

impl CompiledSchema for Compiled {
    fn validate(&self, instance: &Value) -> Result<(), ValidationError> {
        match self.validator.validate(instance) {
            Ok(()) => Ok(()),
            Err(error) => Err(outcome(&error, instance)),
        }
    }
}

/// Turns the first `jsonschema` error into a violation, or a failure of the
/// validator itself.
fn outcome(error: &jsonschema::ValidationError<'_>, instance: &Value) -> ValidationError {
    let location = error.instance_path().as_str();
    let rule = match closed_object_extras(error, instance) {
        Some(names) => Ok(not_allowed("additionalProperties", &names)),
        None => rule(error.kind()),
    };
    match rule {
        Ok(rule) => ValidationError::Invalid(Violation::new(location, rule)),
        Err(reason) => ValidationError::Failed(reason),
    }
}

/// `jsonschema` compiles a bare `"additionalProperties": false` (no
/// `properties` or `patternProperties` beside it) into a check that reports a
/// `FalseSchema` error located at the *object*, carrying its first member.
/// Every property of that object is then an extra one: returns their names,
/// sorted.
fn closed_object_extras(
    error: &jsonschema::ValidationError<'_>,
    instance: &Value,
) -> Option<Vec<String>> {
    if !matches!(error.kind(), ValidationErrorKind::FalseSchema)
        || !error
            .schema_path()
            .as_str()
            .ends_with("/additionalProperties")
    {
        return None;
    }
    let object = instance.pointer(error.instance_path().as_str())?;
    let map = object.as_object()?;
    // A plain false subschema (say, a property named `additionalProperties`)
    // reports the value at its own location; this check reports a member.
    if object == error.instance().as_ref() {
        return None;
    }
    let mut names: Vec<String> = map.keys().cloned().collect();
    names.sort_unstable();
    Some(names)
}

/// Refuses every external resource, so that nothing is fetched even if the
/// `jsonschema` crate is built with its HTTP or file resolvers.
struct NeverFetch;

impl Retrieve for NeverFetch {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("`{uri}` is not inside the schema document").into())
    }
}

/// The dialect named by the root `$schema`, 2020-12 without one.
fn dialect(schema: &Value) -> Result<Draft, SchemaError> {
    let Some(declared) = schema.as_object().and_then(|map| map.get("$schema")) else {
        return Ok(Draft::Draft202012);
    };
    let Value::String(uri) = declared else {
        return Err(SchemaError::new(
            "`$schema` must be a string (a dialect URI)",
        ));
    };
    let bare = uri.strip_suffix('#').unwrap_or(uri);
    let path = bare
        .strip_prefix("https://")
        .or_else(|| bare.strip_prefix("http://"));
    match path {
        Some("json-schema.org/draft/2020-12/schema") => Ok(Draft::Draft202012),
        Some("json-schema.org/draft/2019-09/schema") => Ok(Draft::Draft201909),
        Some("json-schema.org/draft-07/schema") => Ok(Draft::Draft7),
        Some("json-schema.org/draft-06/schema") => Ok(Draft::Draft6),
        Some("json-schema.org/draft-04/schema") => Ok(Draft::Draft4),
        _ => Err(SchemaError::new(format!(
            "unsupported JSON Schema dialect: {uri}"
        ))),
    }
}

/// Why `jsonschema` refused a schema. Its messages quote the schema, not an
/// instance, so they may be kept.
fn build_error(error: &jsonschema::ValidationError<'_>) -> SchemaError {
    match error.kind() {
        ValidationErrorKind::Referencing(ReferencingError::Unretrievable { uri, .. }) => {
            SchemaError::new(format!(
                "external reference refused: `{uri}` is not inside the schema document \
                 (remote and file references are never fetched)"
            ))
        }
        ValidationErrorKind::Referencing(other) => {
            SchemaError::new(format!("unresolvable reference: {other}"))
        }
        _ => SchemaError::new(format!(
            "invalid schema at `#{}`: {error}",
            error.instance_path()
        )),
    }
}

/// `names` as `` `a`, `b` ``.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `property `a` is not allowed` or `properties `a`, `b` are not allowed`,
/// names sorted so the message does not depend on map order.
fn not_allowed(keyword: &str, names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort_unstable();
    match names.as_slice() {
        [one] => format!("{keyword}: property `{one}` is not allowed"),
        _ => format!("{keyword}: properties {} are not allowed", quoted(&names)),
    }
}

/// The value-free rule for an error kind, or why validation itself failed.
///
/// Only schema data (limits, type names, property names, format names) is
/// used; fields holding instance data (`UnevaluatedItems::unexpected`, a
/// custom keyword's message) are not.
fn rule(kind: &ValidationErrorKind) -> Result<String, String> {
    Ok(match kind {
        ValidationErrorKind::Type { kind } => {
            let declared = match kind {
                TypeKind::Single(single) => single.as_str().to_owned(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            format!("type: value is not one of the declared JSON types ({declared})")
        }
        ValidationErrorKind::Constant { .. } => "const: value is not the declared constant".into(),
        ValidationErrorKind::Enum { .. } => "enum: value is not one of the allowed values".into(),
        ValidationErrorKind::Required { property } => match property.as_str() {
            Some(name) => format!("required: missing property `{name}`"),
            None => format!("required: missing property {property}"),
        },
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            not_allowed("additionalProperties", unexpected)
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            not_allowed("unevaluatedProperties", unexpected)
        }
        // `unexpected` holds the items themselves: never quote them.
        ValidationErrorKind::UnevaluatedItems { .. } => {
            "unevaluatedItems: items not evaluated by the schema are not allowed".into()
        }
        ValidationErrorKind::AdditionalItems { limit } => {
            format!("additionalItems: must have at most {limit} items")
        }
        ValidationErrorKind::MinProperties { limit } => {
            format!("minProperties: must have at least {limit} properties")
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!("maxProperties: must have at most {limit} properties")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("minItems: must have at least {limit} items")
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("maxItems: must have at most {limit} items")
        }
        ValidationErrorKind::UniqueItems => "uniqueItems: items must be unique".into(),
        ValidationErrorKind::Contains => "contains: no item matches the declared schema".into(),
        ValidationErrorKind::MinLength { limit } => {
            format!("minLength: must be at least {limit} characters long")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("maxLength: must be at most {limit} characters long")
        }
        ValidationErrorKind::Pattern { .. } => {
            "pattern: does not match the declared pattern".into()
        }
        ValidationErrorKind::Format { format } => format!("format: is not a valid `{format}`"),
        ValidationErrorKind::Minimum { limit } => format!("minimum: must be at least {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("maximum: must be at most {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("exclusiveMinimum: must be greater than {limit}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("exclusiveMaximum: must be less than {limit}")
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("multipleOf: must be a multiple of {multiple_of}")
        }
        ValidationErrorKind::FalseSchema => "false schema: no value is allowed here".into(),
        ValidationErrorKind::Not { .. } => "not: value must not match the declared schema".into(),
        ValidationErrorKind::AnyOf { .. } => {
            "anyOf: value does not match any of the alternatives".into()
        }
        ValidationErrorKind::OneOfNotValid { .. } => {
            "oneOf: value does not match any of the alternatives".into()
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "oneOf: value matches more than one alternative".into()
        }
        ValidationErrorKind::PropertyNames { error } => format!(
            "propertyNames: a property name does not satisfy the declared schema ({})",
            rule(error.kind())?
        ),
        ValidationErrorKind::ContentEncoding { content_encoding } => {
            format!("contentEncoding: is not valid `{content_encoding}` content")
        }
        ValidationErrorKind::FromUtf8 { .. } => {
            "contentEncoding: the decoded content is not valid UTF-8".into()
        }
        ValidationErrorKind::ContentMediaType { content_media_type } => {
            format!("contentMediaType: is not valid `{content_media_type}` content")
        }
        ValidationErrorKind::BacktrackLimitExceeded { .. }
        | ValidationErrorKind::RegexEngineFailure { .. } => {
            return Err("pattern: the regular expression engine gave up on this value".into());
        }
        ValidationErrorKind::Referencing(error) => {
            return Err(format!(
                "$ref: the reference could not be resolved: {error}"
            ));
        }
        // Custom keywords (none are registered here) and kinds added later.
        other => format!("{}: value does not satisfy the schema", other.keyword()),
    })
}

#[cfg(test)]
mod tests;
