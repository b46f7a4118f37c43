//! What the annotated function may look like: `async fn NAME(<params>) -> R`.

use crate::common::{FnSignature, Macro};

/// The tool macro, for messages.
pub(crate) const TOOL: Macro = Macro {
    kind: "tool",
    params_help: "a tool function takes, in any order, extractors such as `snodo::Arguments`, \
         `snodo::Args<T>`, `snodo::Context` and `snodo::State<S>` (any type implementing \
         `snodo::handler::FromCall<Arguments>`)",
    returns_help: "`CallResult`, `String`, `Json<T>`, `Result<String, E>`... \
         (any type implementing `snodo::IntoCallResult`)",
};

/// A checked tool function signature.
pub(crate) type ToolSignature = FnSignature;

/// Checks the signature; returns every problem found.
#[cfg(test)]
fn analyze(sig: &syn::Signature) -> Result<ToolSignature, Vec<syn::Error>> {
    crate::common::analyze(TOOL, sig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::{ToTokens as _, quote};

    fn analyze_fn(tokens: proc_macro2::TokenStream) -> Result<ToolSignature, Vec<String>> {
        let f: syn::ItemFn = syn::parse2(tokens).unwrap();
        analyze(&f.sig).map_err(|errs| errs.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn any_by_value_type_is_an_extractor_in_any_order() {
        let Ok(sig) = analyze_fn(quote! {
            async fn f(_: snodo::Context, Args(S { a }): Args<S>, args: ::snodo::Arguments, s: State<Db>) -> String {}
        }) else {
            panic!("refused");
        };
        let types: Vec<_> = sig
            .params
            .iter()
            .map(|t| t.to_token_stream().to_string())
            .collect();
        assert_eq!(
            types,
            [
                "snodo :: Context",
                "Args < S >",
                ":: snodo :: Arguments",
                "State < Db >"
            ]
        );
        // An alias is as good as the type: nothing is matched by name.
        assert!(analyze_fn(quote! { async fn f(c: Ctx, a: MyArgs) -> String {} }).is_ok());
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
                quote! { async fn f(x: impl Sized) -> String {} },
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
                quote! { async fn f(x: &Arguments) -> String {} },
                "by value",
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
        let Err(errors) = analyze_fn(quote! { fn f(x: &u32) {} }) else {
            panic!("accepted");
        };
        assert_eq!(errors.len(), 3, "{errors:?}");
    }
}
