//! JSON written as Rust tokens, with the span of every key and value kept.
//!
//! The attribute's JSON values (`input_schema = { "type": "object", ... }`) reach
//! the macro as a token stream. [`Node`] parses them into a tree that remembers
//! where each key and value was written, so that a rule broken at the JSON pointer
//! `/properties/q/type` can be reported on exactly those tokens.
//!
//! The grammar is JSON's, spelled with Rust tokens:
//!
//! - strings are string literals (`"a"`, `r"a"`, `r#"a"#`), without suffix;
//! - numbers are integer or float literals in JSON's number syntax (`0`, `-1`,
//!   `2.5`, `1e-3`), optionally preceded by `-`; Rust-only forms (`1_000`, `0x10`,
//!   `1u8`, `1.`) are refused;
//! - `true`, `false` and `null` are the three bare words allowed;
//! - arrays are `[ ... ]` and objects `{ "key": value, ... }`, keys being string
//!   literals; a duplicated key is an error;
//! - **one trailing comma is accepted** in arrays and objects, as `serde_json::json!`
//!   accepts it, so Rust habits do not cause errors; an empty element (`[1,,2]`,
//!   `[,]`) is refused.

use std::fmt::Write as _;

use proc_macro2::{Delimiter, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use serde_json::{Map, Number, Value};
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, Lit, LitStr, Token};

/// A JSON value parsed from tokens, with its source location.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The value.
    pub(crate) kind: Kind,
    /// Where the value was written.
    pub(crate) range: Range,
}

/// The kinds of JSON values, with spanned children.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<Member>),
}

/// One `"key": value` member of an object.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) key_span: Span,
    pub(crate) value: Node,
}

/// A source range: the first and the last token's spans.
///
/// Stable Rust cannot join two spans, but an error built from two tokens
/// carrying them is reported over the whole range (see [`Range::error`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    pub(crate) start: Span,
    pub(crate) end: Span,
}

impl Range {
    fn single(span: Span) -> Self {
        Self {
            start: span,
            end: span,
        }
    }

    /// An error reported over this range.
    pub(crate) fn error(self, message: impl std::fmt::Display) -> syn::Error {
        let mut tokens = TokenStream::new();
        for span in [self.start, self.end] {
            let mut punct = Punct::new('~', Spacing::Alone);
            punct.set_span(span);
            tokens.extend([TokenTree::Punct(punct)]);
        }
        syn::Error::new_spanned(tokens, message)
    }
}

impl Node {
    /// A short name of the value's JSON type, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::String(_) => "a string",
            Kind::Array(_) => "an array",
            Kind::Object(_) => "an object",
        }
    }

    /// The value as `serde_json` sees it.
    pub(crate) fn to_value(&self) -> Value {
        match &self.kind {
            Kind::Null => Value::Null,
            Kind::Bool(b) => Value::Bool(*b),
            Kind::Number(n) => Value::Number(n.clone()),
            Kind::String(s) => Value::String(s.clone()),
            Kind::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Kind::Object(members) => {
                let mut map = Map::new();
                for m in members {
                    map.insert(m.key.clone(), m.value.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// Compact JSON text, with object members in the order they were written.
    pub(crate) fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match &self.kind {
            Kind::Null => out.push_str("null"),
            Kind::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            Kind::Number(n) => {
                let _ = write!(out, "{n}");
            }
            Kind::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
            Kind::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Kind::Object(members) => {
                out.push('{');
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(m.key.clone()).to_string());
                    out.push(':');
                    m.value.write_json(out);
                }
                out.push('}');
            }
        }
    }

    /// Where the place named by a JSON pointer (RFC 6901) was written.
    ///
    /// A pointer ending in an object member gives the range from its key to the
    /// end of its value (`"type": "number"`); one ending in an array element gives
    /// the element. When the pointer names a place that does not exist (a rule
    /// complaining about a missing `type`), the deepest existing place on its way
    /// is returned.
    pub(crate) fn locate(&self, pointer: &str) -> Range {
        let mut node = self;
        let mut range = self.range;
        if pointer.is_empty() {
            return range;
        }
        for raw in pointer.split('/').skip(1) {
            let token = raw.replace("~1", "/").replace("~0", "~");
            match &node.kind {
                Kind::Object(members) => {
                    let Some(m) = members.iter().rev().find(|m| m.key == token) else {
                        break;
                    };
                    range = Range {
                        start: m.key_span,
                        end: m.value.range.end,
                    };
                    node = &m.value;
                }
                Kind::Array(items) => {
                    let Some(item) = token.parse::<usize>().ok().and_then(|i| items.get(i)) else {
                        break;
                    };
                    range = item.range;
                    node = item;
                }
                _ => break,
            }
        }
        range
    }
}

const EXPECTED: &str = "expected a JSON value: a string literal, a number, `true`, `false`, `null`, `{ ... }` or `[ ... ]`";

impl Parse for Node {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        // Invisible groups come from `macro_rules!` expansions: look through them.
        if let Some((TokenTree::Group(g), _)) = input.cursor().token_tree()
            && g.delimiter() == Delimiter::None
        {
            let tt: TokenTree = input.parse()?;
            let TokenTree::Group(g) = tt else {
                unreachable!("checked above")
            };
            return syn::parse::Parser::parse2(parse_whole, g.stream());
        }
        if input.peek(syn::token::Brace) {
            return parse_object(input);
        }
        if input.peek(syn::token::Bracket) {
            return parse_array(input);
        }
        if input.peek(Token![-]) {
            let minus: Token![-] = input.parse()?;
            if !(input.peek(syn::LitInt) || input.peek(syn::LitFloat)) {
                return Err(syn::Error::new(
                    minus.span,
                    "expected a number literal after `-`",
                ));
            }
            let lit: Lit = input.parse()?;
            let number = number_of(&lit, true)?;
            return Ok(Node {
                kind: Kind::Number(number),
                range: Range {
                    start: minus.span,
                    end: lit.span(),
                },
            });
        }
        if input.peek(Ident::peek_any) {
            let ident = input.call(Ident::parse_any)?;
            let kind = match ident.to_string().as_str() {
                "true" => Kind::Bool(true),
                "false" => Kind::Bool(false),
                "null" => Kind::Null,
                other => {
                    return Err(syn::Error::new(
                        ident.span(),
                        format!(
                            "{EXPECTED}; found the identifier `{other}` (JSON strings are written \"{other}\", and Rust expressions are not allowed)"
                        ),
                    ));
                }
            };
            return Ok(Node {
                kind,
                range: Range::single(ident.span()),
            });
        }
        if input.peek(Lit) {
            let lit: Lit = input.parse()?;
            let span = lit.span();
            let kind = match &lit {
                Lit::Str(s) => Kind::String(string_of(s)?),
                Lit::Int(_) | Lit::Float(_) => Kind::Number(number_of(&lit, false)?),
                Lit::Bool(b) => Kind::Bool(b.value),
                _ => {
                    return Err(syn::Error::new(
                        span,
                        format!("{EXPECTED}; found a Rust literal that JSON does not have"),
                    ));
                }
            };
            return Ok(Node {
                kind,
                range: Range::single(span),
            });
        }
        if input.is_empty() {
            return Err(input.error(EXPECTED));
        }
        let tt: TokenTree = input.parse()?;
        Err(syn::Error::new(
            tt.span(),
            format!("{EXPECTED}; found `{tt}`"),
        ))
    }
}

/// Parses a stream holding exactly one value.
pub(crate) fn parse_whole(input: ParseStream<'_>) -> syn::Result<Node> {
    let node: Node = input.parse()?;
    if !input.is_empty() {
        return Err(input.error("unexpected tokens after the JSON value"));
    }
    Ok(node)
}

fn string_of(lit: &LitStr) -> syn::Result<String> {
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "a JSON string literal may not have a suffix",
        ));
    }
    Ok(lit.value())
}

/// Reads a number literal's text as a JSON number (RFC 8259 §6).
fn number_of(lit: &Lit, negative: bool) -> syn::Result<Number> {
    let text = lit.to_token_stream().to_string();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) if !negative => ("-", rest),
        _ => (if negative { "-" } else { "" }, text.as_str()),
    };
    if !is_json_number(digits) {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`{text}` is not a JSON number: write digits, an optional fraction and exponent (no `_`, radix prefix or suffix)"
            ),
        ));
    }
    let full = format!("{sign}{digits}");
    serde_json::from_str::<Number>(&full).map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("`{full}` is out of range for a JSON number"),
        )
    })
}

/// `int [frac] [exp]` without the sign, as RFC 8259 spells numbers.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    match b.first() {
        Some(b'0') => i = 1,
        Some(c) if c.is_ascii_digit() => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn parse_array(input: ParseStream<'_>) -> syn::Result<Node> {
    let content;
    let bracket = syn::bracketed!(content in input);
    let mut items = Vec::new();
    while !content.is_empty() {
        if content.peek(Token![,]) {
            let comma: Token![,] = content.parse()?;
            return Err(syn::Error::new(
                comma.span,
                "expected an array element before `,`",
            ));
        }
        items.push(content.parse::<Node>()?);
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error("expected `,` or `]` after an array element"));
        }
        content.parse::<Token![,]>()?;
    }
    Ok(Node {
        kind: Kind::Array(items),
        range: Range::single(bracket.span.join()),
    })
}

fn parse_object(input: ParseStream<'_>) -> syn::Result<Node> {
    let content;
    let brace = syn::braced!(content in input);
    let mut members: Vec<Member> = Vec::new();
    while !content.is_empty() {
        let key = if content.peek(LitStr) {
            let lit: LitStr = content.parse()?;
            (string_of(&lit)?, lit.span())
        } else if content.peek(Ident::peek_any) {
            let ident = content.call(Ident::parse_any)?;
            return Err(syn::Error::new(
                ident.span(),
                format!(
                    "JSON object keys are string literals: write \"{}\"",
                    ident.unraw()
                ),
            ));
        } else if content.peek(Token![,]) {
            let comma: Token![,] = content.parse()?;
            return Err(syn::Error::new(
                comma.span,
                "expected an object member before `,`",
            ));
        } else {
            let tt: TokenTree = content.parse()?;
            return Err(syn::Error::new(
                tt.span(),
                format!("expected a string literal as an object key, found `{tt}`"),
            ));
        };
        if members.iter().any(|m| m.key == key.0) {
            return Err(syn::Error::new(
                key.1,
                format!("duplicate key {:?} in a JSON object", key.0),
            ));
        }
        if !content.peek(Token![:]) || content.peek(Token![::]) {
            return Err(content.error(format!("expected `:` after the key {:?}", key.0)));
        }
        content.parse::<Token![:]>()?;
        if content.is_empty() || content.peek(Token![,]) {
            return Err(content.error(format!("expected a value for the key {:?}", key.0)));
        }
        let value: Node = content.parse()?;
        members.push(Member {
            key: key.0,
            key_span: key.1,
            value,
        });
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error("expected `,` or `}` after an object member"));
        }
        content.parse::<Token![,]>()?;
    }
    Ok(Node {
        kind: Kind::Object(members),
        range: Range::single(brace.span.join()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;
    use serde_json::json;

    fn parse(tokens: TokenStream) -> syn::Result<Node> {
        syn::parse::Parser::parse2(parse_whole, tokens)
    }

    fn error(tokens: TokenStream) -> String {
        parse(tokens).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_kind_of_value() {
        let node = parse(quote! {
            {
                "s": "text", "raw": r#"a "quoted" word"#,
                "i": 42, "neg": -1, "f": 2.5, "negf": -0.5, "e": 1e-3, "zero": 0,
                "t": true, "f2": false, "n": null,
                "arr": [1, [2, {}], []], "obj": {"nested": {"deep": [null]}}
            }
        })
        .unwrap();
        assert_eq!(
            node.to_value(),
            json!({
                "s": "text", "raw": "a \"quoted\" word",
                "i": 42, "neg": -1, "f": 2.5, "negf": -0.5, "e": 0.001, "zero": 0,
                "t": true, "f2": false, "n": null,
                "arr": [1, [2, {}], []], "obj": {"nested": {"deep": [null]}}
            })
        );
    }

    #[test]
    fn serializes_in_source_order_and_round_trips() {
        let node = parse(quote! { {"z": 1, "a": "x\"y", "m": [true, null, -2.5]} }).unwrap();
        assert_eq!(node.to_json(), r#"{"z":1,"a":"x\"y","m":[true,null,-2.5]}"#);
        let back: Value = serde_json::from_str(&node.to_json()).unwrap();
        assert_eq!(back, node.to_value());
    }

    #[test]
    fn keeps_every_keyword_verbatim() {
        let node = parse(quote! {
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"a": {}}, "x-mcp-header": "H"}
        })
        .unwrap();
        assert_eq!(
            node.to_value(),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"a": {}}, "x-mcp-header": "H"})
        );
    }

    #[test]
    fn accepts_one_trailing_comma() {
        let node = parse(quote! { {"a": [1, 2,], "b": {},} }).unwrap();
        assert_eq!(node.to_value(), json!({"a": [1, 2], "b": {}}));
    }

    #[test]
    fn refuses_empty_elements() {
        assert!(error(quote! { [1,,2] }).contains("expected an array element before `,`"));
        assert!(error(quote! { [,] }).contains("expected an array element"));
        assert!(error(quote! { {"a": 1,,} }).contains("expected an object member before `,`"));
    }

    #[test]
    fn refuses_bare_identifiers_with_a_hint() {
        let e = error(quote! { {"type": object} });
        assert!(e.contains("found the identifier `object`"), "{e}");
        assert!(e.contains("\"object\""), "{e}");
    }

    #[test]
    fn refuses_identifier_keys() {
        let e = error(quote! { {type: "object"} });
        assert!(
            e.contains("keys are string literals: write \"type\""),
            "{e}"
        );
    }

    #[test]
    fn refuses_a_missing_colon_or_comma() {
        assert!(error(quote! { {"a" 1} }).contains("expected `:` after the key \"a\""));
        assert!(error(quote! { {"a": 1 "b": 2} }).contains("expected `,` or `}`"));
        assert!(error(quote! { [1 2] }).contains("expected `,` or `]`"));
        assert!(error(quote! { {"a":} }).contains("expected a value for the key \"a\""));
    }

    #[test]
    fn refuses_duplicate_keys() {
        let e = error(quote! { {"a": 1, "a": 2} });
        assert!(e.contains("duplicate key \"a\""), "{e}");
    }

    #[test]
    fn refuses_rust_only_literals() {
        for tokens in [
            quote! { 1_000 },
            quote! { 0x10 },
            quote! { 1u8 },
            quote! { 1.5f32 },
            quote! { 01 },
        ] {
            let e = error(tokens.clone());
            assert!(e.contains("is not a JSON number"), "{tokens}: {e}");
        }
        assert!(error(quote! { 'c' }).contains("JSON does not have"));
        assert!(error(quote! { b"bytes" }).contains("JSON does not have"));
        assert!(error(quote! { "a"suffix }).contains("suffix"));
        assert!(error(quote! { (1) }).contains("expected a JSON value"));
        assert!(error(quote! { - "a" }).contains("after `-`"));
        assert!(error(quote! { 1 2 }).contains("unexpected tokens"));
    }

    #[test]
    fn json_number_grammar() {
        for ok in ["0", "10", "1.5", "0.25", "1e5", "1E+5", "2.5e-3"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in ["", "01", "1.", ".5", "1e", "1_0", "0x1", "1u8", "-1"] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn looks_through_invisible_groups() {
        let inner = TokenTree::Group(proc_macro2::Group::new(Delimiter::None, quote! { "x" }));
        let node = parse(quote! { {"a": #inner} }).unwrap();
        assert_eq!(node.to_value(), json!({"a": "x"}));
    }

    #[test]
    fn accepts_a_negative_literal_token() {
        // `macro_rules!` may hand over `-1` as one literal token.
        let lit = TokenTree::Literal(proc_macro2::Literal::i64_unsuffixed(-1));
        let node = parse(quote! { [#lit] }).unwrap();
        assert_eq!(node.to_value(), json!([-1]));
    }

    /// Builds tokens whose spans differ (`quote!` gives them all the call site),
    /// so the located range can be told apart.
    fn spanned(text: &str) -> Node {
        let tokens: TokenStream = text.parse().unwrap();
        parse(tokens).unwrap()
    }

    /// Outside a compiler, spans still record where their token was in the text
    /// the stream was parsed from; `Span::source_text` gives it back.
    fn text(range: Range) -> (String, String) {
        (
            range.start.source_text().unwrap_or_default(),
            range.end.source_text().unwrap_or_default(),
        )
    }

    #[test]
    fn locates_a_member_from_its_key_to_its_value() {
        let node = spanned(
            r#"{"type": "object", "properties": {"q": {"type": "number", "x-mcp-header": "Q"}}}"#,
        );
        let at = |p: &str| text(node.locate(p));
        assert_eq!(
            at("/properties/q/type"),
            ("\"type\"".into(), "\"number\"".into())
        );
        assert_eq!(
            at("/properties/q/x-mcp-header"),
            ("\"x-mcp-header\"".into(), "\"Q\"".into())
        );
        assert_eq!(at("/type"), ("\"type\"".into(), "\"object\"".into()));
        let whole = at("");
        assert!(
            whole.0.starts_with('{') && whole.0.ends_with('}'),
            "{whole:?}"
        );
    }

    #[test]
    fn locates_array_elements_and_negative_numbers() {
        let node = spanned(r#"{"oneOf": [{"a": -1}, {"b": 2}]}"#);
        assert_eq!(text(node.locate("/oneOf/1")).0, "{\"b\": 2}");
        assert_eq!(
            text(node.locate("/oneOf/0/a")),
            ("\"a\"".into(), "1".into())
        );
        let minus = spanned("-7");
        assert_eq!(text(minus.range), ("-".into(), "7".into()));
    }

    #[test]
    fn falls_back_to_the_deepest_existing_place() {
        let node = spanned(r#"{"properties": {"a": {"x-mcp-header": "A"}}}"#);
        // The rule names the missing `type` of `a`: the member `a` is reported.
        let (start, end) = text(node.locate("/properties/a/type"));
        assert_eq!(start, "\"a\"");
        assert!(end.starts_with('{'), "{end}");
        assert_eq!(text(node.locate("/nope/deeper")).0, text(node.range).0);
        assert_eq!(text(node.locate("/properties/a/x-mcp-header/0")).1, "\"A\"");
    }

    #[test]
    fn unescapes_pointer_tokens() {
        let node = spanned(r#"{"properties": {"a/b~c": {"type": "string"}}}"#);
        assert_eq!(
            text(node.locate("/properties/a~1b~0c/type")),
            ("\"type\"".into(), "\"string\"".into())
        );
    }

    #[test]
    fn a_range_error_keeps_its_message() {
        let node = spanned(r#"{"a": 1}"#);
        let e = node.locate("/a").error("boom");
        assert_eq!(e.to_string(), "boom");
    }
}
