//! The attribute's arguments: `#[snodo::tool(key = value, ...)]`, and the
//! definition rules applied to them.

use proc_macro2::Span;
use syn::LitStr;
use syn::parse::{Parse, ParseStream};

use super::signature::TOOL;
use crate::common::{
    expect_icons, expect_object, parse_keys, rule_error, scopes_literal, string_literal,
    u32_literal,
};
use crate::json::Node;

/// Every key the attribute accepts, in the order the docs list them.
const KEYS: [&str; 13] = [
    "name",
    "title",
    "description",
    "input_schema",
    "output_schema",
    "annotations",
    "icons",
    "meta",
    "scopes",
    "task",
    "task_retries",
    "ui",
    "ui_visibility",
];

/// The parsed arguments of `#[snodo::tool(...)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) input_schema: Option<Node>,
    pub(crate) output_schema: Option<Node>,
    pub(crate) annotations: Option<Node>,
    pub(crate) icons: Option<Node>,
    pub(crate) meta: Option<Node>,
    pub(crate) scopes: Option<Vec<LitStr>>,
    pub(crate) task: Option<LitStr>,
    pub(crate) task_retries: Option<syn::LitInt>,
    pub(crate) ui: Option<LitStr>,
    pub(crate) ui_visibility: Option<Vec<LitStr>>,
}

impl Parse for ToolAttr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attr = ToolAttr::default();
        parse_keys(input, TOOL, &KEYS, |_, key, input| {
            match key {
                "name" => attr.name = Some(string_literal(input, key)?),
                "title" => attr.title = Some(string_literal(input, key)?),
                "description" => attr.description = Some(string_literal(input, key)?),
                "input_schema" => attr.input_schema = Some(input.parse()?),
                "output_schema" => attr.output_schema = Some(input.parse()?),
                "annotations" => attr.annotations = Some(input.parse()?),
                "icons" => attr.icons = Some(input.parse()?),
                "meta" => attr.meta = Some(input.parse()?),
                "scopes" => attr.scopes = Some(scopes_literal(input, key)?),
                "task" => attr.task = Some(string_literal(input, key)?),
                "task_retries" => attr.task_retries = Some(u32_literal(input, key)?),
                "ui" => attr.ui = Some(string_literal(input, key)?),
                "ui_visibility" => attr.ui_visibility = Some(scopes_literal(input, key)?),
                _ => unreachable!("checked against KEYS"),
            }
            Ok(())
        })?;
        Ok(attr)
    }
}

impl ToolAttr {
    /// Applies the definition rules (shared with the registry through
    /// `snodo-rules`) and returns every violation, each on its own tokens.
    pub(crate) fn check(&self, default_name: (&str, Span)) -> Vec<syn::Error> {
        let mut errors = Vec::new();
        let (name, span) = match &self.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (default_name.0.to_string(), default_name.1),
        };
        if let Err(e) = snodo_rules::check_tool_name(&name) {
            errors.push(syn::Error::new(span, e.message));
        }
        if let Some(task) = &self.task
            && !matches!(task.value().as_str(), "never" | "optional" | "required")
        {
            errors.push(syn::Error::new(
                task.span(),
                "`task` is \"never\", \"optional\" (a task when the client allows it) or \"required\"",
            ));
        }
        if let Some(schema) = &self.input_schema
            && let Err(e) = snodo_rules::check_input_schema(&schema.to_value())
        {
            errors.push(rule_error(schema, "input_schema", &e));
        }
        if let Some(schema) = &self.output_schema
            && let Err(e) = snodo_rules::check_output_schema(&schema.to_value())
        {
            errors.push(rule_error(schema, "output_schema", &e));
        }
        expect_object("annotations", self.annotations.as_ref(), &mut errors);
        expect_object("meta", self.meta.as_ref(), &mut errors);
        expect_icons(self.icons.as_ref(), &mut errors);
        self.check_ui(&mut errors);
        errors
    }

    /// `ui` is a `ui://` URI that `meta` does not also set; `ui_visibility`
    /// comes with `ui` and names `"model"` and `"app"` only.
    fn check_ui(&self, errors: &mut Vec<syn::Error>) {
        if let Some(ui) = &self.ui {
            let uri = ui.value();
            if !uri.starts_with("ui://") || uri.len() == "ui://".len() {
                errors.push(syn::Error::new(
                    ui.span(),
                    "`ui` is the app's ui:// URI, e.g. \"ui://dice/app.html\"",
                ));
            }
            if let Some(meta) = &self.meta
                && meta.to_value().get("ui").is_some()
            {
                errors.push(
                    meta.range
                        .error("`meta` sets `ui`, which the `ui` key owns"),
                );
            }
        }
        if let Some(visibility) = &self.ui_visibility {
            if self.ui.is_none()
                && let Some(first) = visibility.first()
            {
                errors.push(syn::Error::new(first.span(), "`ui_visibility` needs `ui`"));
            }
            if visibility.is_empty() {
                errors.push(syn::Error::new(
                    Span::call_site(),
                    "`ui_visibility` names \"model\", \"app\" or both",
                ));
            }
            for v in visibility {
                if !matches!(v.value().as_str(), "model" | "app") {
                    errors.push(syn::Error::new(
                        v.span(),
                        "`ui_visibility` names \"model\", \"app\" or both",
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;
    use quote::quote;

    fn parse(tokens: TokenStream) -> syn::Result<ToolAttr> {
        syn::parse2(tokens)
    }

    fn check(tokens: TokenStream) -> Vec<String> {
        parse(tokens)
            .unwrap()
            .check(("f", Span::call_site()))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn parses_every_key() {
        let attr = parse(quote! {
            name = "n", title = "T", description = "D",
            input_schema = {"type": "object"}, output_schema = true,
            annotations = {"readOnlyHint": true}, icons = [{"src": "x"}], meta = {"k": 1},
        })
        .unwrap();
        assert_eq!(attr.name.unwrap().value(), "n");
        assert_eq!(attr.title.unwrap().value(), "T");
        assert_eq!(attr.description.unwrap().value(), "D");
        assert_eq!(attr.output_schema.unwrap().to_json(), "true");
        assert_eq!(attr.icons.unwrap().to_json(), r#"[{"src":"x"}]"#);
    }

    #[test]
    fn an_empty_attribute_is_fine() {
        let attr = parse(quote! {}).unwrap();
        assert!(attr.name.is_none() && attr.input_schema.is_none());
    }

    #[test]
    fn refuses_unknown_duplicate_and_malformed_keys() {
        let e = parse(quote! { descr = "x" }).err().unwrap().to_string();
        assert!(e.starts_with("unknown key `descr`"), "{e}");
        let e = parse(quote! { name = "a", name = "b" })
            .err()
            .unwrap()
            .to_string();
        assert_eq!(e, "duplicate key `name` in #[snodo::tool]");
        let e = parse(quote! { name "a" }).err().unwrap().to_string();
        assert_eq!(e, "expected `=` after `name`");
        let e = parse(quote! { name = "a" title = "b" })
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("expected `,`"), "{e}");
    }

    #[test]
    fn string_keys_need_string_literals() {
        for tokens in [
            quote! { description = 42 },
            quote! { title = concat!("a", "b") },
            quote! { name = NAME },
            quote! { description = "x"suffix },
        ] {
            let e = parse(tokens.clone()).err().unwrap().to_string();
            assert!(e.ends_with("must be a string literal"), "{tokens}: {e}");
        }
    }

    #[test]
    fn applies_the_shared_rules() {
        assert!(check(quote! { input_schema = {"type": "object"} }).is_empty());
        assert_eq!(
            check(quote! { name = "a b" }),
            ["tool name may only contain A-Z, a-z, 0-9, '_', '-' and '.' (found ' ')"]
        );
        assert_eq!(
            check(quote! { input_schema = {"type": "string"} }),
            ["input schema must declare \"type\": \"object\" at its root (at /type)"]
        );
        assert_eq!(
            check(quote! { input_schema = ["type"] }),
            ["input schema must be a JSON object"]
        );
        assert_eq!(
            check(quote! { output_schema = "object" }),
            ["output schema must be a JSON object or a boolean"]
        );
        assert!(check(quote! { output_schema = false }).is_empty());
        assert_eq!(
            check(quote! { input_schema = {"type": "object", "x-mcp-header": "A"} }),
            ["`input_schema`: x-mcp-header may not annotate the root schema (at /x-mcp-header)"]
        );
        assert_eq!(
            check(quote! { annotations = [], meta = 1, icons = {} }),
            [
                "`annotations` must be a JSON object, found an array",
                "`meta` must be a JSON object, found a number",
                "`icons` must be a JSON array of icon objects, found an object",
            ]
        );
    }

    #[test]
    fn checks_the_default_name_too() {
        let errors = parse(quote! {})
            .unwrap()
            .check(("caf\u{e9}", Span::call_site()));
        assert_eq!(errors.len(), 1);
    }
}
