//! `#[snodo::resource]`: an `async fn` becomes a unit struct implementing
//! `snodo::resource::Resource`.
//!
//! ```text
//! #[snodo::resource(uri_template = "docs://{page}")]     pub struct page;
//! pub async fn page(req: ReadRequest)            ==>     async fn __snodo_resource_page_impl(req: ReadRequest)
//!     -> String { body }                                     -> String { body }
//!                                                        impl ::snodo::resource::Resource for page { ... }
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn, LitInt, LitStr};

use crate::common::{
    self, COMPLETE_HELP, FnSignature, Macro, Parts, completion, expect_icons, expect_object,
    fn_path, optional_json, optional_str, parse_keys, scopes_literal, string_literal, u64_literal,
};
use crate::json::Node;

/// The resource macro, for messages.
pub(crate) const RESOURCE: Macro = Macro {
    kind: "resource",
    params_help: "a resource function takes, in any order, extractors such as \
         `snodo::resource::ReadRequest` and `snodo::Context`",
    returns_help: "`ReadResult`, `ResourceContents`, `Vec<ResourceContents>`, `String`, \
         `Result<String, E>`... (any type implementing `snodo::resource::IntoReadResult`)",
};

/// Every key the attribute accepts, in the order the docs list them.
const KEYS: [&str; 12] = [
    "uri",
    "uri_template",
    "name",
    "title",
    "description",
    "mime_type",
    "annotations",
    "size",
    "icons",
    "meta",
    "scopes",
    "complete",
];

/// The parsed arguments of `#[snodo::resource(...)]`, with the keys' spans
/// where a rule involving two keys is reported.
#[derive(Default)]
pub(crate) struct ResourceAttr {
    uri: Option<LitStr>,
    uri_template: Option<(Ident, LitStr)>,
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    mime_type: Option<LitStr>,
    annotations: Option<Node>,
    size: Option<(Ident, LitInt)>,
    icons: Option<Node>,
    meta: Option<Node>,
    scopes: Option<Vec<LitStr>>,
    complete: Option<(Ident, syn::Path)>,
}

impl Parse for ResourceAttr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attr = ResourceAttr::default();
        parse_keys(input, RESOURCE, &KEYS, |ident, key, input| {
            match key {
                "uri" => attr.uri = Some(string_literal(input, key)?),
                "uri_template" => {
                    attr.uri_template = Some((ident.clone(), string_literal(input, key)?));
                }
                "name" => attr.name = Some(string_literal(input, key)?),
                "title" => attr.title = Some(string_literal(input, key)?),
                "description" => attr.description = Some(string_literal(input, key)?),
                "mime_type" => attr.mime_type = Some(string_literal(input, key)?),
                "annotations" => attr.annotations = Some(input.parse()?),
                "size" => attr.size = Some((ident.clone(), u64_literal(input, key)?)),
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

impl ResourceAttr {
    /// A broken resource rule, on the tokens of the member its pointer names.
    fn rule_error(&self, e: &snodo_rules::RuleError) -> syn::Error {
        let span = match e.pointer.as_str() {
            "/uri" => self.uri.as_ref().map(LitStr::span),
            "/uri_template" => self.uri_template.as_ref().map(|(_, t)| t.span()),
            "/size" => self.size.as_ref().map(|(key, _)| key.span()),
            "/complete" => self.complete.as_ref().map(|(key, _)| key.span()),
            "/name" => self.name.as_ref().map(LitStr::span),
            // Both locations given: the second one; neither: the attribute.
            _ => self.uri_template.as_ref().map(|(key, _)| key.span()),
        };
        let message = if e.pointer.is_empty() && self.uri.is_none() {
            e.message
                .replace("a resource needs", "#[snodo::resource] needs")
        } else {
            e.message.clone()
        };
        syn::Error::new(span.unwrap_or_else(Span::call_site), message)
    }

    /// Applies the definition rules and returns every violation, each on its
    /// own tokens.
    fn check(&self) -> Vec<syn::Error> {
        let uri = self.uri.as_ref().map(LitStr::value);
        let template = self.uri_template.as_ref().map(|(_, t)| t.value());
        let name = self.name.as_ref().map(LitStr::value);
        let shape = snodo_rules::ResourceShape {
            // The function's name is never empty; only `name = ""` is checked.
            name: name.as_deref().unwrap_or("_"),
            uri: uri.as_deref(),
            uri_template: template.as_deref(),
            has_size: self.size.is_some(),
            completes: self.complete.is_some(),
        };
        let mut errors: Vec<syn::Error> = match snodo_rules::check_resource(&shape) {
            Ok(_) => Vec::new(),
            Err(broken) => broken.iter().map(|e| self.rule_error(e)).collect(),
        };
        expect_object("annotations", self.annotations.as_ref(), &mut errors);
        expect_object("meta", self.meta.as_ref(), &mut errors);
        expect_icons(self.icons.as_ref(), &mut errors);
        errors
    }
}

/// Expands the attribute; errors become `compile_error!` invocations.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    common::expand(
        RESOURCE,
        attr,
        item,
        |attr: &ResourceAttr, _| attr.check(),
        generate,
        stub,
    )
}

fn generate(attr: &ResourceAttr, sig: &FnSignature, func: &ItemFn, parts: &Parts) -> TokenStream {
    let ident = &parts.ident;
    let cfgs = &parts.cfgs;
    let inner = parts.inner_ident(RESOURCE);
    let inner_fn = parts.inner_fn(RESOURCE, func);

    let location = match (&attr.uri, &attr.uri_template) {
        (Some(uri), _) => optional_str("uri", Some(uri)),
        (None, Some((_, template))) => optional_str("uri_template", Some(template)),
        (None, None) => unreachable!("checked"),
    };
    let name = parts.name(attr.name.as_ref());
    let title = optional_str("title", attr.title.as_ref());
    let description = parts.description(attr.description.as_ref());
    let mime_type = optional_str("mime_type", attr.mime_type.as_ref());
    let annotations = optional_json("annotations", attr.annotations.as_ref());
    let size = attr.size.as_ref().map(|(_, size)| {
        quote! {
            fn size(&self) -> ::core::option::Option<u64> {
                ::core::option::Option::Some(#size)
            }
        }
    });
    let icons = optional_json("icons", attr.icons.as_ref());
    let meta = optional_json("meta", attr.meta.as_ref());
    let scopes = common::required_scopes(attr.scopes.as_ref());
    let needs = common::state_needs(sig, &quote!(::snodo::resource::ReadRequest));
    let complete = completion(attr.complete.as_ref().map(|(_, path)| path));

    let req_var = Ident::new("__snodo_req", Span::call_site());
    let cx_var = Ident::new("__snodo_cx", Span::call_site());
    let (extract, call_args) = common::extract_params(
        sig,
        &quote!(::snodo::resource::ReadRequest),
        &req_var,
        &cx_var,
        |rejection| {
            quote! {
                ::core::result::Result::Err(::core::convert::Into::into(#rejection.into_error()))
            }
        },
    );
    let output = &sig.output;
    let convert = quote_spanned! {output.span()=>
        ::snodo::resource::IntoReadResult::into_read_result(
            __snodo_output,
            &__snodo_uri,
            __snodo_mime_type,
        )
    };

    let struct_decl = parts.struct_decl();
    quote! {
        #struct_decl

        #inner_fn

        #(#cfgs)*
        impl ::snodo::resource::Resource for #ident {
            #location

            fn name(&self) -> &str {
                #name
            }

            #title
            #description
            #mime_type
            #annotations
            #size
            #icons
            #meta
            #scopes
            #needs

            async fn read(
                &self,
                #req_var: ::snodo::resource::ReadRequest,
                #cx_var: ::snodo::Context,
            ) -> ::core::result::Result<::snodo::resource::ReadResult, ::snodo::HandlerError> {
                #(#extract)*
                let __snodo_uri: ::std::string::String = #req_var.uri;
                let __snodo_mime_type = ::snodo::resource::Resource::mime_type(self);
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
        impl ::snodo::resource::Resource for #ident {
            fn name(&self) -> &str {
                #name
            }

            async fn read(
                &self,
                _: ::snodo::resource::ReadRequest,
                _: ::snodo::Context,
            ) -> ::core::result::Result<::snodo::resource::ReadResult, ::snodo::HandlerError> {
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

    fn errors(attr: TokenStream, item: TokenStream) -> Vec<String> {
        let out = expand_str(attr, item);
        out.split("compile_error ! { \"")
            .skip(1)
            .map(|e| e.split("\" }").next().unwrap_or_default().to_string())
            .collect()
    }

    fn check(attr: TokenStream) -> Vec<String> {
        errors(attr, quote! { async fn f() -> String { todo!() } })
    }

    #[test]
    fn emits_a_struct_an_inner_fn_and_the_impl() {
        let out = expand_str(
            quote! { uri = "docs://readme", mime_type = "text/markdown", size = 42 },
            quote! {
                /// The readme.
                pub async fn readme(req: ReadRequest, _cx: Context) -> String { body() }
            },
        );
        assert!(out.contains("pub struct readme ;"), "{out}");
        assert!(
            out.contains(
                "async fn __snodo_resource_readme_impl (req : ReadRequest , _cx : Context)"
            ),
            "{out}"
        );
        assert!(
            out.contains("impl :: snodo :: resource :: Resource for readme"),
            "{out}"
        );
        assert!(out.contains("fn uri (& self)"), "{out}");
        assert!(!out.contains("fn uri_template"), "{out}");
        assert!(out.contains("Some (\"text/markdown\")"), "{out}");
        assert!(out.contains("Some (42)"), "{out}");
        assert!(out.contains("Some (\"The readme.\")"), "{out}");
        assert!(
            out.contains("__snodo_resource_readme_impl (__snodo_p0 , __snodo_p1) . await"),
            "{out}"
        );
        assert!(
            out.contains("let __snodo_uri : :: std :: string :: String = __snodo_req . uri"),
            "{out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("fn completes"), "{out}");
    }

    #[test]
    fn a_template_with_completion() {
        let out = expand_str(
            quote! { uri_template = "docs://{page}", complete = crate::pages::suggest },
            quote! { async fn page(cx: Context) -> String { todo!() } },
        );
        assert!(out.contains("fn uri_template (& self)"), "{out}");
        assert!(
            out.contains("fn completes (& self) -> bool { true }"),
            "{out}"
        );
        assert!(
            out.contains("crate :: pages :: suggest (__snodo_variable , __snodo_value) . await"),
            "{out}"
        );
        // Without the request among the parameters, its URI is moved, not cloned.
        assert!(out.contains("= __snodo_req . uri ;"), "{out}");
        assert!(!out.contains("_ : :: snodo :: Context"), "{out}");
    }

    #[test]
    fn exactly_one_location() {
        let both = check(quote! { uri = "a:b", uri_template = "a:{b}" });
        assert_eq!(both.len(), 1);
        assert!(both[0].starts_with("give exactly one of"), "{both:?}");
        let neither = check(quote! { name = "x" });
        assert!(neither[0].contains("needs `uri"), "{neither:?}");
    }

    #[test]
    fn checks_uris_and_templates() {
        assert!(check(quote! { uri = "file:///etc/hosts" }).is_empty());
        assert!(check(quote! { uri = "readme.md" })[0].contains("must be an absolute URI"));
        assert!(check(quote! { uri = "docs://{page}" })[0].contains("write `uri_template"));
        assert!(check(quote! { uri_template = "file:///{+path}" }).is_empty());
        let frag = check(quote! { uri_template = "docs://x{#section}" });
        assert!(frag[0].contains("fragment expansion"), "{frag:?}");
        let reserved = check(quote! { uri_template = "docs://{page}{?uri}" });
        assert!(reserved[0].contains("`uri` is reserved"), "{reserved:?}");
        let meta = check(quote! { uri_template = "docs://{_meta}" });
        assert!(meta[0].contains("`_meta` is reserved"), "{meta:?}");
    }

    #[test]
    fn checks_size_and_complete_against_the_location() {
        assert!(check(quote! { uri = "a:b", size = 0 }).is_empty());
        let size = check(quote! { uri_template = "a:{b}", size = 1 });
        assert!(size[0].contains("fixed `uri` only"), "{size:?}");
        let complete = check(quote! { uri = "a:b", complete = suggest });
        assert!(
            complete[0].contains("needs a `uri_template`"),
            "{complete:?}"
        );
    }

    #[test]
    fn checks_value_shapes() {
        for (attr, expected) in [
            (
                quote! { uri = "a:b", size = -1 },
                "non-negative integer literal",
            ),
            (
                quote! { uri = "a:b", size = 1.5 },
                "non-negative integer literal",
            ),
            (
                quote! { uri = "a:b", size = 1u8 },
                "non-negative integer literal",
            ),
            (
                quote! { uri = "a:b", size = 18446744073709551616 },
                "non-negative integer literal",
            ),
            (
                quote! { uri = "a:b", complete = "suggest" },
                "must be the path of",
            ),
            (
                quote! { uri = "a:b", mime_type = text },
                "must be a string literal",
            ),
            (
                quote! { uri = "a:b", annotations = [] },
                "must be a JSON object",
            ),
            (
                quote! { uri = "a:b", icons = {} },
                "JSON array of icon objects",
            ),
            (quote! { uri = "a:b", name = "" }, "must not be empty"),
            (quote! { uri = "a:b", url = "x" }, "unknown key `url`"),
        ] {
            let errors = check(attr.clone());
            assert!(
                errors.iter().any(|e| e.contains(expected)),
                "{attr}: {errors:?}"
            );
        }
        assert!(check(quote! { uri = "a:b", size = 18446744073709551615u64 }).is_empty());
    }

    #[test]
    fn checks_the_signature() {
        let errors = errors(
            quote! { uri = "a:b" },
            quote! { fn f(req: &ReadRequest, args: impl Sized) {} },
        );
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].contains("needs an `async fn`"), "{errors:?}");
        assert!(
            errors[1].contains("take the parameter by value (`ReadRequest`)"),
            "{errors:?}"
        );
        assert!(errors[2].contains("cannot be generic"), "{errors:?}");
        assert!(
            errors[3].contains("a resource function must return a value"),
            "{errors:?}"
        );
    }

    #[test]
    fn errors_come_with_a_stub() {
        let out = expand_str(quote! {}, quote! { async fn f() -> String { todo!() } });
        assert!(out.contains("struct f ;"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }
}
