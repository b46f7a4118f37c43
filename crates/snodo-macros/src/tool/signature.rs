//! What the annotated function may look like: `async fn NAME(<params>) -> R`.

use syn::spanned::Spanned as _;
use syn::{FnArg, GenericArgument, PathArguments, ReturnType, Signature, Type};

/// One parameter the generated `call` must supply.
#[derive(Clone)]
pub(crate) enum Param {
    /// `snodo::Arguments`, passed by value.
    Arguments,
    /// `snodo::Context`, passed by value.
    Context,
    /// `snodo::Args<T>`: the typed arguments, `T` being the field.
    Args(Box<Type>),
}

impl Param {
    fn label(&self) -> &'static str {
        match self {
            Param::Arguments => "Arguments",
            Param::Context => "Context",
            Param::Args(_) => "Args<T>",
        }
    }
}

/// A checked tool function signature.
pub(crate) struct ToolSignature {
    /// The parameters, in the order the function takes them.
    pub(crate) params: Vec<Param>,
    /// The declared return type.
    pub(crate) output: Type,
}

impl ToolSignature {
    /// The `T` of an `Args<T>` parameter, if there is one.
    pub(crate) fn args_type(&self) -> Option<&Type> {
        self.params.iter().find_map(|p| match p {
            Param::Args(ty) => Some(&**ty),
            _ => None,
        })
    }

    /// Whether the function takes a `Context`.
    pub(crate) fn takes_context(&self) -> bool {
        self.params.iter().any(|p| matches!(p, Param::Context))
    }

    /// Whether the call needs the untyped arguments (for themselves or to
    /// deserialize `Args<T>` from).
    pub(crate) fn needs_arguments(&self) -> bool {
        !self.params.is_empty() && self.params.iter().any(|p| !matches!(p, Param::Context))
    }
}

const PARAMS_HELP: &str = "a tool function takes, in any order and each at most once, \
     `snodo::Arguments`, `snodo::Context` and `snodo::Args<T>`";

/// Checks the signature; returns every problem found.
pub(crate) fn analyze(sig: &Signature) -> Result<ToolSignature, Vec<syn::Error>> {
    let mut errors = Vec::new();
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(c.span, "a tool function cannot be `const`"));
    }
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            "#[snodo::tool] needs an `async fn`: write `async fn` here",
        ));
    }
    if let Some(u) = &sig.unsafety {
        errors.push(syn::Error::new(
            u.span,
            "a tool function cannot be `unsafe`",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "a tool function cannot declare an ABI",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "a tool function cannot be generic: the macro makes one concrete type of it",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            v,
            "a tool function cannot be variadic",
        ));
    }

    let mut params: Vec<Param> = Vec::new();
    for input in &sig.inputs {
        let pat_type = match input {
            FnArg::Receiver(r) => {
                errors.push(syn::Error::new_spanned(
                    r,
                    "#[snodo::tool] goes on a free `async fn`: `self` parameters are not supported",
                ));
                continue;
            }
            FnArg::Typed(p) => p,
        };
        match classify(&pat_type.ty) {
            Ok(param) => {
                if params.iter().any(|p| p.label() == param.label()) {
                    errors.push(syn::Error::new_spanned(
                        &pat_type.ty,
                        format!(
                            "`{}` is already taken by an earlier parameter; {PARAMS_HELP}",
                            param.label()
                        ),
                    ));
                } else {
                    params.push(param);
                }
            }
            Err(e) => errors.push(e),
        }
    }

    let output = match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.paren_token.span.close(),
                "a tool function must return a value: `CallResult`, `String`, `Json<T>`, \
                 `Result<String, E>`... (any type implementing `snodo::IntoCallResult`)",
            ));
            None
        }
    };
    match output {
        Some(output) if errors.is_empty() => Ok(ToolSignature { params, output }),
        _ => Err(errors),
    }
}

/// Recognizes a parameter type by the last segment of its path.
fn classify(ty: &Type) -> syn::Result<Param> {
    match ty {
        Type::Group(g) => classify(&g.elem),
        Type::Paren(p) => classify(&p.elem),
        Type::Reference(r) => {
            let inner = classify(&r.elem).ok();
            Err(syn::Error::new_spanned(
                ty,
                match inner {
                    Some(p) => format!("take `{}` by value, not by reference", p.label()),
                    None => format!("unsupported parameter type; {PARAMS_HELP}"),
                },
            ))
        }
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return Err(unsupported(ty));
            };
            match (last.ident.to_string().as_str(), &last.arguments) {
                ("Arguments", PathArguments::None) => Ok(Param::Arguments),
                ("Context", PathArguments::None) => Ok(Param::Context),
                ("Args", PathArguments::AngleBracketed(a)) if a.args.len() == 1 => {
                    match a.args.first() {
                        Some(GenericArgument::Type(inner)) => {
                            Ok(Param::Args(Box::new(inner.clone())))
                        }
                        _ => Err(unsupported(ty)),
                    }
                }
                _ => Err(unsupported(ty)),
            }
        }
        _ => Err(unsupported(ty)),
    }
}

fn unsupported(ty: &Type) -> syn::Error {
    syn::Error::new(
        ty.span(),
        format!("unsupported parameter type; {PARAMS_HELP}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn analyze_fn(tokens: proc_macro2::TokenStream) -> Result<ToolSignature, Vec<String>> {
        let f: syn::ItemFn = syn::parse2(tokens).unwrap();
        analyze(&f.sig).map_err(|errs| errs.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn accepts_the_three_parameter_kinds_in_any_order() {
        let Ok(sig) = analyze_fn(quote! {
            async fn f(_: snodo::Context, Args(S { a }): Args<S>, args: ::snodo::Arguments) -> String {}
        }) else {
            panic!("refused");
        };
        let labels: Vec<_> = sig.params.iter().map(Param::label).collect();
        assert_eq!(labels, ["Context", "Args<T>", "Arguments"]);
        assert!(sig.args_type().is_some());
        assert!(sig.takes_context() && sig.needs_arguments());
        let Ok(sig) = analyze_fn(quote! { async fn f(cx: Context) -> String {} }) else {
            panic!("refused");
        };
        assert!(sig.takes_context() && !sig.needs_arguments());
        assert!(analyze_fn(quote! { async fn f() -> String {} }).is_ok());
    }

    #[test]
    fn refuses_what_cannot_become_a_tool() {
        let cases = [
            (quote! { fn f() -> String {} }, "needs an `async fn`"),
            (quote! { async fn f<T>() -> String {} }, "cannot be generic"),
            (
                quote! { async fn f() -> String where String: Clone {} },
                "cannot be generic",
            ),
            (
                quote! { async unsafe fn f() -> String {} },
                "cannot be `unsafe`",
            ),
            (
                quote! { async extern "C" fn f() -> String {} },
                "cannot declare an ABI",
            ),
            (
                quote! { async fn f(&self) -> String {} },
                "`self` parameters",
            ),
            (
                quote! { async fn f(x: u32) -> String {} },
                "unsupported parameter type",
            ),
            (
                quote! { async fn f(x: &Arguments) -> String {} },
                "by value",
            ),
            (
                quote! { async fn f(x: Args) -> String {} },
                "unsupported parameter type",
            ),
            (
                quote! { async fn f(a: Context, b: Context) -> String {} },
                "already taken",
            ),
            (quote! { async fn f() {} }, "must return a value"),
        ];
        for (tokens, expected) in cases {
            let Err(errors) = analyze_fn(tokens.clone()) else {
                panic!("{tokens} was accepted");
            };
            assert!(
                errors.iter().any(|e| e.contains(expected)),
                "{tokens}: {errors:?}"
            );
        }
    }

    #[test]
    fn reports_every_problem_at_once() {
        let Err(errors) = analyze_fn(quote! { fn f(x: u32) {} }) else {
            panic!("accepted");
        };
        assert_eq!(errors.len(), 3, "{errors:?}");
    }
}
