//! The macros and the registry give the same verdict on the same definition.
//!
//! Each row names a compile-fail or compile-pass case of `tests/ui` (run by
//! `macros.rs` through trybuild). This test reads the attribute out of that
//! very file, builds the equivalent hand-written component, and registers it:
//! a case that must fail to compile must be refused by `build()`, one that
//! compiles must be accepted. Prompt argument mistakes the `PromptArgument`
//! type cannot express (a non-string name, an unknown member) have no row.

use std::collections::BTreeMap;

use serde_json::Value;
use snodo::prompt::{Prompt, PromptArgument, PromptArguments, PromptResult};
use snodo::resource::{ReadRequest, ReadResult, Resource};
use snodo::{Arguments, CallResult, Context, HandlerError, Server, Tool, ToolResult};

/// What the compiler does with a `tests/ui` case.
enum Verdict {
    Compiles,
    FailsToCompile,
}

const CASES: &[(&str, Verdict)] = &[
    (
        "fail/schema_min_length_not_an_integer.rs",
        Verdict::FailsToCompile,
    ),
    (
        "fail/schema_required_not_an_array.rs",
        Verdict::FailsToCompile,
    ),
    ("fail/schema_enum_not_an_array.rs", Verdict::FailsToCompile),
    (
        "fail/schema_applicator_not_a_schema.rs",
        Verdict::FailsToCompile,
    ),
    ("fail/schema_type_unknown.rs", Verdict::FailsToCompile),
    (
        "fail/input_schema_root_not_object_type.rs",
        Verdict::FailsToCompile,
    ),
    (
        "fail/input_schema_not_an_object.rs",
        Verdict::FailsToCompile,
    ),
    ("fail/output_schema_a_string.rs", Verdict::FailsToCompile),
    (
        "fail/header_duplicate_ignoring_case.rs",
        Verdict::FailsToCompile,
    ),
    ("fail/header_not_a_token.rs", Verdict::FailsToCompile),
    ("fail/header_on_a_number.rs", Verdict::FailsToCompile),
    ("fail/header_on_the_root.rs", Verdict::FailsToCompile),
    ("fail/header_under_items.rs", Verdict::FailsToCompile),
    ("fail/bad_tool_name.rs", Verdict::FailsToCompile),
    ("fail/resource_relative_uri.rs", Verdict::FailsToCompile),
    ("fail/resource_size_on_template.rs", Verdict::FailsToCompile),
    ("fail/resource_template_in_uri.rs", Verdict::FailsToCompile),
    (
        "fail/resource_template_fragment.rs",
        Verdict::FailsToCompile,
    ),
    ("fail/resource_template_prefix.rs", Verdict::FailsToCompile),
    (
        "fail/resource_template_variable_meta.rs",
        Verdict::FailsToCompile,
    ),
    (
        "fail/resource_template_variable_uri.rs",
        Verdict::FailsToCompile,
    ),
    ("fail/resource_uri_and_template.rs", Verdict::FailsToCompile),
    ("fail/resource_without_uri.rs", Verdict::FailsToCompile),
    ("fail/resource_complete_on_uri.rs", Verdict::FailsToCompile),
    (
        "fail/prompt_argument_duplicate_name.rs",
        Verdict::FailsToCompile,
    ),
    (
        "fail/prompt_argument_empty_name.rs",
        Verdict::FailsToCompile,
    ),
    (
        "fail/prompt_complete_without_arguments.rs",
        Verdict::FailsToCompile,
    ),
    ("pass/all_keys.rs", Verdict::Compiles),
    ("pass/resource_keys.rs", Verdict::Compiles),
    ("pass/prompt_keys.rs", Verdict::Compiles),
];

#[test]
fn the_registry_agrees_with_the_macros() {
    let mut disagreements = Vec::new();
    for (file, verdict) in CASES {
        let source = std::fs::read_to_string(format!("tests/ui/{file}"))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let code: String = source
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .map(|line| format!("{line}\n"))
            .collect();
        let attrs = attributes(&code);
        assert!(!attrs.is_empty(), "{file}: no snodo attribute found");
        // A file may hold several components; it compiles only if all pass.
        let outcomes: Vec<Result<(), String>> = attrs
            .iter()
            .map(|(kind, keys)| register(kind, keys))
            .collect();
        let accepted = outcomes.iter().all(Result::is_ok);
        match (verdict, accepted) {
            (Verdict::Compiles, false) | (Verdict::FailsToCompile, true) => {
                disagreements.push(format!("{file}: registry said {outcomes:?}"));
            }
            _ => {}
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// Registers the component an attribute describes on a fresh server.
fn register(kind: &str, keys: &BTreeMap<String, Value>) -> Result<(), String> {
    let name = keys.get("name").and_then(Value::as_str).map(str::to_string);
    let builder = Server::builder("agree", "0.1.0");
    let builder = match kind {
        "tool" => builder.tool(DefinedTool {
            name: name.unwrap_or_else(|| "f".into()),
            input: keys
                .get("input_schema")
                .cloned()
                .unwrap_or(serde_json::json!({"type": "object"})),
            output: keys.get("output_schema").cloned(),
        }),
        "resource" => builder.resource(DefinedResource {
            name: name.unwrap_or_else(|| "f".into()),
            uri: keys.get("uri").and_then(Value::as_str).map(str::to_string),
            template: keys
                .get("uri_template")
                .and_then(Value::as_str)
                .map(str::to_string),
            size: keys.get("size").and_then(Value::as_u64),
            completes: keys.contains_key("complete"),
        }),
        "prompt" => builder.prompt(DefinedPrompt {
            name: name.unwrap_or_else(|| "f".into()),
            arguments: keys
                .get("arguments")
                .map(|a| serde_json::from_value(a.clone()).expect("an expressible argument list"))
                .unwrap_or_default(),
            completes: keys.contains_key("complete"),
        }),
        other => panic!("unknown attribute kind {other}"),
    };
    builder.build().map(drop).map_err(|e| e.to_string())
}

struct DefinedTool {
    name: String,
    input: Value,
    output: Option<Value>,
}

impl Tool for DefinedTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn input_schema(&self) -> Value {
        self.input.clone()
    }
    fn output_schema(&self) -> Option<Value> {
        self.output.clone()
    }
    async fn call(&self, _: Arguments, _: Context) -> CallResult {
        Ok(ToolResult::text("unused"))
    }
}

struct DefinedResource {
    name: String,
    uri: Option<String>,
    template: Option<String>,
    size: Option<u64>,
    completes: bool,
}

impl Resource for DefinedResource {
    fn uri(&self) -> Option<&str> {
        self.uri.as_deref()
    }
    fn uri_template(&self) -> Option<&str> {
        self.template.as_deref()
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn size(&self) -> Option<u64> {
        self.size
    }
    fn completes(&self) -> bool {
        self.completes
    }
    async fn read(&self, _: ReadRequest, _: Context) -> Result<ReadResult, HandlerError> {
        Err("unused".into())
    }
}

struct DefinedPrompt {
    name: String,
    arguments: Vec<PromptArgument>,
    completes: bool,
}

impl Prompt for DefinedPrompt {
    fn name(&self) -> &str {
        &self.name
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        self.arguments.clone()
    }
    fn completes(&self) -> bool {
        self.completes
    }
    async fn get(&self, _: PromptArguments, _: Context) -> Result<PromptResult, HandlerError> {
        Err("unused".into())
    }
}

/// Every `#[snodo::KIND(key = value, ...)]` in `source`: the kind and its
/// keys, each value read as JSON (a path such as `complete = crate::f` or a
/// suffixed integer becomes a string or a number).
fn attributes(source: &str) -> Vec<(String, BTreeMap<String, Value>)> {
    let mut found = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("#[snodo::") {
        let after = &rest[at + "#[snodo::".len()..];
        let kind: String = after
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        let after = &after[kind.len()..];
        let body = match after.strip_prefix('(') {
            Some(open) => &open[..closing(open)],
            None => "",
        };
        found.push((kind, keys(body)));
        rest = after;
    }
    found
}

/// Calls `visit(index, char, depth)` for every character outside string
/// literals, `depth` counting the brackets open before it; stops when `visit`
/// returns `false`.
fn scan(text: &str, mut visit: impl FnMut(usize, char, usize) -> bool) {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if !visit(i, c, depth) {
            return;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
}

/// The index of the `)` closing a group whose `(` was just consumed.
fn closing(text: &str) -> usize {
    let mut end = text.len();
    scan(text, |i, c, depth| {
        if c == ')' && depth == 0 {
            end = i;
            return false;
        }
        true
    });
    end
}

/// Splits `key = value, ...` at top-level commas.
fn keys(body: &str) -> BTreeMap<String, Value> {
    let mut cuts = vec![0];
    scan(body, |i, c, depth| {
        if c == ',' && depth == 0 {
            cuts.push(i + 1);
        }
        true
    });
    cuts.push(body.len() + 1);
    let mut out = BTreeMap::new();
    for pair in cuts.windows(2) {
        let part = &body[pair[0]..pair[1] - 1];
        if let Some((key, value)) = part.split_once('=') {
            out.insert(key.trim().to_string(), json_of(value.trim()));
        }
    }
    out
}

/// A value as JSON: trailing commas dropped, an integer suffix dropped, and
/// anything else unparsable kept as its text.
fn json_of(text: &str) -> Value {
    let mut trailing = Vec::new();
    scan(text, |i, c, _| {
        if c == ',' && matches!(text[i + 1..].trim_start().chars().next(), Some('}' | ']')) {
            trailing.push(i);
        }
        true
    });
    let cleaned: String = text
        .char_indices()
        .filter(|(i, _)| !trailing.contains(i))
        .map(|(_, c)| c)
        .collect();
    let unsuffixed = cleaned.trim_end_matches("u64");
    serde_json::from_str(unsuffixed).unwrap_or(Value::String(cleaned))
}
