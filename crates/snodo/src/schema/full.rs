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
mod tests {
    use super::*;
    use serde_json::json;

    fn compile(schema: Value) -> Arc<dyn CompiledSchema> {
        match Full.compile(&schema) {
            Ok(compiled) => compiled,
            Err(e) => panic!("schema {schema} refused: {e}"),
        }
    }

    fn accepts(schema: Value, instance: Value) {
        let compiled = compile(schema.clone());
        if let Err(e) = compiled.validate(&instance) {
            panic!("{instance} against {schema}: {e:?}");
        }
    }

    fn violation(schema: Value, instance: Value) -> Violation {
        match compile(schema.clone()).validate(&instance) {
            Err(ValidationError::Invalid(v)) => v,
            other => panic!("{instance} against {schema}: expected a violation, got {other:?}"),
        }
    }

    fn rejects(schema: Value, instance: Value, location: &str, rule: &str) {
        let v = violation(schema, instance);
        assert_eq!((v.location.as_str(), v.rule.as_str()), (location, rule));
    }

    fn refused(schema: Value) -> String {
        match Full.compile(&schema) {
            Ok(_) => panic!("schema {schema} was accepted"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn default_dialect_is_2020_12_prefix_items() {
        let schema = json!({
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "integer"}],
            "items": false
        });
        accepts(schema.clone(), json!(["a", 1]));
        accepts(schema.clone(), json!(["a"]));
        rejects(
            schema.clone(),
            json!(["a", "b"]),
            "/1",
            "type: value is not one of the declared JSON types (integer)",
        );
        rejects(
            schema,
            json!(["a", 1, true]),
            "/2",
            "false schema: no value is allowed here",
        );
    }

    #[test]
    fn local_defs_ref_and_anchor() {
        let schema = json!({
            "$defs": {
                "name": {"type": "string", "minLength": 1},
                "count": {"$anchor": "count", "type": "integer", "minimum": 0}
            },
            "type": "object",
            "properties": {
                "name": {"$ref": "#/$defs/name"},
                "n": {"$ref": "#count"},
                "children": {"type": "array", "items": {"$ref": "#"}}
            }
        });
        accepts(
            schema.clone(),
            json!({"name": "a", "n": 1, "children": [{"name": "b", "children": []}]}),
        );
        rejects(
            schema.clone(),
            json!({"name": ""}),
            "/name",
            "minLength: must be at least 1 characters long",
        );
        rejects(
            schema.clone(),
            json!({"n": -1}),
            "/n",
            "minimum: must be at least 0",
        );
        rejects(
            schema,
            json!({"children": [{"n": 1.5}]}),
            "/children/0/n",
            "type: value is not one of the declared JSON types (integer)",
        );
    }

    #[test]
    fn references_to_the_documents_own_ids_resolve() {
        let schema = json!({
            "$id": "https://example.com/root.json",
            "properties": {
                "a": {"$ref": "https://example.com/root.json#/$defs/a"},
                "b": {"$ref": "item.json"}
            },
            "$defs": {
                "a": {"type": "string"},
                "item": {"$id": "item.json", "type": "integer"}
            }
        });
        accepts(schema.clone(), json!({"a": "x", "b": 1}));
        rejects(
            schema,
            json!({"b": "x"}),
            "/b",
            "type: value is not one of the declared JSON types (integer)",
        );
    }

    #[test]
    fn unevaluated_properties() {
        let schema = json!({
            "allOf": [{"properties": {"a": {"type": "string"}}}],
            "properties": {"b": true},
            "unevaluatedProperties": false
        });
        accepts(schema.clone(), json!({"a": "x", "b": 1}));
        rejects(
            schema.clone(),
            json!({"a": "x", "c": 1}),
            "",
            "unevaluatedProperties: property `c` is not allowed",
        );
        rejects(
            schema,
            json!({"d": 1, "c": 1}),
            "",
            "unevaluatedProperties: properties `c`, `d` are not allowed",
        );
    }

    #[test]
    fn draft_07_schema_is_honoured() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"s": {"type": "string"}},
            "type": "array",
            "items": [{"$ref": "#/definitions/s"}, {"type": "integer"}],
            "additionalItems": false,
            "prefixItems": [{"type": "boolean"}]
        });
        accepts(schema.clone(), json!(["a", 1]));
        rejects(
            schema.clone(),
            json!([1]),
            "/0",
            "type: value is not one of the declared JSON types (string)",
        );
        rejects(
            schema,
            json!(["a", 1, 2]),
            "",
            "additionalItems: must have at most 2 items",
        );
        // draft-07 knows nothing of `prefixItems`; 2020-12 does.
        let prefix = json!({"prefixItems": [{"type": "boolean"}]});
        accepts(
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "prefixItems": [{"type": "boolean"}]}),
            json!(["a"]),
        );
        rejects(
            prefix,
            json!(["a"]),
            "/0",
            "type: value is not one of the declared JSON types (boolean)",
        );
    }

    #[test]
    fn draft_04_boolean_exclusive_maximum() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "maximum": 10,
            "exclusiveMaximum": true
        });
        accepts(schema.clone(), json!(9));
        rejects(
            schema,
            json!(10),
            "",
            "exclusiveMaximum: must be less than 10",
        );
    }

    #[test]
    fn every_supported_dialect_uri_compiles() {
        for uri in [
            "https://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft/2020-12/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft-07/schema",
            "http://json-schema.org/draft-06/schema#",
            "http://json-schema.org/draft-04/schema#",
        ] {
            accepts(json!({"$schema": uri, "type": "string"}), json!("x"));
        }
    }

    #[test]
    fn unknown_dialect_is_refused() {
        assert_eq!(
            refused(json!({"$schema": "https://example.com/my-meta-schema"})),
            "unsupported JSON Schema dialect: https://example.com/my-meta-schema"
        );
        assert_eq!(
            refused(json!({"$schema": "http://json-schema.org/draft-03/schema#"})),
            "unsupported JSON Schema dialect: http://json-schema.org/draft-03/schema#"
        );
        assert!(refused(json!({"$schema": 7})).contains("`$schema` must be a string"));
    }

    #[test]
    fn remote_ref_is_refused_without_fetching() {
        let message = refused(json!({"$ref": "https://example.com/schema"}));
        assert!(message.contains("https://example.com/schema"), "{message}");
        assert!(message.contains("never fetched"), "{message}");
        let message = refused(json!({
            "properties": {"a": {"$ref": "http://example.com/defs.json#/$defs/a"}}
        }));
        assert!(
            message.contains("http://example.com/defs.json"),
            "{message}"
        );
    }

    #[test]
    fn file_and_relative_refs_are_refused() {
        let message = refused(json!({"$ref": "file:///etc/passwd"}));
        assert!(message.contains("file:///etc/passwd"), "{message}");
        assert!(message.contains("never fetched"), "{message}");
        let message = refused(json!({"$ref": "other.json"}));
        assert!(message.contains("other.json"), "{message}");
        assert!(message.contains("never fetched"), "{message}");
    }

    #[test]
    fn missing_local_target_is_refused() {
        let message = refused(json!({"$ref": "#/$defs/missing"}));
        assert!(message.contains("unresolvable reference"), "{message}");
    }

    #[test]
    fn invalid_keyword_values_are_refused() {
        let message = refused(json!({"minLength": "x"}));
        assert!(message.starts_with("invalid schema at"), "{message}");
        refused(json!({"type": "float"}));
        refused(json!({"required": "a"}));
    }

    #[test]
    fn format_is_an_annotation_in_2020_12_and_asserted_in_draft_07() {
        accepts(json!({"format": "email"}), json!("not an email"));
        rejects(
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}),
            json!("not an email"),
            "",
            "format: is not a valid `email`",
        );
    }

    #[test]
    fn rules_by_kind() {
        let cases = [
            // jsonschema names a union's types in its own order, not the declared one.
            (
                json!({"type": ["integer", "null"]}),
                json!("x"),
                "",
                "type: value is not one of the declared JSON types (null, integer)",
            ),
            (
                json!({"const": 1}),
                serde_json::from_str("1.0").unwrap(),
                "",
                "",
            ),
            (
                json!({"const": 1}),
                json!(2),
                "",
                "const: value is not the declared constant",
            ),
            (
                json!({"enum": [1, 2]}),
                json!(3),
                "",
                "enum: value is not one of the allowed values",
            ),
            (
                json!({"required": ["a", "b"]}),
                json!({"a": 1}),
                "",
                "required: missing property `b`",
            ),
            (
                json!({"additionalProperties": false}),
                json!({"x": 1}),
                "",
                "additionalProperties: property `x` is not allowed",
            ),
            (
                json!({"additionalProperties": false}),
                json!({"y": 1, "x": {}}),
                "",
                "additionalProperties: properties `x`, `y` are not allowed",
            ),
            (
                json!({"properties": {"a": true}, "additionalProperties": false}),
                json!({"a": 1, "x": 1}),
                "",
                "additionalProperties: property `x` is not allowed",
            ),
            (
                json!({"properties": {"o": {"additionalProperties": false}}}),
                json!({"o": {"x": 1}}),
                "/o",
                "additionalProperties: property `x` is not allowed",
            ),
            (
                json!({"properties": {"additionalProperties": false}}),
                json!({"additionalProperties": {}}),
                "/additionalProperties",
                "false schema: no value is allowed here",
            ),
            (
                json!({"patternProperties": {"^a": false}}),
                json!({"ab": 1}),
                "/ab",
                "false schema: no value is allowed here",
            ),
            (
                json!({"items": false}),
                json!([1]),
                "/0",
                "false schema: no value is allowed here",
            ),
            (
                json!({"minProperties": 2}),
                json!({}),
                "",
                "minProperties: must have at least 2 properties",
            ),
            (
                json!({"maxProperties": 0}),
                json!({"a": 1}),
                "",
                "maxProperties: must have at most 0 properties",
            ),
            (
                json!({"minItems": 1}),
                json!([]),
                "",
                "minItems: must have at least 1 items",
            ),
            (
                json!({"maxItems": 1}),
                json!([1, 2]),
                "",
                "maxItems: must have at most 1 items",
            ),
            (
                json!({"uniqueItems": true}),
                json!([1, 1]),
                "",
                "uniqueItems: items must be unique",
            ),
            (
                json!({"contains": {"type": "string"}}),
                json!([1]),
                "",
                "contains: no item matches the declared schema",
            ),
            (
                json!({"minLength": 6}),
                json!("héllo"),
                "",
                "minLength: must be at least 6 characters long",
            ),
            (
                json!({"maxLength": 4}),
                json!("héllo"),
                "",
                "maxLength: must be at most 4 characters long",
            ),
            (
                json!({"pattern": "^a"}),
                json!("b"),
                "",
                "pattern: does not match the declared pattern",
            ),
            (
                json!({"minimum": 1}),
                json!(0),
                "",
                "minimum: must be at least 1",
            ),
            (
                json!({"maximum": 10}),
                json!(11),
                "",
                "maximum: must be at most 10",
            ),
            (
                json!({"exclusiveMinimum": 0}),
                json!(0),
                "",
                "exclusiveMinimum: must be greater than 0",
            ),
            (
                json!({"exclusiveMaximum": 1.5}),
                json!(2),
                "",
                "exclusiveMaximum: must be less than 1.5",
            ),
            (
                json!({"multipleOf": 3}),
                json!(4),
                "",
                "multipleOf: must be a multiple of 3",
            ),
            (
                json!(false),
                json!(1),
                "",
                "false schema: no value is allowed here",
            ),
            (
                json!({"not": {"type": "string"}}),
                json!("x"),
                "",
                "not: value must not match the declared schema",
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                json!(1),
                "",
                "anyOf: value does not match any of the alternatives",
            ),
            (
                json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
                json!(1),
                "",
                "oneOf: value does not match any of the alternatives",
            ),
            (
                json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
                json!(1),
                "",
                "oneOf: value matches more than one alternative",
            ),
            (
                json!({"propertyNames": {"maxLength": 2}}),
                json!({"abc": 1}),
                "",
                "propertyNames: a property name does not satisfy the declared schema (maxLength: must be at most 2 characters long)",
            ),
            (
                json!({"prefixItems": [true], "unevaluatedItems": false}),
                json!([1, 2]),
                "",
                "unevaluatedItems: items not evaluated by the schema are not allowed",
            ),
            (
                json!({"properties": {"a/b": {"items": {"type": "string"}}}}),
                json!({"a/b": ["x", 1]}),
                "/a~1b/1",
                "type: value is not one of the declared JSON types (string)",
            ),
            (
                json!({"additionalProperties": {"type": "string"}}),
                json!({"m~n": 1}),
                "/m~0n",
                "type: value is not one of the declared JSON types (string)",
            ),
        ];
        for (schema, instance, location, rule) in cases {
            if rule.is_empty() {
                accepts(schema, instance);
            } else {
                rejects(schema, instance, location, rule);
            }
        }
    }

    const SECRET: &str = "SECRET-123";

    #[test]
    fn violations_never_contain_the_value() {
        let draft7 = "http://json-schema.org/draft-07/schema#";
        let cases = [
            (json!({"type": "integer"}), json!(SECRET)),
            (json!({"const": "x"}), json!(SECRET)),
            (json!({"enum": ["x", 1]}), json!(SECRET)),
            (json!({"minLength": 11}), json!(SECRET)),
            (json!({"maxLength": 3}), json!(SECRET)),
            (json!({"pattern": "^[a-z]+$"}), json!(SECRET)),
            (json!({"$schema": draft7, "format": "email"}), json!(SECRET)),
            (json!({"$schema": draft7, "format": "date"}), json!(SECRET)),
            (json!({"not": {"type": "string"}}), json!(SECRET)),
            (json!({"anyOf": [{"type": "null"}]}), json!(SECRET)),
            (json!({"oneOf": [{"type": "null"}]}), json!(SECRET)),
            (json!({"oneOf": [true, true]}), json!(SECRET)),
            (json!({"allOf": [{"maxLength": 1}]}), json!(SECRET)),
            (json!({"if": true, "then": {"type": "null"}}), json!(SECRET)),
            (json!(false), json!(SECRET)),
            (json!({"uniqueItems": true}), json!([SECRET, SECRET])),
            (json!({"maxItems": 1}), json!([SECRET, SECRET])),
            (json!({"contains": {"type": "null"}}), json!([SECRET])),
            (json!({"items": {"type": "null"}}), json!([SECRET])),
            (
                json!({"prefixItems": [true], "unevaluatedItems": false}),
                json!([1, SECRET]),
            ),
            (
                json!({"$schema": draft7, "items": [true], "additionalItems": false}),
                json!([1, SECRET]),
            ),
            (json!({"maximum": 10}), json!(123_456_789)),
            (json!({"multipleOf": 10}), json!(123_456_789)),
            (json!({"exclusiveMinimum": 200_000_000}), json!(123_456_789)),
            (json!({"additionalProperties": false}), json!({"k": SECRET})),
            (
                json!({"unevaluatedProperties": false}),
                json!({"k": SECRET}),
            ),
            (
                json!({"properties": {"k": {"type": "object"}}}),
                json!({"k": SECRET}),
            ),
            (json!({"required": ["r"]}), json!({"k": SECRET})),
            (json!({"maxProperties": 0}), json!({"k": SECRET})),
            (
                json!({"dependentRequired": {"k": ["r"]}}),
                json!({"k": SECRET}),
            ),
            (
                json!({"$schema": draft7, "contentEncoding": "base64"}),
                json!(SECRET),
            ),
            (
                json!({"$schema": draft7, "contentMediaType": "application/json"}),
                json!(SECRET),
            ),
        ];
        for (schema, instance) in cases {
            let v = violation(schema.clone(), instance);
            for text in [&v.rule, &v.location] {
                assert!(
                    !text.contains(SECRET) && !text.contains("123456789"),
                    "{schema}: {v:?}"
                );
            }
        }
    }

    #[test]
    fn full_is_usable_as_a_trait_object() {
        let validator: Box<dyn Validator> = Box::new(Full);
        let compiled = validator.compile(&json!({"type": "string"})).unwrap();
        assert!(compiled.validate(&json!("ok")).is_ok());
    }
}
