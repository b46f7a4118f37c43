//! The parsed template and the structural pass that builds it: scheme,
//! authority, path and query.

use std::fmt;
use std::str::FromStr;

use super::error::TemplateError;
use super::lex::{ExprKind, Item, lex};
use super::uri::{is_plain_host, is_valid_scheme};

/// The longest template [`UriTemplate::parse`] accepts, in bytes.
const MAX_TEMPLATE_BYTES: usize = 1024;

/// The most variable occurrences a template may hold.
const MAX_VARIABLES: usize = 32;

/// A parsed resource URI template.
///
/// ```
/// use snodo_rules::template::UriTemplate;
///
/// let template = UriTemplate::parse("https://{host}/repos{/owner}{?page,per_page}")?;
/// assert_eq!(
///     template.variables().collect::<Vec<_>>(),
///     ["host", "owner", "page", "per_page"]
/// );
///
/// let bound = template
///     .matches("https://example.com/repos/ada%20l?per_page=10")
///     .expect("the URI matches");
/// let bound: Vec<(&str, &str)> = bound.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
/// assert_eq!(
///     bound,
///     [("host", "example.com"), ("owner", "ada l"), ("per_page", "10")]
/// );
///
/// // A port, a fragment or an unknown query parameter means no match.
/// assert!(template.matches("https://example.com:8443/repos").is_none());
/// assert!(template.matches("https://example.com/repos#top").is_none());
/// assert!(template.matches("https://example.com/repos?sort=asc").is_none());
///
/// // Shapes outside the subset are refused, and the error names them.
/// let error = UriTemplate::parse("docs://{#section}").unwrap_err();
/// assert!(error.to_string().contains("fragment expansion"));
/// # Ok::<(), snodo_rules::template::TemplateError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    pub(super) source: String,
    pub(super) scheme: String,
    pub(super) authority: Option<Authority>,
    pub(super) segments: Vec<Segment>,
    /// Index in `segments` of the one variable-length expression, if any.
    pub(super) variable_length: Option<usize>,
    /// Variable ids named by the query expressions, in template order.
    pub(super) query: Vec<usize>,
    /// Distinct variable names, by id (order of first appearance).
    pub(super) names: Vec<String>,
}

/// The authority part of a template that has `//` after its scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Authority {
    /// A literal host, possibly empty.
    Literal(String),
    /// `{var}`: the whole, non-empty host.
    Var(usize),
}

/// One slot in the `/`-separated path of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Segment {
    /// A literal segment, compared byte for byte (may be empty).
    Literal(String),
    /// `{var}`: one whole non-empty segment.
    Var(usize),
    /// `{+var}`: one or more non-empty segments.
    Reserved(usize),
    /// `{/var}`: zero or one non-empty segment.
    Optional(usize),
    /// `{/var*}`: zero or more non-empty segments.
    Exploded(usize),
}

impl Segment {
    fn is_variable_length(&self) -> bool {
        matches!(
            self,
            Segment::Reserved(_) | Segment::Optional(_) | Segment::Exploded(_)
        )
    }
}

impl UriTemplate {
    /// Parses `template`, refusing every shape outside the supported subset.
    ///
    /// The error message names the refused shape: fragment expansion
    /// (`{#var}`), a prefix modifier (`{var:3}`), label expansion (`{.ext}`),
    /// path-style parameters (`{;x}`), a multi-variable expression other than
    /// a query one (`{a,b}`), an explode modifier outside `{/var*}`, a segment
    /// mixing literal text and an expression (`v{version}`), a second
    /// variable-length path expression, unbalanced braces, an empty or invalid
    /// variable name, a template over 1024 bytes or with more than 32
    /// variables.
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        if template.len() > MAX_TEMPLATE_BYTES {
            return Err(TemplateError::new(format!(
                "template is {} bytes long (at most {MAX_TEMPLATE_BYTES} are allowed)",
                template.len()
            )));
        }
        let items = lex(template)?;
        let occurrences: usize = items
            .iter()
            .map(|item| match item {
                Item::Char { .. } => 0,
                Item::Expr {
                    kind: ExprKind::Query(names),
                    ..
                } => names.len(),
                Item::Expr { .. } => 1,
            })
            .sum();
        if occurrences > MAX_VARIABLES {
            return Err(TemplateError::new(format!(
                "template has {occurrences} variables (at most {MAX_VARIABLES} are allowed)"
            )));
        }
        Parser {
            source: template,
            items: &items,
            pos: 0,
            names: Vec::new(),
        }
        .parse()
    }

    /// The template text, exactly as given to [`UriTemplate::parse`].
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The template's variable names, each once, in order of first appearance.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(template: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(template)
    }
}

/// The structural pass over lexed items: scheme, authority, path, query.
struct Parser<'a> {
    source: &'a str,
    items: &'a [Item],
    pos: usize,
    names: Vec<String>,
}

/// The path segment being built.
enum Open {
    /// Nothing seen since the last `/`.
    Empty,
    /// Literal text.
    Literal(String),
    /// One expression filling the segment.
    Expr(Segment),
    /// Just after `{/var}` or `{/var*}`: only `/`, a query expression or the
    /// end may follow.
    Closed,
}

impl Parser<'_> {
    fn parse(mut self) -> Result<UriTemplate, TemplateError> {
        let scheme = self.scheme()?;
        let authority = self.authority()?;
        let (segments, variable_length) = self.path()?;
        let query = self.query()?;
        Ok(UriTemplate {
            source: self.source.to_owned(),
            scheme,
            authority,
            segments,
            variable_length,
            query,
            names: self.names,
        })
    }

    /// The id of `name`, assigned in order of first appearance.
    fn intern(&mut self, name: &str) -> usize {
        match self.names.iter().position(|known| known == name) {
            Some(id) => id,
            None => {
                self.names.push(name.to_owned());
                self.names.len() - 1
            }
        }
    }

    fn text(&self, from: usize, to: usize) -> &str {
        &self.source[from..to]
    }

    /// The offset where the segment containing item `index` ends.
    fn segment_end(&self, index: usize) -> usize {
        self.items[index + 1..]
            .iter()
            .find(|item| item.ends_segment())
            .map_or(self.source.len(), Item::start)
    }

    fn scheme(&mut self) -> Result<String, TemplateError> {
        let items = self.items;
        let mut scheme = String::new();
        for item in items {
            self.pos += 1;
            match item {
                Item::Char { ch: ':', .. } if is_valid_scheme(&scheme) => return Ok(scheme),
                Item::Char { ch, .. } if ch.is_ascii_alphanumeric() || "+-.".contains(*ch) => {
                    scheme.push(*ch);
                }
                Item::Expr { at, len, .. } if is_valid_scheme(&scheme) || scheme.is_empty() => {
                    return Err(TemplateError::expression(
                        self.text(*at, at + len),
                        "expression in the scheme",
                    ));
                }
                _ => break,
            }
        }
        Err(TemplateError::new(
            "template has no scheme (expected a literal \"scheme:\" at the start)",
        ))
    }

    fn authority(&mut self) -> Result<Option<Authority>, TemplateError> {
        let slash = |item: Option<&Item>| matches!(item, Some(Item::Char { ch: '/', .. }));
        if !(slash(self.items.get(self.pos)) && slash(self.items.get(self.pos + 1))) {
            return Ok(None);
        }
        self.pos += 2;
        let start = self.pos;
        while self
            .items
            .get(self.pos)
            .is_some_and(|item| !item.ends_segment())
        {
            self.pos += 1;
        }
        let parts = &self.items[start..self.pos];
        let text = match (parts.first(), parts.last()) {
            (Some(first), Some(last)) => self.text(first.start(), last.end()),
            _ => "",
        };
        if parts.is_empty() {
            return if slash(self.items.get(self.pos)) {
                Ok(Some(Authority::Literal(String::new())))
            } else {
                Err(TemplateError::new(
                    "unsupported template authority \"\" (an empty authority must be followed by \"/\")",
                ))
            };
        }
        if let [Item::Expr { kind, .. }] = parts {
            return match kind {
                ExprKind::Simple(name) => Ok(Some(Authority::Var(self.intern(name)))),
                _ => Err(TemplateError::new(format!(
                    "unsupported template authority \"{text}\" (only a literal or one {{var}})"
                ))),
            };
        }
        if parts.iter().any(|item| matches!(item, Item::Expr { .. })) {
            let mixed = if parts.iter().any(|item| matches!(item, Item::Char { .. })) {
                "mixed literal and expression; "
            } else {
                ""
            };
            return Err(TemplateError::new(format!(
                "unsupported template authority \"{text}\" ({mixed}only a literal or one {{var}})"
            )));
        }
        if !is_plain_host(text) {
            return Err(TemplateError::new(format!(
                "unsupported template authority \"{text}\" (port or userinfo)"
            )));
        }
        Ok(Some(Authority::Literal(text.to_owned())))
    }

    fn path(&mut self) -> Result<(Vec<Segment>, Option<usize>), TemplateError> {
        let items = self.items;
        let mut segments = Vec::new();
        let mut variable_length: Option<(usize, usize)> = None; // (segment, item)
        let mut open = Open::Empty;
        let mut segment_start = self
            .items
            .get(self.pos)
            .map_or(self.source.len(), Item::start);
        while let Some(item) = items.get(self.pos) {
            let index = self.pos;
            match item {
                Item::Expr {
                    kind: ExprKind::Query(_),
                    ..
                } => break,
                Item::Char { ch: '/', at } => {
                    close(&mut segments, open);
                    open = Open::Empty;
                    segment_start = at + 1;
                }
                Item::Char { ch, .. } => match &mut open {
                    Open::Empty => open = Open::Literal(ch.to_string()),
                    Open::Literal(text) => text.push(*ch),
                    Open::Expr(_) | Open::Closed => {
                        return Err(TemplateError::segment(
                            self.text(segment_start, self.segment_end(index)),
                            "mixed literal and expression in one segment",
                        ));
                    }
                },
                Item::Expr { kind, at, len } => {
                    let segment = match kind {
                        ExprKind::Simple(name) => Segment::Var(self.intern(name)),
                        ExprKind::Reserved(name) => Segment::Reserved(self.intern(name)),
                        ExprKind::Optional(name) => Segment::Optional(self.intern(name)),
                        ExprKind::Exploded(name) => Segment::Exploded(self.intern(name)),
                        ExprKind::Query(_) => unreachable!("handled above"),
                    };
                    let earlier = variable_length.filter(|_| segment.is_variable_length());
                    if let Some((_, first)) = earlier {
                        let first = &items[first];
                        return Err(TemplateError::expression(
                            self.text(*at, at + len),
                            format_args!(
                                "second variable-length path expression after \"{}\"",
                                self.text(first.start(), first.end())
                            ),
                        ));
                    }
                    match (&open, kind) {
                        (Open::Closed, ExprKind::Optional(_) | ExprKind::Exploded(_)) => {
                            unreachable!("two variable-length expressions are refused above")
                        }
                        (_, ExprKind::Optional(_) | ExprKind::Exploded(_)) => {
                            close(&mut segments, std::mem::replace(&mut open, Open::Closed));
                            variable_length = Some((segments.len(), index));
                            segments.push(segment);
                            segment_start = *at;
                        }
                        (Open::Empty, _) => {
                            if segment.is_variable_length() {
                                variable_length = Some((segments.len(), index));
                            }
                            open = Open::Expr(segment);
                        }
                        (Open::Literal(_), _) => {
                            return Err(TemplateError::segment(
                                self.text(segment_start, self.segment_end(index)),
                                "mixed literal and expression in one segment",
                            ));
                        }
                        (Open::Expr(_) | Open::Closed, _) => {
                            return Err(TemplateError::segment(
                                self.text(segment_start, self.segment_end(index)),
                                "more than one expression in one segment",
                            ));
                        }
                    }
                }
            }
            self.pos += 1;
        }
        close(&mut segments, open);
        Ok((segments, variable_length.map(|(segment, _)| segment)))
    }

    fn query(&mut self) -> Result<Vec<usize>, TemplateError> {
        let items = self.items;
        let mut query = Vec::new();
        for item in &items[self.pos..] {
            match item {
                Item::Expr {
                    kind: ExprKind::Query(names),
                    at,
                    len,
                } => {
                    for name in names {
                        let id = self.intern(name);
                        if query.contains(&id) {
                            return Err(TemplateError::expression(
                                self.text(*at, at + len),
                                format_args!("query parameter \"{name}\" named twice"),
                            ));
                        }
                        query.push(id);
                    }
                }
                Item::Expr { at, len, .. } => {
                    return Err(TemplateError::expression(
                        self.text(*at, at + len),
                        "path expression after a query expression",
                    ));
                }
                Item::Char { ch, at } => {
                    return Err(TemplateError::new(format!(
                        "unsupported literal \"{ch}\" at byte {at} (literal text after a query expression)"
                    )));
                }
            }
        }
        Ok(query)
    }
}

/// Pushes the segment being built, if any.
fn close(segments: &mut Vec<Segment>, open: Open) {
    match open {
        Open::Empty => segments.push(Segment::Literal(String::new())),
        Open::Literal(text) => segments.push(Segment::Literal(text)),
        Open::Expr(segment) => segments.push(segment),
        Open::Closed => {}
    }
}
