//! URI templates for resource templates: the RFC 6570 subset MCP servers use.
//!
//! A resource template such as `file:///{+path}` or
//! `https://{host}/repos{/owner}{?page,per_page}` is parsed once, when the
//! server is built (and already when the code compiles, for templates given to
//! `#[snodo::resource(uri_template = ...)]`), and then matched against the URIs
//! `resources/read` receives (`snodo` re-exports this module as
//! `snodo::resource::template`). The subset is deliberately small, so that a
//! URI splits one way only and matching is linear in the length of the URI:
//!
//! | Shape         | Matches                                                        |
//! |---------------|----------------------------------------------------------------|
//! | `{var}`       | one whole, non-empty path segment (or the whole authority)     |
//! | `{+path}`     | one or more non-empty segments; the value may contain `/`      |
//! | `{/var}`      | zero or one non-empty segment, introduced by `/`               |
//! | `{/var*}`     | zero or more non-empty segments, each introduced by `/`        |
//! | `{?q,lang}`   | named query parameters, in any order, each optional            |
//! | `{&x}`        | the same as `{?x}`                                             |
//!
//! The scheme is a literal matched case-insensitively. The authority is one
//! literal, one `{var}`, or empty when a `/` follows it (`file:///{+path}`).
//! A path holds at most one variable-length expression (`{+path}`, `{/var}`,
//! `{/var*}`); the literal and `{var}` segments around it are matched from
//! both ends.
//!
//! Values are percent-decoded once and must be valid UTF-8; `+` stays `+`.
//! A decoded value may contain `/`, `..` or NUL: applications that turn it
//! into a file path must sanitize it.

use std::fmt;
use std::str::FromStr;

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
    source: String,
    scheme: String,
    authority: Option<Authority>,
    segments: Vec<Segment>,
    /// Index in `segments` of the one variable-length expression, if any.
    variable_length: Option<usize>,
    /// Variable ids named by the query expressions, in template order.
    query: Vec<usize>,
    /// Distinct variable names, by id (order of first appearance).
    names: Vec<String>,
}

/// The authority part of a template that has `//` after its scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Authority {
    /// A literal host, possibly empty.
    Literal(String),
    /// `{var}`: the whole, non-empty host.
    Var(usize),
}

/// One slot in the `/`-separated path of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
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

/// Why [`UriTemplate::parse`] refused a template.
///
/// The message names the refused shape, for example
/// `unsupported template expression "{#frag}" (fragment expansion)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    message: String,
}

impl TemplateError {
    fn new(message: impl Into<String>) -> Self {
        TemplateError {
            message: message.into(),
        }
    }

    fn expression(text: &str, shape: impl fmt::Display) -> Self {
        TemplateError::new(format!(
            "unsupported template expression \"{text}\" ({shape})"
        ))
    }

    fn segment(text: &str, shape: &str) -> Self {
        TemplateError::new(format!("unsupported template segment \"{text}\" ({shape})"))
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

/// The shape of one supported `{...}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ExprKind {
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
enum Item {
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
    fn start(&self) -> usize {
        match self {
            Item::Char { at, .. } | Item::Expr { at, .. } => *at,
        }
    }

    fn end(&self) -> usize {
        match self {
            Item::Char { ch, at } => at + ch.len_utf8(),
            Item::Expr { at, len, .. } => at + len,
        }
    }

    /// Whether this item ends a path segment (or the authority): a literal
    /// `/`, an expression that introduces its own `/`, or a query expression.
    fn ends_segment(&self) -> bool {
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

    /// Matches `uri` against the template.
    ///
    /// Returns the bound variables in template order, or `None` when the URI
    /// does not match. Values are percent-decoded once and must be valid
    /// UTF-8 (`+` stays `+`); an absent optional variable is omitted, and
    /// `q=` binds `""`. A fragment, a port, userinfo, an empty query (`?`), a
    /// repeated query parameter or one the template doesn't name means no
    /// match. The work done is linear in the length of `uri`.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        if uri.contains('#') {
            return None;
        }
        let (scheme, rest) = uri.split_once(':')?;
        if !scheme.eq_ignore_ascii_case(&self.scheme) {
            return None;
        }
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (rest, None),
        };
        let mut bindings = Bindings::new(self.names.len());
        let path = match (&self.authority, rest.strip_prefix("//")) {
            (Some(authority), Some(after)) => {
                let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
                if !is_plain_host(host) {
                    return None;
                }
                match authority {
                    Authority::Literal(literal) if literal == host => {}
                    Authority::Literal(_) => return None,
                    Authority::Var(id) if !host.is_empty() => {
                        bindings.bind(*id, Some(percent_decode(host)?))?;
                    }
                    Authority::Var(_) => return None,
                }
                path
            }
            (None, None) => rest,
            _ => return None,
        };
        self.match_path(path, &mut bindings)?;
        self.match_query(query, &mut bindings)?;
        Some(bindings.finish(&self.names))
    }

    /// Whether `uri` matches the template: `self.matches(uri).is_some()`.
    ///
    /// Used to detect a fixed resource URI that a template already covers.
    pub fn matches_literal_uri(&self, uri: &str) -> bool {
        self.matches(uri).is_some()
    }

    fn match_path(&self, path: &str, bindings: &mut Bindings) -> Option<()> {
        let parts: Vec<&str> = path.split('/').collect();
        let Some(v) = self.variable_length else {
            if parts.len() != self.segments.len() {
                return None;
            }
            for (segment, part) in self.segments.iter().zip(&parts) {
                match_fixed(segment, part, bindings)?;
            }
            return Some(());
        };
        let prefix = &self.segments[..v];
        let suffix = &self.segments[v + 1..];
        let middle_end = parts.len().checked_sub(suffix.len())?;
        let middle = parts.get(prefix.len()..middle_end)?;
        for (segment, part) in prefix.iter().zip(&parts[..prefix.len()]) {
            match_fixed(segment, part, bindings)?;
        }
        for (segment, part) in suffix.iter().zip(&parts[middle_end..]) {
            match_fixed(segment, part, bindings)?;
        }
        if middle.iter().any(|part| part.is_empty()) {
            return None;
        }
        let (id, fits) = match self.segments[v] {
            Segment::Reserved(id) => (id, !middle.is_empty()),
            Segment::Optional(id) => (id, middle.len() <= 1),
            Segment::Exploded(id) => (id, true),
            Segment::Literal(_) | Segment::Var(_) => unreachable!("not variable-length"),
        };
        if !fits {
            return None;
        }
        let value = if middle.is_empty() {
            None
        } else {
            Some(percent_decode(&middle.join("/"))?)
        };
        bindings.bind(id, value)
    }

    fn match_query(&self, query: Option<&str>, bindings: &mut Bindings) -> Option<()> {
        let mut seen = vec![false; self.query.len()];
        if let Some(query) = query {
            if query.is_empty() {
                return None;
            }
            for pair in query.split('&') {
                let (name, value) = pair.split_once('=')?;
                let index = self.query.iter().position(|&id| self.names[id] == name)?;
                if std::mem::replace(&mut seen[index], true) {
                    return None;
                }
                bindings.bind(self.query[index], Some(percent_decode(value)?))?;
            }
        }
        for (index, &id) in self.query.iter().enumerate() {
            if !seen[index] {
                bindings.bind(id, None)?;
            }
        }
        Some(())
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

/// Matches one literal or `{var}` segment.
fn match_fixed(segment: &Segment, part: &str, bindings: &mut Bindings) -> Option<()> {
    match segment {
        Segment::Literal(literal) => (literal == part).then_some(()),
        Segment::Var(id) if !part.is_empty() => bindings.bind(*id, Some(percent_decode(part)?)),
        _ => None,
    }
}

/// Whether an authority is a bare host: no userinfo and no port.
fn is_plain_host(host: &str) -> bool {
    if host.contains('@') {
        return false;
    }
    match host.strip_prefix('[') {
        // An IP literal: everything up to the closing bracket, nothing after.
        Some(inner) => inner
            .find(']')
            .is_some_and(|close| close + 1 == inner.len()),
        None => !host.contains(':'),
    }
}

/// Decodes `%XX` escapes once; `None` for a bad escape or invalid UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let high = hex_value(*bytes.get(i + 1)?)?;
            let low = hex_value(*bytes.get(i + 2)?)?;
            out.push((high << 4) | low);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// The values bound so far, by variable id.
struct Bindings {
    slots: Vec<Slot>,
}

enum Slot {
    Unset,
    Absent,
    Present(String),
}

impl Bindings {
    fn new(len: usize) -> Self {
        Bindings {
            slots: (0..len).map(|_| Slot::Unset).collect(),
        }
    }

    /// Records one occurrence's value; every occurrence of a variable must
    /// agree (all absent, or all present with the same value).
    fn bind(&mut self, id: usize, value: Option<String>) -> Option<()> {
        let slot = &mut self.slots[id];
        match (&*slot, value) {
            (Slot::Unset, None) => *slot = Slot::Absent,
            (Slot::Unset, Some(value)) => *slot = Slot::Present(value),
            (Slot::Absent, None) => {}
            (Slot::Present(old), Some(value)) if *old == value => {}
            _ => return None,
        }
        Some(())
    }

    fn finish(self, names: &[String]) -> Vec<(String, String)> {
        names
            .iter()
            .zip(self.slots)
            .filter_map(|(name, slot)| match slot {
                Slot::Present(value) => Some((name.clone(), value)),
                Slot::Unset | Slot::Absent => None,
            })
            .collect()
    }
}

/// Splits a template into literal characters and checked expressions.
fn lex(template: &str) -> Result<Vec<Item>, TemplateError> {
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

/// Whether `scheme` is an RFC 3986 scheme: a letter, then letters, digits,
/// `+`, `-` or `.`.
pub(crate) fn is_valid_scheme(scheme: &str) -> bool {
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Expected = Option<&'static [(&'static str, &'static str)]>;

    const NONE: Expected = None;

    /// Matches every `(uri, expected bindings)` pair against `template`.
    fn run(template: &str, cases: &[(&str, Expected)]) {
        let parsed = UriTemplate::parse(template)
            .unwrap_or_else(|error| panic!("{template:?} should parse: {error}"));
        for &(uri, expected) in cases {
            let expected: Option<Vec<(String, String)>> = expected.map(|pairs| {
                pairs
                    .iter()
                    .map(|&(k, v)| (k.to_owned(), v.to_owned()))
                    .collect()
            });
            assert_eq!(
                parsed.matches(uri),
                expected,
                "template {template:?} against {uri:?}"
            );
            assert_eq!(
                parsed.matches_literal_uri(uri),
                expected.is_some(),
                "matches_literal_uri: template {template:?} against {uri:?}"
            );
        }
    }

    #[test]
    fn conformance_template() {
        run(
            "test://template/{id}/data",
            &[
                ("test://template/123/data", Some(&[("id", "123")])),
                (
                    "test://template/abc-def_1.2~x/data",
                    Some(&[("id", "abc-def_1.2~x")]),
                ),
                ("test://template//data", NONE),
                ("test://template/1/2/data", NONE),
                ("test://template/123/data/", NONE),
                ("test://template/123", NONE),
                ("test://template/123/Data", NONE),
                ("test://other/123/data", NONE),
                ("test:/template/123/data", NONE),
                ("test:template/123/data", NONE),
                ("test://template/123/data?x=1", NONE),
                ("test://template/123/data?", NONE),
                ("test://template/123/data#top", NONE),
                ("test://template/123/data#", NONE),
                ("test://template:80/123/data", NONE),
                ("test://template:/123/data", NONE),
                ("test://u@template/123/data", NONE),
                ("other://template/123/data", NONE),
                ("", NONE),
                ("test", NONE),
                ("test:", NONE),
            ],
        );
    }

    #[test]
    fn simple_segment() {
        run(
            "demo://greetings/{name}",
            &[
                ("demo://greetings/Ada", Some(&[("name", "Ada")])),
                (
                    "demo://greetings/Ada+Lovelace",
                    Some(&[("name", "Ada+Lovelace")]),
                ),
                (
                    "demo://greetings/Ada%20Lovelace",
                    Some(&[("name", "Ada Lovelace")]),
                ),
                ("demo://greetings/", NONE),
                ("demo://greetings", NONE),
                ("demo://greetings/a/b", NONE),
                ("demo://Greetings/Ada", NONE),
                ("demo://greetings/Ada?lang=en", NONE),
            ],
        );
        run(
            "db://{table}/{id}",
            &[
                ("db://users/42", Some(&[("table", "users"), ("id", "42")])),
                ("db://users/", NONE),
                ("db:///42", NONE),
                ("db://users/42/x", NONE),
            ],
        );
        run(
            "db://x/{a}/{b}/{c}",
            &[
                ("db://x/1/2/3", Some(&[("a", "1"), ("b", "2"), ("c", "3")])),
                ("db://x/1/2", NONE),
                ("db://x/1/2/3/4", NONE),
                ("db://x/1//3", NONE),
            ],
        );
        run(
            "urn:{id}",
            &[
                ("urn:abc", Some(&[("id", "abc")])),
                ("URN:abc", Some(&[("id", "abc")])),
                ("urn:", NONE),
                ("urn://abc", NONE),
                ("urn:a/b", NONE),
            ],
        );
    }

    #[test]
    fn authority_variable() {
        run(
            "https://{host}/status",
            &[
                (
                    "https://example.com/status",
                    Some(&[("host", "example.com")]),
                ),
                ("https://[::1]/status", Some(&[("host", "[::1]")])),
                ("https://ex%41mple/status", Some(&[("host", "exAmple")])),
                ("https:///status", NONE),
                ("https://example.com:443/status", NONE),
                ("https://[::1]:443/status", NONE),
                ("https://[::1/status", NONE),
                ("https://[/status", NONE),
                ("https://user@example.com/status", NONE),
                ("https://user:pw@example.com/status", NONE),
                ("https://example.com/status/", NONE),
                ("https://example.com", NONE),
            ],
        );
        run(
            "https://{host}",
            &[
                ("https://example.com", Some(&[("host", "example.com")])),
                ("https://example.com/", NONE),
                ("https://", NONE),
            ],
        );
        run(
            "https://example.com",
            &[
                ("https://example.com", Some(&[])),
                ("HTTPS://example.com", Some(&[])),
                ("https://example.com/", NONE),
                ("https://example.org", NONE),
                ("https://example.com:443", NONE),
            ],
        );
        run("https://[::1]/x", &[("https://[::1]/x", Some(&[]))]);
    }

    #[test]
    fn reserved_expansion() {
        run(
            "file:///{+path}",
            &[
                ("file:///etc/hosts", Some(&[("path", "etc/hosts")])),
                ("file:///README.md", Some(&[("path", "README.md")])),
                ("file:///a/b/c/d.txt", Some(&[("path", "a/b/c/d.txt")])),
                ("file:///a/../etc", Some(&[("path", "a/../etc")])),
                ("file:///a%20b/c%2Fd", Some(&[("path", "a b/c/d")])),
                ("FILE:///x", Some(&[("path", "x")])),
                ("file:///", NONE),
                ("file://", NONE),
                ("file:///a//b", NONE),
                ("file:///a/", NONE),
                ("file:////a", NONE),
                ("file://host/etc/hosts", NONE),
                ("file:/etc/hosts", NONE),
                ("file:///etc/hosts?x=1", NONE),
                ("file:///etc/hosts#L1", NONE),
            ],
        );
        run(
            "repo://{owner}/{+path}/raw",
            &[
                (
                    "repo://ada/src/lib.rs/raw",
                    Some(&[("owner", "ada"), ("path", "src/lib.rs")]),
                ),
                ("repo://ada/x/raw", Some(&[("owner", "ada"), ("path", "x")])),
                (
                    "repo://ada/raw/raw",
                    Some(&[("owner", "ada"), ("path", "raw")]),
                ),
                ("repo://ada/raw", NONE),
                ("repo://ada/x/raw/", NONE),
                ("repo://ada/x/raw2", NONE),
            ],
        );
        run(
            "repo://h/{a}/{+p}/{b}/end",
            &[
                (
                    "repo://h/1/x/y/z/2/end",
                    Some(&[("a", "1"), ("p", "x/y/z"), ("b", "2")]),
                ),
                (
                    "repo://h/1/x/2/end",
                    Some(&[("a", "1"), ("p", "x"), ("b", "2")]),
                ),
                ("repo://h/1/2/end", NONE),
                ("repo://h/1/x/2/end/", NONE),
            ],
        );
    }

    #[test]
    fn optional_segment() {
        run(
            "https://{host}/repos{/owner}{?page,per_page}",
            &[
                ("https://github.com/repos", Some(&[("host", "github.com")])),
                (
                    "https://github.com/repos/ada",
                    Some(&[("host", "github.com"), ("owner", "ada")]),
                ),
                (
                    "https://github.com/repos/ada?page=2",
                    Some(&[("host", "github.com"), ("owner", "ada"), ("page", "2")]),
                ),
                (
                    "https://github.com/repos?per_page=5&page=1",
                    Some(&[("host", "github.com"), ("page", "1"), ("per_page", "5")]),
                ),
                (
                    "https://github.com/repos/ada?page=",
                    Some(&[("host", "github.com"), ("owner", "ada"), ("page", "")]),
                ),
                ("https://github.com/repos/ada/x", NONE),
                ("https://github.com/repos/", NONE),
                ("https://github.com/reposada", NONE),
                ("https://github.com/repos?", NONE),
                ("https://github.com/repos?page=1&page=1", NONE),
                ("https://github.com/repos?page=1&page=2", NONE),
                ("https://github.com/repos?sort=asc", NONE),
                ("https://github.com/repos?page=1#x", NONE),
                ("https://github.com:443/repos", NONE),
                ("https://me@github.com/repos", NONE),
                ("https://github.com/users/ada", NONE),
            ],
        );
        run(
            "x://h{/a}/tail",
            &[
                ("x://h/tail", Some(&[])),
                ("x://h/1/tail", Some(&[("a", "1")])),
                ("x://h/1/2/tail", NONE),
                ("x://h//tail", NONE),
            ],
        );
    }

    #[test]
    fn exploded_segments() {
        run(
            "x://h/files{/path*}",
            &[
                ("x://h/files", Some(&[])),
                ("x://h/files/a", Some(&[("path", "a")])),
                ("x://h/files/a/b/c", Some(&[("path", "a/b/c")])),
                ("x://h/files/a%2Fb", Some(&[("path", "a/b")])),
                ("x://h/files/", NONE),
                ("x://h/files/a//b", NONE),
                ("x://h/filesa", NONE),
            ],
        );
        run(
            "x://h{/path*}",
            &[
                ("x://h", Some(&[])),
                ("x://h/a/b", Some(&[("path", "a/b")])),
                ("x://h/", NONE),
            ],
        );
        run(
            "x://h/{a}{/rest*}/{b}",
            &[
                ("x://h/1/2", Some(&[("a", "1"), ("b", "2")])),
                (
                    "x://h/1/m/n/2",
                    Some(&[("a", "1"), ("rest", "m/n"), ("b", "2")]),
                ),
                ("x://h/1", NONE),
                ("x://h/1/2/", NONE),
            ],
        );
    }

    #[test]
    fn query_parameters() {
        run(
            "s://h/search{?q,lang}",
            &[
                ("s://h/search", Some(&[])),
                ("s://h/search?q=rust", Some(&[("q", "rust")])),
                (
                    "s://h/search?lang=en&q=rust",
                    Some(&[("q", "rust"), ("lang", "en")]),
                ),
                ("s://h/search?q=", Some(&[("q", "")])),
                ("s://h/search?q=&lang=", Some(&[("q", ""), ("lang", "")])),
                ("s://h/search?q=a+b", Some(&[("q", "a+b")])),
                ("s://h/search?q=a%20b%26c", Some(&[("q", "a b&c")])),
                ("s://h/search?q=a=b", Some(&[("q", "a=b")])),
                ("s://h/search?q=a/b:c@d", Some(&[("q", "a/b:c@d")])),
                ("s://h/search?q=%E2%82%AC", Some(&[("q", "€")])),
                ("s://h/search?", NONE),
                ("s://h/search?q", NONE),
                ("s://h/search?=1", NONE),
                ("s://h/search?q=1&", NONE),
                ("s://h/search?&q=1", NONE),
                ("s://h/search?q=1&&lang=en", NONE),
                ("s://h/search?q=1&q=2", NONE),
                ("s://h/search?q=1&q=1", NONE),
                ("s://h/search?Q=1", NONE),
                ("s://h/search?q%3D1", NONE),
                ("s://h/search?q=1&page=2", NONE),
                ("s://h/search?q=%zz", NONE),
                ("s://h/search?q=%FF", NONE),
                ("s://h/search?q=1#frag", NONE),
                ("s://h/search/?q=1", NONE),
                ("s://h/search/", NONE),
            ],
        );
        run(
            "s://h/search{?q}{&x}",
            &[
                ("s://h/search?x=1&q=2", Some(&[("q", "2"), ("x", "1")])),
                ("s://h/search?x=1", Some(&[("x", "1")])),
                ("s://h/search?x=1&x=1", NONE),
            ],
        );
        run(
            "s://h/search{&x}",
            &[
                ("s://h/search?x=1", Some(&[("x", "1")])),
                ("s://h/search", Some(&[])),
                ("s://h/search?x=", Some(&[("x", "")])),
                ("s://h/search?y=1", NONE),
                ("s://h/search&x=1", NONE),
                ("s://h/search?&x=1", NONE),
            ],
        );
        run(
            "s://h/search{&x,y}",
            &[("s://h/search?y=2&x=1", Some(&[("x", "1"), ("y", "2")]))],
        );
        run(
            "s://h{?q}",
            &[
                ("s://h?q=1", Some(&[("q", "1")])),
                ("s://h", Some(&[])),
                ("s://h/?q=1", NONE),
            ],
        );
        run(
            "s://h/{id}{?v}",
            &[
                ("s://h/7?v=1", Some(&[("id", "7"), ("v", "1")])),
                ("s://h/?v=1", NONE),
            ],
        );
        run(
            "s://h/plain",
            &[
                ("s://h/plain", Some(&[])),
                ("s://h/plain?", NONE),
                ("s://h/plain?a=1", NONE),
            ],
        );
    }

    #[test]
    fn percent_decoding() {
        run(
            "t://h/{v}",
            &[
                ("t://h/a%2Fb", Some(&[("v", "a/b")])),
                ("t://h/a%2fb", Some(&[("v", "a/b")])),
                ("t://h/%25", Some(&[("v", "%")])),
                ("t://h/%2541", Some(&[("v", "%41")])),
                ("t://h/%00", Some(&[("v", "\0")])),
                ("t://h/..", Some(&[("v", "..")])),
                ("t://h/%2E%2E", Some(&[("v", "..")])),
                ("t://h/%C3%A9t%C3%A9", Some(&[("v", "été")])),
                ("t://h/été", Some(&[("v", "été")])),
                ("t://h/a+b", Some(&[("v", "a+b")])),
                ("t://h/%2B", Some(&[("v", "+")])),
                ("t://h/%3F%23", Some(&[("v", "?#")])),
                ("t://h/%FF", NONE),
                ("t://h/%C3", NONE),
                ("t://h/%C3%28", NONE),
                ("t://h/%ED%A0%80", NONE),
                ("t://h/%zz", NONE),
                ("t://h/%", NONE),
                ("t://h/%4", NONE),
                ("t://h/a%", NONE),
                ("t://h/%%41", NONE),
                ("t://h/%+1", NONE),
            ],
        );
        // `%2F` decodes to `/` but does not split segments.
        run(
            "t://h/{v}/end",
            &[
                ("t://h/a%2Fb/end", Some(&[("v", "a/b")])),
                ("t://h/a/b/end", NONE),
            ],
        );
        run(
            "t://h/{+p}",
            &[
                ("t://h/a/%41", Some(&[("p", "a/A")])),
                ("t://h/a/%FF", NONE),
                ("t://h/a/%g0", NONE),
            ],
        );
        // Literal segments compare the raw text: no decoding.
        run(
            "t://h/data",
            &[("t://h/data", Some(&[])), ("t://h/%64ata", NONE)],
        );
    }

    #[test]
    fn scheme_is_case_insensitive() {
        run(
            "test://template/{id}/data",
            &[
                ("TEST://template/1/data", Some(&[("id", "1")])),
                ("TeSt://template/1/data", Some(&[("id", "1")])),
                ("tests://template/1/data", NONE),
                ("tes://template/1/data", NONE),
                // Only the scheme: the authority literal is compared exactly.
                ("test://TEMPLATE/1/data", NONE),
            ],
        );
        run(
            "TEST://template/{id}/data",
            &[("test://template/1/data", Some(&[("id", "1")]))],
        );
        run(
            "my+app.v-1://x/{id}",
            &[("MY+APP.V-1://x/1", Some(&[("id", "1")]))],
        );
    }

    #[test]
    fn repeated_variable_must_agree() {
        run(
            "r://h/{id}/copy/{id}",
            &[
                ("r://h/1/copy/1", Some(&[("id", "1")])),
                ("r://h/1/copy/%31", Some(&[("id", "1")])),
                ("r://h/1/copy/2", NONE),
            ],
        );
        run(
            "r://{id}/{id}",
            &[("r://a/a", Some(&[("id", "a")])), ("r://a/b", NONE)],
        );
        run(
            "r://h/{id}{?id}",
            &[
                ("r://h/1?id=1", Some(&[("id", "1")])),
                ("r://h/1", NONE),
                ("r://h/1?id=2", NONE),
            ],
        );
        run(
            "r://h{/id}{?id}",
            &[
                ("r://h", Some(&[])),
                ("r://h/1?id=1", Some(&[("id", "1")])),
                ("r://h/1", NONE),
                ("r://h?id=1", NONE),
            ],
        );
    }

    #[test]
    fn empty_authority() {
        run(
            "file:///etc/{name}",
            &[
                ("file:///etc/hosts", Some(&[("name", "hosts")])),
                ("file://localhost/etc/hosts", NONE),
                ("file:/etc/hosts", NONE),
            ],
        );
        run("file:///", &[("file:///", Some(&[])), ("file://", NONE)]);
    }

    #[test]
    fn accessors() {
        let source = "r://{host}/{id}/x/{id}{?q}{&lang}";
        let template = UriTemplate::parse(source).unwrap();
        assert_eq!(template.as_str(), source);
        assert_eq!(template.to_string(), source);
        assert_eq!(
            template.variables().collect::<Vec<_>>(),
            ["host", "id", "q", "lang"]
        );
        assert_eq!(source.parse::<UriTemplate>(), Ok(template));
        let plain = UriTemplate::parse("docs://readme").unwrap();
        assert_eq!(plain.variables().count(), 0);
        assert!(plain.matches_literal_uri("docs://readme"));
        assert!(!plain.matches_literal_uri("docs://readme2"));
    }

    #[test]
    fn refused_shapes_are_named() {
        let long = format!("x://h/{}", "a".repeat(1020));
        let many: String = (0..33).map(|i| format!("/{{v{i}}}")).collect();
        let many = format!("x://h{many}");
        let many_query: Vec<String> = (0..33).map(|i| format!("q{i}")).collect();
        let many_query = format!("x://h{{?{}}}", many_query.join(","));
        let cases: &[(&str, &str)] = &[
            (
                "docs://{#frag}",
                "unsupported template expression \"{#frag}\" (fragment expansion)",
            ),
            ("docs://h/{#frag}", "\"{#frag}\" (fragment expansion)"),
            ("docs://h/{id:3}", "\"{id:3}\" (prefix modifier)"),
            ("docs://h/{+id:3}", "\"{+id:3}\" (prefix modifier)"),
            ("docs://h/{?q:3}", "\"{?q:3}\" (prefix modifier)"),
            ("docs://h/file{.ext}", "\"{.ext}\" (label expansion)"),
            ("docs://h/{.}", "\"{.}\" (label expansion)"),
            ("docs://h/{;x}", "\"{;x}\" (path-style parameters)"),
            ("docs://h/{=x}", "\"{=x}\" (reserved operator \"=\")"),
            ("docs://h/{!x}", "reserved operator \"!\""),
            ("docs://h/{@x}", "reserved operator \"@\""),
            ("docs://h/{|x}", "reserved operator \"|\""),
            ("docs://h/{,x}", "reserved operator \",\""),
            (
                "docs://h/v{version}",
                "unsupported template segment \"v{version}\" \
                 (mixed literal and expression in one segment)",
            ),
            (
                "docs://h/{version}v/x",
                "\"{version}v\" (mixed literal and expression",
            ),
            (
                "docs://h/{+path}.json",
                "\"{+path}.json\" (mixed literal and expression",
            ),
            (
                "docs://h/x{+path}",
                "\"x{+path}\" (mixed literal and expression",
            ),
            (
                "docs://h/repos{/owner}x",
                "\"{/owner}x\" (mixed literal and expression",
            ),
            (
                "docs://h/{a}{b}",
                "\"{a}{b}\" (more than one expression in one segment)",
            ),
            (
                "docs://h/{/a}{b}",
                "\"{/a}{b}\" (more than one expression in one segment)",
            ),
            ("docs://h/{a,b}", "\"{a,b}\" (multi-variable expression)"),
            ("docs://h/{+a,b}", "\"{+a,b}\" (multi-variable expression)"),
            ("docs://h{/a,b}", "\"{/a,b}\" (multi-variable expression)"),
            (
                "docs://h/{a*}",
                "\"{a*}\" (explode modifier outside {/var*})",
            ),
            (
                "docs://h/{+a*}",
                "\"{+a*}\" (explode modifier outside {/var*})",
            ),
            (
                "docs://h/{?q*}",
                "\"{?q*}\" (explode modifier outside {/var*})",
            ),
            (
                "docs://h/{&q*}",
                "\"{&q*}\" (explode modifier outside {/var*})",
            ),
            (
                "docs://h/{id",
                "unbalanced braces in template: \"{\" at byte 9 is never closed",
            ),
            ("docs://h/{a{b}}", "\"{\" at byte 9 is never closed"),
            (
                "docs://h/id}",
                "unbalanced braces in template: \"}\" at byte 11 has no matching",
            ),
            ("docs://h/{a}}", "\"}\" at byte 12 has no matching \"{\""),
            (
                "docs://h/{}",
                "invalid variable name \"\" in template expression \"{}\"",
            ),
            (
                "docs://h/{+}",
                "invalid variable name \"\" in template expression \"{+}\"",
            ),
            (
                "docs://h{/}",
                "invalid variable name \"\" in template expression \"{/}\"",
            ),
            (
                "docs://h{/*}",
                "invalid variable name \"\" in template expression \"{/*}\"",
            ),
            (
                "docs://h{?}",
                "invalid variable name \"\" in template expression \"{?}\"",
            ),
            (
                "docs://h{?q,}",
                "invalid variable name \"\" in template expression \"{?q,}\"",
            ),
            (
                "docs://h/{a-b}",
                "invalid variable name \"a-b\" in template expression \"{a-b}\"",
            ),
            ("docs://h/{a b}", "invalid variable name \"a b\""),
            ("docs://h/{a..b}", "invalid variable name \"a..b\""),
            ("docs://h/{a.}", "invalid variable name \"a.\""),
            ("docs://h/{%41}", "invalid variable name \"%41\""),
            ("docs://h/{é}", "invalid variable name \"é\""),
            (
                &long,
                "template is 1026 bytes long (at most 1024 are allowed)",
            ),
            (&many, "template has 33 variables (at most 32 are allowed)"),
            (
                &many_query,
                "template has 33 variables (at most 32 are allowed)",
            ),
            (
                "docs://h/{+a}/{+b}",
                "\"{+b}\" (second variable-length path expression after \"{+a}\")",
            ),
            (
                "docs://h/{+a}{/b}",
                "\"{/b}\" (second variable-length path expression after \"{+a}\")",
            ),
            (
                "docs://h{/a}{/b}",
                "\"{/b}\" (second variable-length path expression after \"{/a}\")",
            ),
            (
                "docs://h{/a*}/x{/b*}",
                "\"{/b*}\" (second variable-length path expression after",
            ),
            (
                "docs://h{/a}/{+b}",
                "\"{+b}\" (second variable-length path expression after \"{/a}\")",
            ),
            (
                "docs://h/search?q={q}",
                "unsupported literal \"?\" at byte 15 (literal query string; use {?name})",
            ),
            (
                "docs://h/page#top",
                "unsupported literal \"#\" at byte 13 (fragment)",
            ),
            (
                "docs://h{?q}/x",
                "unsupported literal \"/\" at byte 12 (literal text after a query expression)",
            ),
            (
                "docs://h{?q}{/x}",
                "\"{/x}\" (path expression after a query expression)",
            ),
            (
                "docs://h{?q}{id}",
                "\"{id}\" (path expression after a query expression)",
            ),
            (
                "docs://h{?q}{&q}",
                "\"{&q}\" (query parameter \"q\" named twice)",
            ),
            (
                "docs://h{?q,q}",
                "\"{?q,q}\" (query parameter \"q\" named twice)",
            ),
            (
                "{scheme}://x",
                "template expression \"{scheme}\" (expression in the scheme)",
            ),
            ("x{s}://x", "\"{s}\" (expression in the scheme)"),
            ("//host/{id}", "template has no scheme"),
            ("", "template has no scheme"),
            ("noscheme", "template has no scheme"),
            ("1x://h", "template has no scheme"),
            ("a_b://h", "template has no scheme"),
            (
                "docs://{a}.example.com/x",
                "unsupported template authority \"{a}.example.com\" \
                 (mixed literal and expression; only a literal or one {var})",
            ),
            (
                "docs://{a}{b}/x",
                "authority \"{a}{b}\" (only a literal or one {var})",
            ),
            (
                "docs://{+host}/x",
                "authority \"{+host}\" (only a literal or one {var})",
            ),
            (
                "https://{host}{+path}",
                "authority \"{host}{+path}\" (only a literal or one {var})",
            ),
            (
                "docs://h:8080/x",
                "unsupported template authority \"h:8080\" (port or userinfo)",
            ),
            (
                "docs://u@h/x",
                "unsupported template authority \"u@h\" (port or userinfo)",
            ),
            (
                "file://",
                "unsupported template authority \"\" \
                 (an empty authority must be followed by \"/\")",
            ),
            (
                "file://{/p*}",
                "an empty authority must be followed by \"/\"",
            ),
            (
                "file://{?q}",
                "an empty authority must be followed by \"/\"",
            ),
        ];
        for &(template, expected) in cases {
            let message = match UriTemplate::parse(template) {
                Ok(parsed) => panic!("{template:?} should be refused, got {parsed:?}"),
                Err(error) => error.to_string(),
            };
            assert!(
                message.contains(expected),
                "{template:?}: {message:?} should contain {expected:?}"
            );
        }
    }

    #[test]
    fn limits_are_inclusive() {
        let exactly = format!("x://h/{}", "a".repeat(1018));
        assert_eq!(exactly.len(), 1024);
        assert!(UriTemplate::parse(&exactly).is_ok());
        let thirty_two: String = (0..32).map(|i| format!("/{{v{i}}}")).collect();
        let template = UriTemplate::parse(&format!("x://h{thirty_two}")).unwrap();
        assert_eq!(template.variables().count(), 32);
    }

    #[test]
    fn error_implements_std_error() {
        let error: Box<dyn std::error::Error> =
            Box::new(UriTemplate::parse("x://h/{#f}").unwrap_err());
        assert_eq!(
            error.to_string(),
            "unsupported template expression \"{#f}\" (fragment expansion)"
        );
    }

    #[test]
    fn large_uris_complete() {
        let big = "a".repeat(100 * 1024);
        let slashes = "a/".repeat(50 * 1024);
        let escapes = "%41".repeat(34 * 1024);
        let queries = "q=1&lang=2&".repeat(10 * 1024);
        let templates = [
            "file:///{+path}",
            "x://h/files{/path*}/end",
            "x://h/{a}/{b}/{c}",
            "x://h/{a}{/rest*}/{b}{?q,lang}",
            "x://{host}/{id}",
        ];
        let uris = [
            format!("file:///{big}"),
            format!("file:///{slashes}"),
            format!("x://h/files/{slashes}end"),
            format!("x://h/{escapes}"),
            format!("x://h/a/{slashes}b?{queries}"),
            format!("x://{big}/1"),
            big.clone(),
        ];
        for template in templates {
            let template = UriTemplate::parse(template).unwrap();
            for uri in &uris {
                let _ = template.matches(uri);
            }
        }
        let template = UriTemplate::parse("file:///{+path}").unwrap();
        let bound = template.matches(&format!("file:///{slashes}x")).unwrap();
        assert_eq!(bound[0].1.len(), slashes.len() + 1);
        let template = UriTemplate::parse("x://h/{v}").unwrap();
        let bound = template.matches(&format!("x://h/{escapes}")).unwrap();
        assert_eq!(bound[0].1, "A".repeat(34 * 1024));
    }

    fn fuzz_templates() -> Vec<UriTemplate> {
        [
            "test://template/{id}/data",
            "demo://greetings/{name}",
            "file:///{+path}",
            "https://{host}/repos{/owner}{?page,per_page}",
            "x://h/{a}{/rest*}/{b}{&x}",
            "r://{id}/{id}{?id}",
            "urn:{id}",
        ]
        .iter()
        .map(|t| UriTemplate::parse(t).unwrap())
        .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn matching_arbitrary_strings_never_panics(uri in ".{0,64}") {
            for template in fuzz_templates() {
                let _ = template.matches(&uri);
            }
        }

        #[test]
        fn matching_uri_like_strings_never_panics(
            prefix in "(test|file|https|x|r|urn|TEST)(:|://|:///)?",
            rest in "[a-z0-9/?&=%#:@\\[\\]{}+.é]{0,40}",
        ) {
            let uri = format!("{prefix}{rest}");
            for template in fuzz_templates() {
                let _ = template.matches(&uri);
            }
        }

        #[test]
        fn parsing_arbitrary_templates_never_panics(
            template in "([a-z]{1,3}:(//)?)?[a-z/{}+#./;?&=,*:0-9é]{0,30}",
            uri in "[a-z]{1,3}:[a-z/?&=%0-9]{0,20}",
        ) {
            if let Ok(parsed) = UriTemplate::parse(&template) {
                let _ = parsed.matches(&uri);
            }
        }

        #[test]
        fn segment_values_round_trip(id in "[A-Za-z0-9._~!$'()*+,;=:@-]{1,20}") {
            let template = UriTemplate::parse("test://template/{id}/data").unwrap();
            let uri = format!("test://template/{id}/data");
            prop_assert_eq!(
                template.matches(&uri),
                Some(vec![("id".to_owned(), id.clone())])
            );
        }
    }
}
