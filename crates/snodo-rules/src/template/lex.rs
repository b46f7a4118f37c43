//! Lexing a template into literal characters and checked `{...}` expressions.

use super::error::TemplateError;

/// The shape of one supported `{...}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ExprKind {
    /// `{var}`
    Simple(String),
    /// `{+var}`
    Reserved(String),
    /// `{/var}`
    Optional(String),
    /// `{/var*}`
    Exploded(String),
    /// `{?a,b}` or `{&a,b}`
    Query(Vec<String>),
}

/// A lexed template item: one literal character or one expression.
#[derive(Debug, Clone)]
pub(super) enum Item {
    Char {
        ch: char,
        at: usize,
    },
    Expr {
        kind: ExprKind,
        at: usize,
        len: usize,
    },
}

impl Item {
    pub(super) fn start(&self) -> usize {
        match self {
            Item::Char { at, .. } | Item::Expr { at, .. } => *at,
        }
    }

    pub(super) fn end(&self) -> usize {
        match self {
            Item::Char { ch, at } => at + ch.len_utf8(),
            Item::Expr { at, len, .. } => at + len,
        }
    }

    /// Whether this item ends a path segment (or the authority): a literal
    /// `/`, an expression that introduces its own `/`, or a query expression.
    pub(super) fn ends_segment(&self) -> bool {
        matches!(
            self,
            Item::Char { ch: '/', .. }
                | Item::Expr {
                    kind: ExprKind::Optional(_) | ExprKind::Exploded(_) | ExprKind::Query(_),
                    ..
                }
        )
    }
}

/// Splits a template into literal characters and checked expressions.
pub(super) fn lex(template: &str) -> Result<Vec<Item>, TemplateError> {
    let mut items = Vec::with_capacity(template.len());
    let mut chars = template.char_indices();
    while let Some((at, ch)) = chars.next() {
        match ch {
            '{' => {
                let body_start = at + 1;
                let close = template[body_start..]
                    .find(['{', '}'])
                    .map(|offset| body_start + offset);
                let Some(close) = close.filter(|&close| template.as_bytes()[close] == b'}') else {
                    return Err(TemplateError::new(format!(
                        "unbalanced braces in template: \"{{\" at byte {at} is never closed"
                    )));
                };
                let text = &template[at..=close];
                let kind = expression(text, &template[body_start..close])?;
                items.push(Item::Expr {
                    kind,
                    at,
                    len: text.len(),
                });
                // Skip the body and the closing brace.
                for _ in chars.by_ref().take_while(|&(i, _)| i < close) {}
            }
            '}' => {
                return Err(TemplateError::new(format!(
                    "unbalanced braces in template: \"}}\" at byte {at} has no matching \"{{\""
                )));
            }
            '?' => {
                return Err(TemplateError::new(format!(
                    "unsupported literal \"?\" at byte {at} (literal query string; use {{?name}})"
                )));
            }
            '#' => {
                return Err(TemplateError::new(format!(
                    "unsupported literal \"#\" at byte {at} (fragment)"
                )));
            }
            _ => items.push(Item::Char { ch, at }),
        }
    }
    Ok(items)
}

/// Checks one `{...}` expression; `text` includes the braces.
fn expression(text: &str, body: &str) -> Result<ExprKind, TemplateError> {
    let (operator, list) = match body.chars().next() {
        Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&' | '=' | ',' | '!' | '@' | '|')) => {
            (Some(op), &body[1..])
        }
        _ => (None, body),
    };
    match operator {
        Some('#') => return Err(TemplateError::expression(text, "fragment expansion")),
        Some('.') => return Err(TemplateError::expression(text, "label expansion")),
        Some(';') => return Err(TemplateError::expression(text, "path-style parameters")),
        Some(op @ ('=' | ',' | '!' | '@' | '|')) => {
            return Err(TemplateError::expression(
                text,
                format_args!("reserved operator \"{op}\""),
            ));
        }
        _ => {}
    }
    let mut names = Vec::new();
    let mut explode = false;
    for spec in list.split(',') {
        let name = match spec.strip_suffix('*') {
            Some(name) => {
                explode = true;
                name
            }
            None => spec,
        };
        if name.contains(':') {
            return Err(TemplateError::expression(text, "prefix modifier"));
        }
        if !is_valid_name(name) {
            return Err(TemplateError::new(format!(
                "invalid variable name \"{name}\" in template expression \"{text}\""
            )));
        }
        names.push(name.to_owned());
    }
    let query = matches!(operator, Some('?' | '&'));
    if names.len() > 1 && !query {
        return Err(TemplateError::expression(text, "multi-variable expression"));
    }
    if explode && operator != Some('/') {
        return Err(TemplateError::expression(
            text,
            "explode modifier outside {/var*}",
        ));
    }
    let name = || names[0].clone();
    Ok(match operator {
        None => ExprKind::Simple(name()),
        Some('+') => ExprKind::Reserved(name()),
        Some('/') if explode => ExprKind::Exploded(name()),
        Some('/') => ExprKind::Optional(name()),
        _ => ExprKind::Query(names),
    })
}

/// RFC 6570 `varname`, without percent-encoded characters: ASCII letters,
/// digits and `_`, with single dots between them.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}
