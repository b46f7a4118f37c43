//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3): a bounded
//! parser for what a server sends, and a builder for what snodo's resource
//! server sends.
//!
//! One header value may hold several challenges, and a response may carry
//! several headers; schemes and parameter names are case-insensitive, values
//! are tokens or quoted strings with `\` escapes.
//!
//! ```
//! use snodo::model::auth::challenge::{Challenge, parse};
//!
//! let header = r#"Bearer error="insufficient_scope", scope="files:write", resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp""#;
//! let found = parse(header).unwrap();
//! assert!(found[0].is("bearer"));
//! assert_eq!(found[0].param("SCOPE"), Some("files:write"));
//!
//! let sent = Challenge::new("Bearer").with("error", "invalid_token").to_string();
//! assert_eq!(sent, r#"Bearer error="invalid_token""#);
//! ```

use std::fmt;

/// Most challenges read from one response.
pub const MAX_CHALLENGES: usize = 16;
/// Most parameters read from one challenge.
pub const MAX_PARAMS: usize = 32;
/// Longest header value read, in bytes.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// One challenge: a scheme and either a `token68` or named parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme as written (`Bearer`, `DPoP`, `Basic`, ...).
    pub scheme: String,
    /// The `token68` form, if the challenge used it.
    pub token68: Option<String>,
    /// The parameters in order, names as written, values unquoted.
    pub params: Vec<(String, String)>,
}

/// Why a header value is not a list of challenges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChallengeError {
    /// The byte offset where parsing stopped.
    pub offset: usize,
    /// What was wrong there.
    pub reason: &'static str,
}

impl fmt::Display for ChallengeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed WWW-Authenticate at byte {}: {}",
            self.offset, self.reason
        )
    }
}

impl std::error::Error for ChallengeError {}

impl Challenge {
    /// A challenge of `scheme` without parameters.
    pub fn new(scheme: &str) -> Self {
        Self {
            scheme: scheme.to_string(),
            token68: None,
            params: Vec::new(),
        }
    }

    /// Adds a parameter (sent as a quoted string).
    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.params.push((name.to_string(), value.to_string()));
        self
    }

    /// Whether the scheme is `scheme`, ignoring case.
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The first parameter named `name`, ignoring case.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `scope` parameter split on spaces.
    pub fn scopes(&self) -> Vec<String> {
        self.param("scope")
            .map(|s| {
                s.split(' ')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl fmt::Display for Challenge {
    /// The header form: values quoted, `"` and `\` escaped, control
    /// characters replaced by spaces (a header value cannot carry them).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.scheme)?;
        if let Some(t) = &self.token68 {
            return write!(f, " {t}");
        }
        for (i, (name, value)) in self.params.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(name)?;
            f.write_str("=\"")?;
            for c in value.chars() {
                match c {
                    '"' | '\\' => write!(f, "\\{c}")?,
                    c if c.is_control() => f.write_str(" ")?,
                    c => write!(f, "{c}")?,
                }
            }
            f.write_str("\"")?;
        }
        Ok(())
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Skips whitespace and empty list elements (`a, , b`).
    fn skip_list_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.pos += 1;
        }
    }

    fn token(&mut self) -> &str {
        let start = self.pos;
        while self.peek().is_some_and(is_tchar) {
            self.pos += 1;
        }
        // tchar is ASCII, so the slice is valid UTF-8.
        std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or_default()
    }

    fn error(&self, reason: &'static str) -> ChallengeError {
        ChallengeError {
            offset: self.pos,
            reason,
        }
    }

    fn quoted(&mut self) -> Result<String, ChallengeError> {
        // At the opening quote.
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated quoted string")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b) if b != b'\r' && b != b'\n' => {
                            out.push(b);
                            self.pos += 1;
                        }
                        _ => return Err(self.error("bad escape in quoted string")),
                    }
                }
                Some(b'\r' | b'\n' | 0) => return Err(self.error("control byte in quoted string")),
                Some(b) => {
                    out.push(b);
                    self.pos += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.error("quoted string is not UTF-8"))
    }

    /// Whether a parameter (`token BWS "="` followed by a value) starts here.
    fn at_param(&self) -> bool {
        let mut i = self.pos;
        let start = i;
        while self.bytes.get(i).copied().is_some_and(is_tchar) {
            i += 1;
        }
        if i == start {
            return false;
        }
        while matches!(self.bytes.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if self.bytes.get(i) != Some(&b'=') {
            return false;
        }
        i += 1;
        while matches!(self.bytes.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        // `abc=` then the end or a comma is a token68, not a parameter.
        matches!(self.bytes.get(i), Some(b) if *b == b'"' || is_tchar(*b))
    }
}

/// Parses one `WWW-Authenticate` value into its challenges.
///
/// Bounded: at most [`MAX_HEADER_BYTES`] bytes, [`MAX_CHALLENGES`]
/// challenges and [`MAX_PARAMS`] parameters each; anything past a bound or
/// outside the grammar is an error, never a panic.
pub fn parse(header: &str) -> Result<Vec<Challenge>, ChallengeError> {
    if header.len() > MAX_HEADER_BYTES {
        return Err(ChallengeError {
            offset: MAX_HEADER_BYTES,
            reason: "header value too long",
        });
    }
    let mut c = Cursor {
        bytes: header.as_bytes(),
        pos: 0,
    };
    let mut out: Vec<Challenge> = Vec::new();
    c.skip_list_separators();
    while c.peek().is_some() {
        if out.len() == MAX_CHALLENGES {
            return Err(c.error("too many challenges"));
        }
        let scheme = c.token().to_string();
        if scheme.is_empty() {
            return Err(c.error("expected an auth scheme"));
        }
        let mut challenge = Challenge::new(&scheme);
        match c.peek() {
            None | Some(b',') => {}
            Some(b' ' | b'\t') => {
                c.skip_ws();
                if c.at_param() {
                    parse_params(&mut c, &mut challenge)?;
                } else if c.peek().is_some_and(is_token68_char) {
                    let start = c.pos;
                    while c.peek().is_some_and(is_token68_char) {
                        c.pos += 1;
                    }
                    while c.peek() == Some(b'=') {
                        c.pos += 1;
                    }
                    challenge.token68 = Some(header[start..c.pos].to_string());
                    c.skip_ws();
                    if !matches!(c.peek(), None | Some(b',')) {
                        return Err(c.error("unexpected byte after token68"));
                    }
                }
            }
            Some(_) => return Err(c.error("unexpected byte after the scheme")),
        }
        out.push(challenge);
        c.skip_list_separators();
    }
    Ok(out)
}

fn parse_params(c: &mut Cursor<'_>, challenge: &mut Challenge) -> Result<(), ChallengeError> {
    loop {
        if challenge.params.len() == MAX_PARAMS {
            return Err(c.error("too many parameters"));
        }
        let name = c.token().to_string();
        c.skip_ws();
        // at_param promised the `=`.
        c.pos += 1;
        c.skip_ws();
        let value = if c.peek() == Some(b'"') {
            c.quoted()?
        } else {
            c.token().to_string()
        };
        challenge.params.push((name, value));
        c.skip_ws();
        match c.peek() {
            None => return Ok(()),
            Some(b',') => {
                c.skip_list_separators();
                if !c.at_param() {
                    // The next challenge starts here (or the header ends).
                    return Ok(());
                }
            }
            Some(_) => return Err(c.error("expected `,` between parameters")),
        }
    }
}

/// Every challenge of every value in `values` (several `WWW-Authenticate`
/// headers), skipping values that do not parse.
pub fn parse_all<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<Challenge> {
    let mut out = Vec::new();
    for value in values {
        if let Ok(found) = parse(value) {
            for challenge in found {
                if out.len() < MAX_CHALLENGES {
                    out.push(challenge);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
