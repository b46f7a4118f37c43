//! Rules for resource URIs and prompt arguments.

use serde_json::Value;

use crate::RuleError;
use crate::template::{UriTemplate, is_valid_scheme};

/// Template variable names a resource may not use: `uri` and `_meta` are
/// members of the read request.
pub const RESERVED_VARIABLES: [&str; 2] = ["uri", "_meta"];

/// What a resource declares, as far as the definition rules care.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResourceShape<'a> {
    /// The resource's name.
    pub name: &'a str,
    /// Its fixed URI, if it has one.
    pub uri: Option<&'a str>,
    /// Its URI template, if it is a family of resources.
    pub uri_template: Option<&'a str>,
    /// Whether it declares a size.
    pub has_size: bool,
    /// Whether it completes template variables.
    pub completes: bool,
}

/// Checks a resource definition: exactly one of a fixed absolute URI (with no
/// template expression) and a URI template a server can parse (with no
/// reserved variable name); a non-empty name; `size` on a fixed URI only;
/// completion on a template only. Returns the parsed template, or every rule
/// broken, each with a pointer naming the member (`/uri`, `/uri_template`,
/// `/size`, `/complete`, `/name`; `""` when both or neither location is given).
///
/// ```
/// use snodo_rules::{ResourceShape, check_resource};
/// let shape = ResourceShape { name: "page", uri_template: Some("docs://{page}"), ..Default::default() };
/// assert!(check_resource(&shape).is_ok());
/// let sized = ResourceShape { has_size: true, ..shape };
/// assert_eq!(check_resource(&sized).unwrap_err()[0].pointer, "/size");
/// ```
pub fn check_resource(shape: &ResourceShape<'_>) -> Result<Option<UriTemplate>, Vec<RuleError>> {
    let mut errors = Vec::new();
    let mut template = None;
    match (shape.uri, shape.uri_template) {
        (Some(_), Some(_)) => errors.push(RuleError::new(
            "",
            "give exactly one of `uri` and `uri_template`, not both: a resource has a fixed \
             URI or is a family of resources under a template",
        )),
        (None, None) => errors.push(RuleError::new(
            "",
            "a resource needs `uri = \"scheme:...\"` (one resource) or \
             `uri_template = \"scheme:...{var}\"` (a family of resources)",
        )),
        (Some(uri), None) => {
            if let Err(e) = check_resource_uri(uri) {
                errors.push(RuleError::new("/uri", e.message));
            } else if uri.contains('{') {
                errors.push(RuleError::new(
                    "/uri",
                    format!(
                        "resource uri {uri:?} holds a template expression: write \
                         `uri_template = {uri:?}` for a family of resources"
                    ),
                ));
            }
        }
        (None, Some(text)) => match UriTemplate::parse(text) {
            Ok(parsed) => {
                let reserved = parsed
                    .variables()
                    .find(|v| RESERVED_VARIABLES.contains(v))
                    .map(str::to_string);
                match reserved {
                    Some(reserved) => errors.push(RuleError::new(
                        "/uri_template",
                        format!(
                            "`uri_template`: the variable name `{reserved}` is reserved (`uri` \
                             and `_meta` are members of the read request); rename the variable"
                        ),
                    )),
                    None => template = Some(parsed),
                }
            }
            Err(e) => errors.push(RuleError::new(
                "/uri_template",
                format!("`uri_template`: {e}"),
            )),
        },
    }
    if shape.name.is_empty() {
        errors.push(RuleError::new("/name", "resource name must not be empty"));
    }
    if shape.has_size && shape.uri_template.is_some() {
        errors.push(RuleError::new(
            "/size",
            "`size` applies to a fixed `uri` only: a template names many resources",
        ));
    }
    if shape.completes && shape.uri.is_some() {
        errors.push(RuleError::new(
            "/complete",
            "`complete` suggests values for template variables: it needs a `uri_template`, \
             and a fixed `uri` has none",
        ));
    }
    if errors.is_empty() {
        Ok(template)
    } else {
        Err(errors)
    }
}

/// Checks a fixed resource URI: an absolute URI, that is an RFC 3986 scheme
/// (a letter, then letters, digits, `+`, `-` or `.`) followed by `:`.
///
/// ```
/// assert!(snodo_rules::check_resource_uri("file:///etc/hosts").is_ok());
/// assert!(snodo_rules::check_resource_uri("docs://readme").is_ok());
/// assert!(snodo_rules::check_resource_uri("readme.md").is_err());
/// assert!(snodo_rules::check_resource_uri("").is_err());
/// ```
pub fn check_resource_uri(uri: &str) -> Result<(), RuleError> {
    match uri.split_once(':') {
        Some((scheme, _)) if is_valid_scheme(scheme) => Ok(()),
        _ => Err(RuleError::new(
            "",
            format!(
                "resource uri {uri:?} must be an absolute URI: a scheme such as \"file:\" or \
                 \"https:\" first"
            ),
        )),
    }
}

/// What a prompt declares, as far as the definition rules care.
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptShape<'a> {
    /// The prompt's name.
    pub name: &'a str,
    /// Its declared arguments as JSON (an array of argument objects), if any.
    pub arguments: Option<&'a Value>,
    /// Whether it completes argument values.
    pub completes: bool,
}

/// Checks a prompt definition: a non-empty name, arguments that pass
/// [`check_prompt_arguments`], and completion only when arguments are
/// declared. Returns every rule broken, each with a pointer naming the member
/// (`/name`, `/arguments/1/name`, `/complete`).
///
/// ```
/// use serde_json::json;
/// use snodo_rules::{PromptShape, check_prompt};
/// let args = json!([{"name": "topic"}]);
/// assert!(check_prompt(&PromptShape { name: "brief", arguments: Some(&args), completes: true }).is_ok());
/// let bare = PromptShape { name: "brief", arguments: None, completes: true };
/// assert_eq!(check_prompt(&bare).unwrap_err()[0].pointer, "/complete");
/// ```
pub fn check_prompt(shape: &PromptShape<'_>) -> Result<(), Vec<RuleError>> {
    let mut errors = Vec::new();
    if shape.name.is_empty() {
        errors.push(RuleError::new("/name", "prompt name must not be empty"));
    }
    let mut declared = false;
    if let Some(arguments) = shape.arguments {
        match check_prompt_arguments(arguments) {
            Ok(()) => declared = arguments.as_array().is_some_and(|a| !a.is_empty()),
            Err(e) => errors.push(RuleError::new(
                format!("/arguments{}", e.pointer),
                e.message,
            )),
        }
    }
    if shape.completes && !declared && errors.is_empty() {
        errors.push(RuleError::new(
            "/complete",
            "`complete` suggests argument values: declare the prompt's `arguments`",
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The members a prompt argument object may have.
const ARGUMENT_KEYS: [&str; 4] = ["name", "title", "description", "required"];

/// Checks a prompt's declared arguments written as JSON: an array of objects
/// with a non-empty string `name`, unique across the array, an optional string
/// `title` and `description`, an optional boolean `required`, and no other
/// member.
///
/// The error's pointer names the offending element or member (`/1/name`).
///
/// ```
/// use serde_json::json;
/// let ok = json!([{"name": "topic", "required": true}, {"name": "tone", "description": "How"}]);
/// assert!(snodo_rules::check_prompt_arguments(&ok).is_ok());
/// let twice = json!([{"name": "topic"}, {"name": "topic"}]);
/// assert_eq!(snodo_rules::check_prompt_arguments(&twice).unwrap_err().pointer, "/1/name");
/// ```
pub fn check_prompt_arguments(arguments: &Value) -> Result<(), RuleError> {
    let Value::Array(items) = arguments else {
        return Err(RuleError::new(
            "",
            "prompt arguments must be a JSON array of argument objects",
        ));
    };
    let mut names: Vec<&str> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(RuleError::new(
                format!("/{i}"),
                "a prompt argument must be a JSON object with a \"name\"",
            ));
        };
        if let Some(key) = map.keys().find(|k| !ARGUMENT_KEYS.contains(&k.as_str())) {
            return Err(RuleError::new(
                format!("/{i}/{}", crate::escape_pointer_token(key)),
                format!(
                    "unknown prompt argument member {key:?}; expected {}",
                    ARGUMENT_KEYS.join(", ")
                ),
            ));
        }
        let name = match map.get("name") {
            None => {
                return Err(RuleError::new(
                    format!("/{i}"),
                    "a prompt argument needs a \"name\"",
                ));
            }
            Some(Value::String(name)) if name.is_empty() => {
                return Err(RuleError::new(
                    format!("/{i}/name"),
                    "a prompt argument name must not be empty",
                ));
            }
            Some(Value::String(name)) => name.as_str(),
            Some(_) => {
                return Err(RuleError::new(
                    format!("/{i}/name"),
                    "a prompt argument name must be a string",
                ));
            }
        };
        if names.contains(&name) {
            return Err(RuleError::new(
                format!("/{i}/name"),
                format!("duplicate prompt argument name {name:?}"),
            ));
        }
        names.push(name);
        for key in ["title", "description"] {
            if map.get(key).is_some_and(|v| !v.is_string()) {
                return Err(RuleError::new(
                    format!("/{i}/{key}"),
                    format!("a prompt argument's {key:?} must be a string"),
                ));
            }
        }
        if map.get("required").is_some_and(|v| !v.is_boolean()) {
            return Err(RuleError::new(
                format!("/{i}/required"),
                "a prompt argument's \"required\" must be a boolean",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absolute_uris_have_a_scheme() {
        for uri in [
            "file:///a",
            "https://example.com/x",
            "urn:isbn:1",
            "a+b.c-d:x",
            "x:",
        ] {
            assert!(check_resource_uri(uri).is_ok(), "{uri}");
        }
        for uri in ["", "/etc/hosts", "readme", ":x", "1a:x", "a_b:x", "./a:b"] {
            assert!(check_resource_uri(uri).is_err(), "{uri}");
        }
    }

    fn refused(arguments: Value) -> (String, String) {
        let e = check_prompt_arguments(&arguments).unwrap_err();
        (e.pointer, e.message)
    }

    #[test]
    fn accepts_well_formed_arguments() {
        for ok in [
            json!([]),
            json!([{"name": "a"}]),
            json!([{"name": "a", "title": "A", "description": "d", "required": false}, {"name": "b"}]),
        ] {
            assert!(check_prompt_arguments(&ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_each_malformed_shape_at_its_place() {
        let cases = [
            (json!({"name": "a"}), "", "must be a JSON array"),
            (json!([{"name": "a"}, "b"]), "/1", "must be a JSON object"),
            (json!([{}]), "/0", "needs a \"name\""),
            (json!([{"name": ""}]), "/0/name", "must not be empty"),
            (json!([{"name": 1}]), "/0/name", "must be a string"),
            (
                json!([{"name": "a"}, {"name": "a"}]),
                "/1/name",
                "duplicate",
            ),
            (
                json!([{"name": "a", "title": 1}]),
                "/0/title",
                "must be a string",
            ),
            (
                json!([{"name": "a", "description": null}]),
                "/0/description",
                "must be a string",
            ),
            (
                json!([{"name": "a", "required": "yes"}]),
                "/0/required",
                "must be a boolean",
            ),
            (
                json!([{"name": "a", "default": "x"}]),
                "/0/default",
                "unknown prompt argument member",
            ),
            (json!([{"name": "a", "x/y": 1}]), "/0/x~1y", "unknown"),
        ];
        for (value, pointer, message) in cases {
            let (p, m) = refused(value.clone());
            assert_eq!(p, pointer, "{value}");
            assert!(m.contains(message), "{value}: {m}");
        }
    }
}
