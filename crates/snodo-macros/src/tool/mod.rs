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
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, Ident, ItemFn, Lit, LitStr, Meta, Visibility};

use crate::json::Node;
use attr::ToolAttr;
use signature::{Param, ToolSignature};

/// Expands the attribute; errors become `compile_error!` invocations.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => {
            return syn::Error::new(
                e.span(),
                format!("#[snodo::tool] goes on an `async fn` ({e})"),
            )
            .into_compile_error();
        }
    };
    let parts = Parts::of(&func);
    match build(attr, &func, &parts) {
        Ok(tokens) => tokens,
        Err(errors) => {
            let mut out = stub(&parts);
            for e in errors {
                out.extend(e.into_compile_error());
            }
            out
        }
    }
}

/// The pieces of the function every expansion (full or stub) needs.
struct Parts {
    vis: Visibility,
    ident: Ident,
    /// The name a tool gets when `name` is absent: the identifier, unraw.
    default_name: String,
    docs: Vec<Attribute>,
    cfgs: Vec<Attribute>,
    others: Vec<Attribute>,
}

impl Parts {
    fn of(func: &ItemFn) -> Self {
        let mut docs = Vec::new();
        let mut cfgs = Vec::new();
        let mut others = Vec::new();
        for a in &func.attrs {
            if a.path().is_ident("doc") {
                docs.push(a.clone());
            } else if a.path().is_ident("cfg") {
                cfgs.push(a.clone());
            } else {
                others.push(a.clone());
            }
        }
        Parts {
            vis: func.vis.clone(),
            ident: func.sig.ident.clone(),
            default_name: func.sig.ident.unraw().to_string(),
            docs,
            cfgs,
            others,
        }
    }

    /// The description given by doc comments: common indentation removed,
    /// surrounding blank lines trimmed. `None` without literal doc comments.
    fn doc_text(&self) -> Option<String> {
        let mut lines: Vec<String> = Vec::new();
        for a in &self.docs {
            if let Meta::NameValue(nv) = &a.meta
                && let Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) = &nv.value
            {
                // `///` gives one attribute per line, an empty one for a blank line.
                lines.extend(s.value().split('\n').map(str::to_string));
            }
        }
        let indent = lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()?;
        let text = lines
            .iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end())
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.trim_matches('\n').to_string();
        (!text.is_empty()).then_some(text)
    }

    /// The `struct NAME;` declaration with the function's docs and visibility.
    fn struct_decl(&self) -> TokenStream {
        let Parts {
            vis,
            ident,
            docs,
            cfgs,
            ..
        } = self;
        quote! {
            #(#docs)*
            #(#cfgs)*
            #[allow(non_camel_case_types)]
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default)]
            #vis struct #ident;
        }
    }
}

fn build(attr: TokenStream, func: &ItemFn, parts: &Parts) -> Result<TokenStream, Vec<syn::Error>> {
    let mut errors = Vec::new();
    let attr = match syn::parse2::<ToolAttr>(attr) {
        Ok(attr) => {
            errors.extend(attr.check((&parts.default_name, parts.ident.span())));
            Some(attr)
        }
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let sig = match signature::analyze(&func.sig) {
        Ok(sig) => Some(sig),
        Err(es) => {
            errors.extend(es);
            None
        }
    };
    match (attr, sig) {
        (Some(attr), Some(sig)) if errors.is_empty() => Ok(generate(&attr, &sig, func, parts)),
        _ => Err(errors),
    }
}

fn json_expr(node: &Node) -> TokenStream {
    let text = LitStr::new(&node.to_json(), Span::call_site());
    quote! { ::snodo::__private::static_json(#text) }
}

fn optional_json(name: &str, node: Option<&Node>) -> TokenStream {
    let Some(node) = node else {
        return TokenStream::new();
    };
    let method = format_ident!("{name}");
    let value = json_expr(node);
    quote! {
        fn #method(&self) -> ::core::option::Option<::snodo::__private::serde_json::Value> {
            ::core::option::Option::Some(#value)
        }
    }
}

fn optional_str(name: &str, lit: Option<&LitStr>) -> TokenStream {
    let Some(lit) = lit else {
        return TokenStream::new();
    };
    let method = format_ident!("{name}");
    quote! {
        fn #method(&self) -> ::core::option::Option<&str> {
            ::core::option::Option::Some(#lit)
        }
    }
}

fn generate(attr: &ToolAttr, sig: &ToolSignature, func: &ItemFn, parts: &Parts) -> TokenStream {
    let ident = &parts.ident;
    let cfgs = &parts.cfgs;
    let others = &parts.others;
    let inner = format_ident!("__snodo_tool_{}_impl", parts.default_name);

    // The user's function, kept whole under a private name.
    let mut inner_sig = func.sig.clone();
    inner_sig.ident = inner.clone();
    let block = &func.block;
    let inner_fn = quote! {
        #(#cfgs)*
        #(#others)*
        #inner_sig #block
    };

    let name = match &attr.name {
        Some(lit) => lit.clone(),
        None => LitStr::new(&parts.default_name, ident.span()),
    };
    let doc_text = parts.doc_text().map(|t| LitStr::new(&t, Span::call_site()));
    let description = optional_str(
        "description",
        attr.description.as_ref().or(doc_text.as_ref()),
    );
    let title = optional_str("title", attr.title.as_ref());

    let input_schema = match (&attr.input_schema, sig.args_type()) {
        (Some(node), _) => json_expr(node),
        (None, Some(ty)) => quote_spanned! {ty.span()=> ::snodo::__private::schema_for::<#ty>() },
        (None, None) => quote! { ::snodo::__private::static_json("{\"type\":\"object\"}") },
    };
    let output_schema = optional_json("output_schema", attr.output_schema.as_ref());
    let annotations = optional_json("annotations", attr.annotations.as_ref());
    let icons = optional_json("icons", attr.icons.as_ref());
    let meta = optional_json("meta", attr.meta.as_ref());

    let args_var = Ident::new("__snodo_args", Span::call_site());
    let cx_var = Ident::new("__snodo_cx", Span::call_site());
    let typed_var = Ident::new("__snodo_typed", Span::call_site());
    let args_pat = if sig.needs_arguments() {
        args_var.to_token_stream()
    } else {
        quote!(_)
    };
    let cx_pat = if sig.takes_context() {
        cx_var.to_token_stream()
    } else {
        quote!(_)
    };
    let typed = sig.args_type().map(|ty| {
        quote_spanned! {ty.span()=>
            let #typed_var = match ::snodo::Args::<#ty>::from_arguments(&#args_var) {
                ::core::result::Result::Ok(typed) => typed,
                ::core::result::Result::Err(error) => return ::snodo::__private::args_error(error),
            };
        }
    });
    let call_args = sig.params.iter().map(|p| match p {
        Param::Arguments => args_var.to_token_stream(),
        Param::Context => cx_var.to_token_stream(),
        Param::Args(_) => typed_var.to_token_stream(),
    });
    let output = &sig.output;
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

            #output_schema
            #annotations
            #icons
            #meta

            async fn call(
                &self,
                #args_pat: ::snodo::Arguments,
                #cx_pat: ::snodo::Context,
            ) -> ::snodo::CallResult {
                #typed
                let __snodo_output = #inner(#(#call_args),*).await;
                #convert
            }
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
    fn typed_arguments_are_deserialized_first() {
        let out = expand_str(
            quote! {},
            quote! { async fn add(Args(Sum { a, b }): Args<Sum>) -> String { todo!() } },
        );
        assert!(
            out.contains(":: snodo :: Args :: < Sum > :: from_arguments (& __snodo_args)"),
            "{out}"
        );
        assert!(out.contains("args_error (error)"), "{out}");
        assert!(out.contains("schema_for :: < Sum > ()"), "{out}");
        assert!(out.contains("_ : :: snodo :: Context"), "{out}");
    }

    #[test]
    fn without_schema_or_typed_arguments_the_schema_is_an_object() {
        let out = expand_str(
            quote! {},
            quote! { async fn ping() -> &'static str { "pong" } },
        );
        assert!(
            out.contains(r#"static_json ("{\"type\":\"object\"}")"#),
            "{out}"
        );
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
            quote! { fn f(x: u32) -> String { todo!() } },
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
