//! What the three attribute macros share: the pieces of the annotated
//! function, the `key = value` attribute syntax, the function-shape checks and
//! the code emitted for optional metadata.
//!
//! Each macro turns `async fn NAME(...)` into a unit struct `NAME`, the
//! function renamed `__snodo_<kind>_NAME_impl`, and an impl of its trait. When
//! the attribute or the signature is wrong, the errors are emitted together with
//! a stub of the struct and impl, so that code naming the component
//! (`.tool(greet)`) does not add errors of its own.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens as _, format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::parse::ParseStream;
use syn::spanned::Spanned as _;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, ItemFn, Lit, LitInt, LitStr, Meta, ReturnType,
    Signature, Token, Type, Visibility,
};

use crate::json::{Kind, Node};

/// Which macro is expanding, for messages and generated names.
#[derive(Clone, Copy)]
pub(crate) struct Macro {
    /// `tool`, `resource` or `prompt`.
    pub(crate) kind: &'static str,
    /// What the function's parameters may be, for messages.
    pub(crate) params_help: &'static str,
    /// What the function may return, for messages.
    pub(crate) returns_help: &'static str,
}

impl Macro {
    /// `#[snodo::<kind>]`.
    pub(crate) fn attr(self) -> String {
        format!("#[snodo::{}]", self.kind)
    }
}

/// Parses the item the attribute is on; a non-function is an error.
pub(crate) fn parse_fn(m: Macro, item: TokenStream) -> Result<ItemFn, TokenStream> {
    syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("{} goes on an `async fn` ({e})", m.attr()),
        )
        .into_compile_error()
    })
}

/// The pieces of the function every expansion (full or stub) needs.
pub(crate) struct Parts {
    pub(crate) vis: Visibility,
    pub(crate) ident: Ident,
    /// The component's name when `name` is absent: the identifier, unraw.
    pub(crate) default_name: String,
    pub(crate) docs: Vec<Attribute>,
    pub(crate) cfgs: Vec<Attribute>,
    pub(crate) others: Vec<Attribute>,
}

impl Parts {
    pub(crate) fn of(func: &ItemFn) -> Self {
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
    pub(crate) fn doc_text(&self) -> Option<String> {
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

    /// The `description` method: the attribute's, else the doc comment's.
    pub(crate) fn description(&self, given: Option<&LitStr>) -> TokenStream {
        let doc_text = self.doc_text().map(|t| LitStr::new(&t, Span::call_site()));
        optional_str("description", given.or(doc_text.as_ref()))
    }

    /// The name literal: the attribute's, else the function's.
    pub(crate) fn name(&self, given: Option<&LitStr>) -> LitStr {
        match given {
            Some(lit) => lit.clone(),
            None => LitStr::new(&self.default_name, self.ident.span()),
        }
    }

    /// The `struct NAME;` declaration with the function's docs and visibility.
    pub(crate) fn struct_decl(&self) -> TokenStream {
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

    /// The name of the renamed function: `__snodo_<kind>_NAME_impl`.
    pub(crate) fn inner_ident(&self, m: Macro) -> Ident {
        format_ident!("__snodo_{}_{}_impl", m.kind, self.default_name)
    }

    /// The user's function, kept whole under its private name.
    pub(crate) fn inner_fn(&self, m: Macro, func: &ItemFn) -> TokenStream {
        let cfgs = &self.cfgs;
        let others = &self.others;
        let mut sig = func.sig.clone();
        sig.ident = self.inner_ident(m);
        let block = &func.block;
        quote! {
            #(#cfgs)*
            #(#others)*
            #sig #block
        }
    }
}

/// Parses `key = value, ...` (a trailing comma is fine): each key must be one
/// of `keys` and appear once; `value` parses what follows its `=`.
pub(crate) fn parse_keys(
    input: ParseStream<'_>,
    m: Macro,
    keys: &[&str],
    mut value: impl FnMut(&Ident, &str, ParseStream<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    let mut seen: Vec<String> = Vec::new();
    while !input.is_empty() {
        let key = input.call(Ident::parse_any)?;
        let key_name = key.unraw().to_string();
        if !keys.contains(&key_name.as_str()) {
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "unknown key `{key_name}` in {}; expected one of: {}",
                    m.attr(),
                    keys.join(", ")
                ),
            ));
        }
        if seen.contains(&key_name) {
            return Err(syn::Error::new(
                key.span(),
                format!("duplicate key `{key_name}` in {}", m.attr()),
            ));
        }
        seen.push(key_name.clone());
        if !input.peek(Token![=]) {
            return Err(input.error(format!("expected `=` after `{key_name}`")));
        }
        input.parse::<Token![=]>()?;
        value(&key, &key_name, input)?;
        if input.is_empty() {
            break;
        }
        if !input.peek(Token![,]) {
            return Err(input.error(format!("expected `,` between the keys of {}", m.attr())));
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

/// A value that must be a plain string literal; anything else is reported on
/// the whole value.
pub(crate) fn string_literal(input: ParseStream<'_>, key: &str) -> syn::Result<LitStr> {
    let expr: Expr = input.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if s.suffix().is_empty() => Ok(s),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` must be a string literal"),
        )),
    }
}

/// A value that must be an unsuffixed (or `u64`) integer literal fitting a `u64`.
pub(crate) fn u64_literal(input: ParseStream<'_>, key: &str) -> syn::Result<LitInt> {
    let expr: Expr = input.parse()?;
    let message = format!("`{key}` must be a non-negative integer literal (a number of bytes)");
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) if matches!(i.suffix(), "" | "u64") => match i.base10_parse::<u64>() {
            Ok(_) => Ok(LitInt::new(i.base10_digits(), i.span())),
            Err(_) => Err(syn::Error::new(i.span(), message)),
        },
        other => Err(syn::Error::new_spanned(other, message)),
    }
}

/// `task_retries = 2`: a non-negative integer literal that fits a `u32`.
pub(crate) fn u32_literal(input: ParseStream<'_>, key: &str) -> syn::Result<LitInt> {
    let expr: Expr = input.parse()?;
    let message = format!("`{key}` must be a non-negative integer literal (at most 4294967295)");
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) if matches!(i.suffix(), "" | "u32") => match i.base10_parse::<u32>() {
            Ok(_) => Ok(LitInt::new(i.base10_digits(), i.span())),
            Err(_) => Err(syn::Error::new(i.span(), message)),
        },
        other => Err(syn::Error::new_spanned(other, message)),
    }
}

/// A value that must be a path to a function (`complete = crate::suggest`).
pub(crate) fn fn_path(input: ParseStream<'_>, key: &str, help: &str) -> syn::Result<syn::Path> {
    let expr: Expr = input.parse()?;
    match expr {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` must be the path of {help}"),
        )),
    }
}

/// An error unless `node` is a JSON object.
pub(crate) fn expect_object(key: &str, node: Option<&Node>, errors: &mut Vec<syn::Error>) {
    if let Some(node) = node
        && !matches!(node.kind, Kind::Object(_))
    {
        errors.push(node.range.error(format!(
            "`{key}` must be a JSON object, found {}",
            node.type_name()
        )));
    }
}

/// An error unless `icons` is a JSON array.
pub(crate) fn expect_icons(node: Option<&Node>, errors: &mut Vec<syn::Error>) {
    if let Some(node) = node
        && !matches!(node.kind, Kind::Array(_))
    {
        errors.push(node.range.error(format!(
            "`icons` must be a JSON array of icon objects, found {}",
            node.type_name()
        )));
    }
}

/// A rule violation inside a JSON document, reported on the offending tokens.
pub(crate) fn rule_error(node: &Node, key: &str, e: &snodo_rules::RuleError) -> syn::Error {
    // The shape rules already say "input schema ..."; the others get the key.
    let mut message = if e.message.starts_with(&key.replace('_', " ")) {
        e.message.clone()
    } else {
        format!("`{key}`: {}", e.message)
    };
    if !e.pointer.is_empty() {
        message.push_str(&format!(" (at {})", e.pointer));
    }
    node.locate(&e.pointer).error(message)
}

/// A checked function signature.
pub(crate) struct FnSignature {
    /// The parameters' types, in the order the function takes them; each is
    /// produced by `snodo::handler::FromCall`.
    pub(crate) params: Vec<Type>,
    /// The declared return type.
    pub(crate) output: Type,
}

/// Checks the signature: an `async fn` that is not `const`, `unsafe`,
/// `extern`, generic or variadic, takes its parameters by value and returns a
/// value. Returns every problem found. Which types may be parameters is left
/// to the `FromCall` trait bound in the generated code.
pub(crate) fn analyze(m: Macro, sig: &Signature) -> Result<FnSignature, Vec<syn::Error>> {
    let kind = m.kind;
    let mut errors = Vec::new();
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(
            c.span,
            format!("a {kind} function cannot be `const`"),
        ));
    }
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            format!("{} needs an `async fn`: write `async fn` here", m.attr()),
        ));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(syn::Error::new(
            u.span,
            format!("a {kind} function cannot be `unsafe`"),
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            format!("a {kind} function cannot declare an ABI"),
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format!("a {kind} function cannot be generic: the macro makes one concrete type of it"),
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            v,
            format!("a {kind} function cannot be variadic"),
        ));
    }

    let mut params: Vec<Type> = Vec::new();
    for input in &sig.inputs {
        let pat_type = match input {
            FnArg::Receiver(r) => {
                errors.push(syn::Error::new_spanned(
                    r,
                    format!(
                        "{} goes on a free `async fn`: `self` parameters are not supported",
                        m.attr()
                    ),
                ));
                continue;
            }
            FnArg::Typed(p) => p,
        };
        match check_param(m, &pat_type.ty) {
            Ok(()) => params.push((*pat_type.ty).clone()),
            Err(e) => errors.push(e),
        }
    }

    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.paren_token.span.close(),
                format!("a {kind} function must return a value: {}", m.returns_help),
            ));
            None
        }
    };
    match output {
        Some(output) if errors.is_empty() => Ok(FnSignature { params, output }),
        _ => Err(errors),
    }
}

/// A parameter is an extractor taken by value: not a reference, not `impl Trait`.
fn check_param(m: Macro, ty: &Type) -> syn::Result<()> {
    match ty {
        Type::Group(g) => check_param(m, &g.elem),
        Type::Paren(p) => check_param(m, &p.elem),
        Type::Reference(r) => Err(syn::Error::new_spanned(
            ty,
            format!(
                "take the parameter by value (`{}`), not by reference; {}",
                tidy(&r.elem.to_token_stream().to_string()),
                m.params_help
            ),
        )),
        Type::ImplTrait(_) => Err(syn::Error::new_spanned(
            ty,
            format!(
                "a {} function cannot be generic: name a concrete extractor type; {}",
                m.kind, m.params_help
            ),
        )),
        _ => Ok(()),
    }
}

/// A type as written, without the spaces token printing adds around `::`, `<`, `>`.
fn tidy(printed: &str) -> String {
    printed
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
}

/// A JSON document checked at compile time, embedded as a string literal.
pub(crate) fn json_expr(node: &Node) -> TokenStream {
    let text = LitStr::new(&node.to_json(), Span::call_site());
    quote! { ::snodo::__private::static_json(#text) }
}

/// `fn NAME(&self) -> Option<Value>` returning `node`, or nothing.
pub(crate) fn optional_json(name: &str, node: Option<&Node>) -> TokenStream {
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

/// `fn NAME(&self) -> Option<&str>` returning `lit`, or nothing.
pub(crate) fn optional_str(name: &str, lit: Option<&LitStr>) -> TokenStream {
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

/// The `completes` and `complete` methods calling the user's
/// `async fn(variable: &str, value: &str) -> Vec<String>`, or nothing.
pub(crate) fn completion(path: Option<&syn::Path>) -> TokenStream {
    let Some(path) = path else {
        return TokenStream::new();
    };
    let call = quote::quote_spanned! {path.span()=>
        #path(__snodo_variable, __snodo_value).await
    };
    quote! {
        fn completes(&self) -> bool {
            true
        }

        async fn complete(
            &self,
            __snodo_variable: &str,
            __snodo_value: &str,
            _: &::snodo::__private::serde_json::Map<
                ::std::string::String,
                ::snodo::__private::serde_json::Value,
            >,
        ) -> ::std::vec::Vec<::std::string::String> {
            #call
        }
    }
}

/// The help text for `complete = ...`.
pub(crate) const COMPLETE_HELP: &str = "an `async fn(variable: &str, value: &str) -> Vec<String>`";

/// Runs the attribute and signature checks, and emits the full expansion or
/// the errors beside a stub.
pub(crate) fn expand<A: syn::parse::Parse>(
    m: Macro,
    attr: TokenStream,
    item: TokenStream,
    check: impl FnOnce(&A, &Parts) -> Vec<syn::Error>,
    generate: impl FnOnce(&A, &FnSignature, &ItemFn, &Parts) -> TokenStream,
    stub: impl FnOnce(&Parts) -> TokenStream,
) -> TokenStream {
    let func = match parse_fn(m, item) {
        Ok(func) => func,
        Err(error) => return error,
    };
    let parts = Parts::of(&func);
    let mut errors = Vec::new();
    let attr = match syn::parse2::<A>(attr) {
        Ok(attr) => {
            errors.extend(check(&attr, &parts));
            Some(attr)
        }
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let sig = match analyze(m, &func.sig) {
        Ok(sig) => Some(sig),
        Err(es) => {
            errors.extend(es);
            None
        }
    };
    match (attr, sig) {
        (Some(attr), Some(sig)) if errors.is_empty() => generate(&attr, &sig, &func, &parts),
        _ => {
            let mut out = stub(&parts);
            for e in errors {
                out.extend(e.into_compile_error());
            }
            out
        }
    }
}

/// `let __snodo_pN = <Ty as FromCall<Input>>::from_call(...)` for each
/// parameter, returning `reject` on a rejection; and the call's arguments.
pub(crate) fn extract_params(
    sig: &FnSignature,
    input_ty: &TokenStream,
    input_var: &Ident,
    cx_var: &Ident,
    reject: impl Fn(&Ident) -> TokenStream,
) -> (Vec<TokenStream>, Vec<Ident>) {
    let rejection = Ident::new("__snodo_rejection", Span::call_site());
    let on_reject = reject(&rejection);
    sig.params
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let var = format_ident!("__snodo_p{i}");
            let extract = quote_spanned! {ty.span()=>
                let #var = match <#ty as ::snodo::handler::FromCall<#input_ty>>::from_call(
                    &#input_var,
                    &#cx_var,
                ) {
                    ::core::result::Result::Ok(value) => value,
                    ::core::result::Result::Err(#rejection) => return #on_reject,
                };
            };
            (extract, var)
        })
        .unzip()
}

/// `fn state_needs` gathering the state each parameter's extractor needs,
/// so that `build()` refuses a server that was not given it.
pub(crate) fn state_needs(sig: &FnSignature, input_ty: &TokenStream) -> TokenStream {
    if sig.params.is_empty() {
        return TokenStream::new();
    }
    let each = sig.params.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            __snodo_needs.extend(<#ty as ::snodo::handler::FromCall<#input_ty>>::state_needs());
        }
    });
    quote! {
        fn state_needs(&self) -> ::std::vec::Vec<::snodo::handler::StateNeed> {
            let mut __snodo_needs = ::std::vec::Vec::new();
            #(#each)*
            __snodo_needs
        }
    }
}

/// `scopes = ["a", "b"]`: string literals, each a valid scope token.
pub(crate) fn scopes_literal(input: ParseStream<'_>, key: &str) -> syn::Result<Vec<LitStr>> {
    let expr: Expr = input.parse()?;
    let Expr::Array(array) = expr else {
        return Err(syn::Error::new_spanned(
            expr,
            format!("`{key}` must be an array of string literals: [\"files:write\"]"),
        ));
    };
    let mut out = Vec::new();
    for elem in array.elems {
        match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) if s.suffix().is_empty() => {
                if let Err(e) = snodo_rules::check_scope(&s.value()) {
                    return Err(syn::Error::new(s.span(), e.message));
                }
                out.push(s);
            }
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    format!("`{key}` must be an array of string literals"),
                ));
            }
        }
    }
    Ok(out)
}

/// `fn required_scopes` returning `scopes`, or nothing when none were given.
pub(crate) fn required_scopes(scopes: Option<&Vec<LitStr>>) -> TokenStream {
    let Some(scopes) = scopes else {
        return TokenStream::new();
    };
    quote! {
        fn required_scopes(&self) -> ::std::vec::Vec<::std::string::String> {
            ::std::vec![#(::std::string::String::from(#scopes)),*]
        }
    }
}
