//! What the annotated function may look like: `async fn NAME(<params>) -> R`.

use syn::{GenericArgument, PathArguments, PathSegment, Type};

use crate::common::{FnSignature, Macro, ParamKind};

/// The tool macro, for messages.
pub(crate) const TOOL: Macro = Macro {
    kind: "tool",
    params_help: "a tool function takes, in any order and each at most once, \
         `snodo::Arguments`, `snodo::Context` and `snodo::Args<T>`",
    returns_help: "`CallResult`, `String`, `Json<T>`, `Result<String, E>`... \
         (any type implementing `snodo::IntoCallResult`)",
};

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

impl ParamKind for Param {
    fn label(&self) -> &'static str {
        match self {
            Param::Arguments => "Arguments",
            Param::Context => "Context",
            Param::Args(_) => "Args<T>",
        }
    }

    fn from_segment(segment: &PathSegment) -> Option<Self> {
        match (segment.ident.to_string().as_str(), &segment.arguments) {
            ("Arguments", PathArguments::None) => Some(Param::Arguments),
            ("Context", PathArguments::None) => Some(Param::Context),
            ("Args", PathArguments::AngleBracketed(a)) if a.args.len() == 1 => {
                match a.args.first() {
                    Some(GenericArgument::Type(inner)) => {
                        Some(Param::Args(Box::new(inner.clone())))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// A checked tool function signature.
pub(crate) type ToolSignature = FnSignature<Param>;

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

/// Checks the signature; returns every problem found.
#[cfg(test)]
fn analyze(sig: &syn::Signature) -> Result<ToolSignature, Vec<syn::Error>> {
    crate::common::analyze(TOOL, sig)
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
