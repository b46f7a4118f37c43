//! `#[snodo::tool]`: an `async fn` becomes a unit struct implementing `snodo::Tool`.
//!
//! ```text
//! #[snodo::tool(description = "Greets")]            #[derive(Debug, Clone, Copy, Default)]
//! pub async fn greet(args: Arguments)        ==>    pub struct greet;
//!     -> CallResult { body }                        async fn __snodo_tool_greet_impl(args: Arguments)
//!                                                       -> CallResult { body }
//!                                                   impl ::snodo::Tool for greet { ... }
//! ```
//!
//! When the attribute or the signature is wrong, the errors are emitted together
//! with a stub of the struct, so that code naming the tool (`.tool(greet)`) does
//! not add errors of its own.

mod attr;
mod signature;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn, LitStr};

use crate::common::{self, Parts, json_expr, optional_json, optional_str};
use crate::json::Node;
use attr::ToolAttr;
use signature::{TOOL, ToolSignature};

/// Expands the attribute; errors become `compile_error!` invocations.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    common::expand(
        TOOL,
        attr,
        item,
        |attr: &ToolAttr, parts| attr.check((&parts.default_name, parts.ident.span())),
        generate,
        stub,
    )
}

fn generate(attr: &ToolAttr, sig: &ToolSignature, func: &ItemFn, parts: &Parts) -> TokenStream {
    let ident = &parts.ident;
    let cfgs = &parts.cfgs;
    let inner = parts.inner_ident(TOOL);
    let inner_fn = parts.inner_fn(TOOL, func);

    let name = parts.name(attr.name.as_ref());
    let description = parts.description(attr.description.as_ref());
    let title = optional_str("title", attr.title.as_ref());

    let input_text = schema_text("input_schema_text", attr.input_schema.as_ref());
    let output_text = schema_text("output_schema_text", attr.output_schema.as_ref());
    let input_schema = match &attr.input_schema {
        Some(node) => json_expr(node),
        None => {
            let implied = sig.params.iter().map(|ty| {
                quote_spanned! {ty.span()=> <#ty as ::snodo::handler::InputSchema>::input_schema() }
            });
            quote! { ::snodo::__private::input_schema(&[#(#implied),*]) }
        }
    };
    let output = &sig.output;
    let output_schema = match &attr.output_schema {
        Some(node) => optional_json("output_schema", Some(node)),
        None => quote! {
            fn output_schema(&self) -> ::core::option::Option<::snodo::__private::serde_json::Value> {
                #[allow(unused_imports)]
                use ::snodo::__private::{DerivedOutput as _, NoOutput as _};
                (&&::snodo::__private::OutputProbe::<#output>::new()).output_schema()
            }
        },
    };
    let annotations = optional_json("annotations", attr.annotations.as_ref());
    let icons = optional_json("icons", attr.icons.as_ref());
    let meta = match &attr.ui {
        None => optional_json("meta", attr.meta.as_ref()),
        Some(uri) => {
            let user = match &attr.meta {
                Some(node) => {
                    let value = common::json_expr(node);
                    quote!(::core::option::Option::Some(#value))
                }
                None => quote!(::core::option::Option::None),
            };
            let visibility = attr.ui_visibility.as_ref().map(|list| {
                let each = list.iter().map(|v| match v.value().as_str() {
                    "app" => quote!(::snodo::apps::Visibility::App),
                    _ => quote!(::snodo::apps::Visibility::Model),
                });
                quote!(.visibility([#(#each),*]))
            });
            quote! {
                fn meta(&self) -> ::core::option::Option<::snodo::__private::serde_json::Value> {
                    ::core::option::Option::Some(
                        ::snodo::apps::ToolUi::new(#uri)#visibility.into_meta(#user),
                    )
                }
            }
        }
    };
    let scopes = common::required_scopes(attr.scopes.as_ref());
    let needs = common::state_needs(sig, &quote!(::snodo::Arguments));
    let task = attr.task.as_ref().map(|lit| {
        let variant = match lit.value().as_str() {
            "optional" => quote!(Optional),
            "required" => quote!(Required),
            _ => quote!(Never),
        };
        quote! {
            fn task_support(&self) -> ::snodo::task::TaskSupport {
                ::snodo::task::TaskSupport::#variant
            }
        }
    });
    let task_retries = attr.task_retries.as_ref().map(|n| {
        quote! {
            fn task_retries(&self) -> u32 {
                #n
            }
        }
    });

    let args_var = Ident::new("__snodo_args", Span::call_site());
    let cx_var = Ident::new("__snodo_cx", Span::call_site());
    let (extract, call_args) = common::extract_params(
        sig,
        &quote!(::snodo::Arguments),
        &args_var,
        &cx_var,
        |rejection| quote! { #rejection.into_call_result() },
    );
    let convert = quote_spanned! {output.span()=>
        ::snodo::IntoCallResult::into_call_result(__snodo_output)
    };

    let struct_decl = parts.struct_decl();
    quote! {
        #struct_decl

        #inner_fn

        #(#cfgs)*
        impl ::snodo::Tool for #ident {
            fn name(&self) -> &str {
                #name
            }

            #title
            #description

            fn input_schema(&self) -> ::snodo::__private::serde_json::Value {
                #input_schema
            }

            #input_text
            #output_schema
            #output_text
            #annotations
            #icons
            #meta
            #scopes
            #needs
            #task
            #task_retries

            async fn call(
                &self,
                #args_var: ::snodo::Arguments,
                #cx_var: ::snodo::Context,
            ) -> ::snodo::CallResult {
                #(#extract)*
                let __snodo_output = #inner(#(#call_args),*).await;
                #convert
            }
        }
    }
}

/// `fn NAME(&self) -> Option<&str>` returning the schema's text as written,
/// or nothing.
fn schema_text(name: &str, node: Option<&Node>) -> TokenStream {
    let Some(node) = node else {
        return TokenStream::new();
    };
    let method = Ident::new(name, Span::call_site());
    let text = LitStr::new(&node.to_json(), Span::call_site());
    quote! {
        fn #method(&self) -> ::core::option::Option<&str> {
            ::core::option::Option::Some(#text)
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
        impl ::snodo::Tool for #ident {
            fn name(&self) -> &str {
                #name
            }

            fn input_schema(&self) -> ::snodo::__private::serde_json::Value {
                ::core::unreachable!()
            }

            async fn call(&self, _: ::snodo::Arguments, _: ::snodo::Context) -> ::snodo::CallResult {
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

    #[test]
    fn emits_a_struct_an_inner_fn_and_the_impl() {
        let out = expand_str(
            quote! { description = "Greets", input_schema = {"type": "object", "required": ["name"]} },
            quote! {
                /// Docs stay on the struct.
                pub async fn greet(args: Arguments, _cx: Context) -> CallResult { body() }
            },
        );
        assert!(out.contains("pub struct greet ;"), "{out}");
        assert!(
            out.contains("async fn __snodo_tool_greet_impl (args : Arguments , _cx : Context)"),
            "{out}"
        );
        assert!(out.contains("impl :: snodo :: Tool for greet"), "{out}");
        assert!(
            out.contains(r#"static_json ("{\"type\":\"object\",\"required\":[\"name\"]}")"#),
            "{out}"
        );
        assert!(out.contains("\"Greets\""), "{out}");
        assert!(out.contains("Docs stay on the struct."), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn parameters_are_extracted_by_trait_in_order() {
        let out = expand_str(
            quote! {},
            quote! { async fn add(Args(Sum { a, b }): Args<Sum>) -> String { todo!() } },
        );
        assert!(
            out.contains("< Args < Sum > as :: snodo :: handler :: FromCall < :: snodo :: Arguments >> :: from_call"),
            "{out}"
        );
        assert!(
            out.contains("__snodo_rejection . into_call_result ()"),
            "{out}"
        );
        assert!(
            out.contains(
                "< Args < Sum > as :: snodo :: handler :: InputSchema > :: input_schema ()"
            ),
            "{out}"
        );
        assert!(out.contains("OutputProbe :: < String >"), "{out}");
    }

    #[test]
    fn without_schema_or_parameters_the_schema_is_implied_by_none() {
        let out = expand_str(
            quote! {},
            quote! { async fn ping() -> &'static str { "pong" } },
        );
        assert!(out.contains("input_schema (& [])"), "{out}");
        assert!(
            out.contains("fn name (& self) -> & str { \"ping\" }"),
            "{out}"
        );
    }

    #[test]
    fn the_doc_comment_is_the_default_description() {
        let out = expand_str(
            quote! {},
            quote! {
                #[doc = " First line."]
                #[doc = "   indented"]
                #[doc = ""]
                #[doc = " Second paragraph."]
                #[doc = ""]
                async fn f() -> String { todo!() }
            },
        );
        assert!(
            out.contains(r#"Some ("First line.\n  indented\n\nSecond paragraph.")"#),
            "{out}"
        );
        let out = expand_str(
            quote! { description = "Wins" },
            quote! { #[doc = " Loses"] async fn f() -> String { todo!() } },
        );
        assert!(out.contains(r#"Some ("Wins")"#), "{out}");
    }

    #[test]
    fn raw_identifiers_name_the_tool_without_the_prefix() {
        let out = expand_str(
            quote! {},
            quote! { async fn r#match() -> String { todo!() } },
        );
        assert!(out.contains("\"match\""), "{out}");
        assert!(out.contains("__snodo_tool_match_impl"), "{out}");
    }

    #[test]
    fn errors_come_with_a_stub_and_are_all_reported() {
        let out = expand_str(
            quote! { description = 42 },
            quote! { fn f(x: &u32) -> String { todo!() } },
        );
        assert_eq!(out.matches("compile_error").count(), 3, "{out}");
        assert!(out.contains("struct f ;"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }

    #[test]
    fn only_functions_are_accepted() {
        let out = expand_str(quote! {}, quote! { struct S; });
        assert!(out.contains("goes on an `async fn`"), "{out}");
    }
}
