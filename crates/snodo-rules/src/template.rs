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
mod tests;
