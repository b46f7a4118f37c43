//! `#[snodo::prompt]`: an `async fn` becomes a unit struct implementing
//! `snodo::prompt::Prompt`.
//!
//! ```text
//! #[snodo::prompt(arguments = [{"name": "topic"}])]       pub struct brief;
//! pub async fn brief(args: PromptArguments)        ==>    async fn __snodo_prompt_brief_impl(args: PromptArguments)
//!     -> String { body }                                      -> String { body }
//!                                                         impl ::snodo::prompt::Prompt for brief { ... }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn, LitStr};

use crate::common::{
    self, COMPLETE_HELP, FnSignature, Macro, Parts, completion, expect_icons, expect_object,
    fn_path, optional_json, optional_str, parse_keys, rule_error, scopes_literal, string_literal,
};
use crate::json::{Kind, Node};

/// The prompt macro, for messages.
pub(crate) const PROMPT: Macro = Macro {
    kind: "prompt",
    params_help: "a prompt function takes, in any order, extractors such as \
         `snodo::prompt::PromptArguments` and `snodo::Context`",
    returns_help: "`PromptResult`, `Vec<PromptMessage>`, `PromptMessage`, `String`, \
         `Result<String, E>`... (any type implementing `snodo::prompt::IntoPromptResult`)",
};

/// Every key the attribute accepts, in the order the docs list them.
const KEYS: [&str; 8] = [
    "name",
    "title",
    "description",
    "arguments",
    "icons",
    "meta",
    "scopes",
    "complete",
];

/// The parsed arguments of `#[snodo::prompt(...)]`.
#[derive(Default)]
pub(crate) struct PromptAttr {
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    arguments: Option<Node>,
    icons: Option<Node>,
    meta: Option<Node>,
    scopes: Option<Vec<LitStr>>,
    complete: Option<(Ident, syn::Path)>,
}

impl Parse for PromptAttr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attr = PromptAttr::default();
        parse_keys(input, PROMPT, &KEYS, |ident, key, input| {
            match key {
                "name" => attr.name = Some(string_literal(input, key)?),
                "title" => attr.title = Some(string_literal(input, key)?),
                "description" => attr.description = Some(string_literal(input, key)?),
                "arguments" => attr.arguments = Some(input.parse()?),
                "icons" => attr.icons = Some(input.parse()?),
                "meta" => attr.meta = Some(input.parse()?),
                "scopes" => attr.scopes = Some(scopes_literal(input, key)?),
                "complete" => {
                    attr.complete = Some((ident.clone(), fn_path(input, key, COMPLETE_HELP)?));
                }
                _ => unreachable!("checked against KEYS"),
            }
            Ok(())
        })?;
        Ok(attr)
    }
}

impl PromptAttr {
    /// Applies the definition rules (the argument rules are shared with the
    /// registry through `snodo-rules`) and returns every violation, each on
    /// its own tokens.
    fn check(&self) -> Vec<syn::Error> {
        let name = self.name.as_ref().map(LitStr::value);
        let arguments = self.arguments.as_ref().map(Node::to_value);
        let shape = snodo_rules::PromptShape {
            // The function's name is never empty; only `name = ""` is checked.
            name: name.as_deref().unwrap_or("_"),
            arguments: arguments.as_ref(),
            completes: self.complete.is_some(),
        };
        let mut errors = Vec::new();
        for e in snodo_rules::check_prompt(&shape).err().unwrap_or_default() {
            errors.push(
                match (
                    e.pointer.as_str(),
                    &self.name,
                    &self.complete,
                    &self.arguments,
                ) {
                    ("/name", Some(name), _, _) => syn::Error::new(name.span(), e.message),
                    ("/complete", _, Some((key, _)), _) => syn::Error::new(key.span(), e.message),
                    (pointer, _, _, Some(node)) if pointer.starts_with("/arguments") => {
                        let inner = snodo_rules::RuleError {
                            pointer: pointer["/arguments".len()..].to_string(),
                            message: e.message,
                        };
                        rule_error(node, "arguments", &inner)
                    }
                    _ => syn::Error::new(Span::call_site(), e.message),
                },
            );
        }
        expect_object("meta", self.meta.as_ref(), &mut errors);
        expect_icons(self.icons.as_ref(), &mut errors);
        errors
    }

    /// The declared arguments, once checked.
    fn declared(&self) -> Vec<Argument> {
        let Some(Node {
            kind: Kind::Array(items),
            ..
        }) = &self.arguments
        else {
            return Vec::new();
        };
        items.iter().filter_map(Argument::of).collect()
    }
}

/// One declared argument.
struct Argument {
    name: String,
    title: Option<String>,
    description: Option<String>,
    required: bool,
}

impl Argument {
    fn of(node: &Node) -> Option<Self> {
        let Kind::Object(members) = &node.kind else {
            return None;
        };
        let string = |key: &str| {
            members
                .iter()
                .find(|m| m.key == key)
                .and_then(|m| match &m.value.kind {
                    Kind::String(s) => Some(s.clone()),
                    _ => None,
                })
        };
        let required = members
            .iter()
            .any(|m| m.key == "required" && matches!(m.value.kind, Kind::Bool(true)));
        Some(Argument {
            name: string("name")?,
            title: string("title"),
            description: string("description"),
            required,
        })
    }

    /// `PromptArgument::required("name").with_title(..).with_description(..)`.
    fn to_tokens(&self) -> TokenStream {
        let name = LitStr::new(&self.name, Span::call_site());
        let constructor = if self.required {
            quote! { required }
        } else {
            quote! { optional }
        };
        let title = self.title.as_ref().map(|t| {
            let t = LitStr::new(t, Span::call_site());
            quote! { .with_title(#t) }
        });
        let description = self.description.as_ref().map(|d| {
            let d = LitStr::new(d, Span::call_site());
            quote! { .with_description(#d) }
        });
        quote! {
            ::snodo::prompt::PromptArgument::#constructor(#name) #title #description
        }
    }
}

/// Expands the attribute; errors become `compile_error!` invocations.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    common::expand(
        PROMPT,
        attr,
        item,
        |attr: &PromptAttr, _| attr.check(),
        generate,
        stub,
    )
}

fn generate(attr: &PromptAttr, sig: &FnSignature, func: &ItemFn, parts: &Parts) -> TokenStream {
    let ident = &parts.ident;
    let cfgs = &parts.cfgs;
    let inner = parts.inner_ident(PROMPT);
    let inner_fn = parts.inner_fn(PROMPT, func);

    let name = parts.name(attr.name.as_ref());
    let title = optional_str("title", attr.title.as_ref());
    let description = parts.description(attr.description.as_ref());
    let declared = attr.declared();
    let arguments = (!declared.is_empty()).then(|| {
        let items = declared.iter().map(Argument::to_tokens);
        quote! {
            fn arguments(&self) -> ::std::vec::Vec<::snodo::prompt::PromptArgument> {
                ::std::vec![#(#items),*]
            }
        }
    });
    let icons = optional_json("icons", attr.icons.as_ref());
    let meta = optional_json("meta", attr.meta.as_ref());
    let scopes = common::required_scopes(attr.scopes.as_ref());
    let needs = common::state_needs(sig, &quote!(::snodo::prompt::PromptArguments));
    let complete = completion(attr.complete.as_ref().map(|(_, path)| path));

    let args_var = Ident::new("__snodo_args", Span::call_site());
    let cx_var = Ident::new("__snodo_cx", Span::call_site());
    let (extract, call_args) = common::extract_params(
        sig,
        &quote!(::snodo::prompt::PromptArguments),
        &args_var,
        &cx_var,
        |rejection| {
            quote! {
                ::core::result::Result::Err(::core::convert::Into::into(#rejection.into_error()))
            }
        },
    );
    let output = &sig.output;
    let convert = quote_spanned! {output.span()=>
        ::snodo::prompt::IntoPromptResult::into_prompt_result(__snodo_output)
    };

    let struct_decl = parts.struct_decl();
    quote! {
        #struct_decl

        #inner_fn

        #(#cfgs)*
        impl ::snodo::prompt::Prompt for #ident {
            fn name(&self) -> &str {
                #name
            }

            #title
            #description
            #arguments
            #icons
            #meta
            #scopes
            #needs

            async fn get(
                &self,
                #args_var: ::snodo::prompt::PromptArguments,
                #cx_var: ::snodo::Context,
            ) -> ::core::result::Result<::snodo::prompt::PromptResult, ::snodo::HandlerError> {
                #(#extract)*
                let __snodo_output = #inner(#(#call_args),*).await;
                #convert
            }

            #complete
        }
    }
}

/// The struct and a placeholder impl, emitted beside the errors.
fn stub(parts: &Parts) -> TokenStream {
    let ident = &parts.ident;
    let cfgs = &parts.cfgs;
    let name = LitStr::new(&parts.default_name, ident.span());
    let struct_decl = parts.struct_decl();
    quote! {
        #struct_decl

        #(#cfgs)*
        impl ::snodo::prompt::Prompt for #ident {
            fn name(&self) -> &str {
                #name
            }

            async fn get(
                &self,
                _: ::snodo::prompt::PromptArguments,
                _: ::snodo::Context,
            ) -> ::core::result::Result<::snodo::prompt::PromptResult, ::snodo::HandlerError> {
                ::core::unreachable!()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(attr: TokenStream, item: TokenStream) -> String {
        expand(attr, item).to_string()
    }

    fn check(attr: TokenStream) -> Vec<String> {
        syn::parse2::<PromptAttr>(attr)
            .map(|a| a.check().iter().map(ToString::to_string).collect())
            .unwrap_or_else(|e| vec![e.to_string()])
    }

    #[test]
    fn emits_a_struct_an_inner_fn_and_the_impl() {
        let out = expand_str(
            quote! {
                title = "Brief",
                arguments = [
                    {"name": "topic", "title": "Topic", "description": "What about", "required": true},
                    {"name": "tone"},
                ],
                complete = suggest,
            },
            quote! {
                /// Writes a brief.
                pub async fn brief(args: PromptArguments) -> String { body() }
            },
        );
        assert!(out.contains("pub struct brief ;"), "{out}");
        assert!(
            out.contains("async fn __snodo_prompt_brief_impl (args : PromptArguments)"),
            "{out}"
        );
        assert!(
            out.contains("impl :: snodo :: prompt :: Prompt for brief"),
            "{out}"
        );
        assert!(
            out.contains(
                ":: snodo :: prompt :: PromptArgument :: required (\"topic\") . with_title (\"Topic\") . with_description (\"What about\")"
            ),
            "{out}"
        );
        assert!(
            out.contains(":: snodo :: prompt :: PromptArgument :: optional (\"tone\")"),
            "{out}"
        );
        assert!(out.contains("Some (\"Writes a brief.\")"), "{out}");
        assert!(
            out.contains("FromCall < :: snodo :: prompt :: PromptArguments >> :: from_call"),
            "{out}"
        );
        assert!(
            out.contains("suggest (__snodo_variable , __snodo_value)"),
            "{out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn without_arguments_the_default_method_stays() {
        let out = expand_str(
            quote! {},
            quote! { async fn hello() -> &'static str { "hi" } },
        );
        assert!(!out.contains("fn arguments"), "{out}");
        assert!(
            out.contains("fn name (& self) -> & str { \"hello\" }"),
            "{out}"
        );
    }

    #[test]
    fn applies_the_argument_rules_at_their_place() {
        assert!(check(quote! { arguments = [] }).is_empty());
        for (attr, expected) in [
            (
                quote! { arguments = {"name": "a"} },
                "`arguments`: prompt arguments must be a JSON array",
            ),
            (
                quote! { arguments = [{"name": "a"}, {"name": "a"}] },
                "duplicate prompt argument name \"a\" (at /1/name)",
            ),
            (
                quote! { arguments = [{"name": ""}] },
                "must not be empty (at /0/name)",
            ),
            (
                quote! { arguments = [{"description": "x"}] },
                "needs a \"name\" (at /0)",
            ),
            (
                quote! { arguments = [{"name": "a", "required": "yes"}] },
                "must be a boolean (at /0/required)",
            ),
            (
                quote! { arguments = [{"name": "a", "default": 1}] },
                "unknown prompt argument member \"default\"",
            ),
            (
                quote! { complete = suggest },
                "declare the prompt's `arguments`",
            ),
            (quote! { name = "" }, "prompt name must not be empty"),
            (quote! { meta = [] }, "`meta` must be a JSON object"),
            (
                quote! { args = [] },
                "unknown key `args` in #[snodo::prompt]",
            ),
        ] {
            let errors = check(attr.clone());
            assert!(
                errors.iter().any(|e| e.contains(expected)),
                "{attr}: {errors:?}"
            );
        }
    }

    #[test]
    fn checks_the_signature() {
        let out = expand_str(
            quote! {},
            quote! { async fn f(args: &PromptArguments) -> String { todo!() } },
        );
        assert!(out.contains("by value"), "{out}");
        assert!(out.contains("a prompt function takes"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }
}
