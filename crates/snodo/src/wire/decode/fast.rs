//! The usual request or notification, decoded in one pass over its bytes.
//!
//! The envelope, `params` and `_meta` are read member by member, values are
//! built as they are read, and the bounds of [`Limits`] are kept on the way
//! (nesting depth, digits in one number literal), so the bytes are walked
//! once. Anything unusual gives `None` and the value path of
//! [`decode`](super::decode()) decides: another member than the four of
//! the envelope, a repeated one, an id that is not an integer or a string
//! without escapes, a `jsonrpc` other than
//! `"2.0"`, a bound passed, malformed JSON. What this path takes, the value
//! path decodes alike (the `request_decode_agree` fuzz target checks it).
//!
//! Numbers other than plain non-negative integers and strings with escapes
//! are read by serde_json from their own text, so that both paths read them
//! with the same rules (rounding, surrogates).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Limits, Message, Notification, Request};
use crate::wire::RequestId;
use crate::wire::meta::{Meta, MetaParts};
use crate::wire::target::Aside;

/// The key serde_json's `arbitrary_precision` reads as a number: an object
/// with it is left to the value path.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Deepest nesting this path follows, whatever the limit: it recurses, and
/// deeper messages are left to the value path (whose parser has a limit of
/// its own).
const MAX_RECURSION: usize = 100;

/// Most digits of an integer read without serde_json: any such integer fits
/// a `u64`.
const PLAIN_DIGITS: usize = 18;

/// The message in `bytes`, when it is the usual request or notification.
pub(super) fn decode(bytes: &[u8], limits: &Limits) -> Option<Message> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut reader = Reader {
        text,
        bytes,
        at: 0,
        depth: 0,
        max_depth: limits.max_depth.min(MAX_RECURSION),
        max_digits: limits.max_digits,
        unplain: false,
    };
    reader.message()
}

/// The envelope's members, as they arrive in any order.
#[derive(Default)]
struct Envelope {
    seen: u8,
    jsonrpc: bool,
    id: Option<RequestId>,
    method: Option<String>,
    params: Option<(Map<String, Value>, Meta, Aside)>,
}

/// A position in the text being read.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
    max_depth: usize,
    max_digits: usize,
    /// Set on reading an escape or an exponent: text with neither, once
    /// checked here, reads without error (see [`MetaParts::put_text`]).
    unplain: bool,
}

impl<'a> Reader<'a> {
    fn message(&mut self) -> Option<Message> {
        let mut envelope = Envelope::default();
        self.object(|r, key| {
            let bit = match key.as_ref() {
                "jsonrpc" => 1,
                "id" => 2,
                "method" => 4,
                "params" => 8,
                _ => return None,
            };
            if envelope.seen & bit != 0 {
                return None;
            }
            envelope.seen |= bit;
            match bit {
                1 => envelope.jsonrpc = r.string_value()? == "2.0",
                2 => envelope.id = Some(r.id()?),
                4 => envelope.method = Some(r.string_value()?.into_owned()),
                _ => envelope.params = Some(r.params()?),
            }
            Some(())
        })?;
        self.skip_space();
        if self.at != self.bytes.len() || !envelope.jsonrpc {
            return None;
        }
        let method = envelope.method?;
        let (mut params, meta, aside) = envelope.params.unwrap_or_default();
        Some(match envelope.id {
            Some(id) => Message::Request(Request::assemble(id, method, params, meta, aside)),
            None => {
                // A notification keeps every member in its params.
                aside.restore(&mut params);
                if let Some(meta) = meta.into_value() {
                    params.insert("_meta".into(), meta);
                }
                Message::Notification(Notification { method, params })
            }
        })
    }

    /// `params`: an object, its `_meta` read in parts and the members that
    /// may name a target kept aside.
    fn params(&mut self) -> Option<(Map<String, Value>, Meta, Aside)> {
        let mut params = Map::new();
        let mut meta = Meta::Absent;
        let mut aside = Aside::default();
        self.object(|r, key| {
            if key == NUMBER_TOKEN {
                return None;
            }
            if key == "_meta" {
                meta = r.meta()?;
                return Some(());
            }
            let value = r.value()?;
            if let Some(value) = aside.keep(&key, value) {
                params.insert(key.into_owned(), value);
            }
            Some(())
        })?;
        Some((params, meta, aside))
    }

    /// `_meta`: an object read in parts, the client's name and capabilities
    /// kept as their checked text; any other value kept whole.
    fn meta(&mut self) -> Option<Meta> {
        if self.peek()? != b'{' {
            return self.value().map(Meta::Other);
        }
        let mut parts = MetaParts::default();
        self.object(|r, key| {
            if key == NUMBER_TOKEN {
                return None;
            }
            if MetaParts::keeps_text(&key) && r.peek()? == b'{' {
                let start = r.at;
                r.unplain = false;
                r.skip()?;
                return parts.put_text(key, &r.text[start..r.at], !r.unplain).ok();
            }
            let value = r.value()?;
            parts.put(key, value);
            Some(())
        })?;
        Some(Meta::Object(Box::new(parts)))
    }

    /// A request id: an integer in the range of `i64`, or a string without
    /// escapes that [`RequestId`] allows.
    fn id(&mut self) -> Option<RequestId> {
        match self.peek()? {
            b'"' => match self.string()? {
                Cow::Borrowed(text) => RequestId::from_text(text),
                Cow::Owned(_) => None,
            },
            b'-' | b'0'..=b'9' => match self.number()? {
                Value::Number(n) => n.as_i64().map(RequestId::Number),
                _ => None,
            },
            _ => None,
        }
    }

    /// Calls `member` with each key of the object that starts here, the
    /// reader at the member's value.
    fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        let mut more = self.open(b'}')?;
        while more {
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            member(self, key)?;
            more = self.after_item(b'}')?;
        }
        self.depth -= 1;
        Some(())
    }

    /// Calls `item` for each item of the array that starts here.
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        let mut more = self.open(b']')?;
        while more {
            item(self)?;
            more = self.after_item(b']')?;
        }
        self.depth -= 1;
        Some(())
    }

    /// Moves past the bracket here, one level deeper (within the bound);
    /// whether an item follows (else past `close` already).
    fn open(&mut self, close: u8) -> Option<bool> {
        self.at += 1;
        self.depth += 1;
        if self.depth > self.max_depth {
            return None;
        }
        let empty = self.peek()? == close;
        if empty {
            self.at += 1;
        }
        Some(!empty)
    }

    /// Moves past the comma or the `close` after an item: whether another
    /// item follows.
    fn after_item(&mut self, close: u8) -> Option<bool> {
        let next = self.peek()?;
        if next != b',' && next != close {
            return None;
        }
        self.at += 1;
        Some(next == b',')
    }

    /// The value that starts here.
    fn value(&mut self) -> Option<Value> {
        Some(match self.peek()? {
            b'{' => {
                let mut map = Map::new();
                self.object(|r, key| {
                    if key == NUMBER_TOKEN {
                        return None;
                    }
                    let value = r.value()?;
                    map.insert(key.into_owned(), value);
                    Some(())
                })?;
                Value::Object(map)
            }
            b'[' => {
                let mut items = Vec::new();
                self.array(|r| {
                    items.push(r.value()?);
                    Some(())
                })?;
                Value::Array(items)
            }
            b'"' => Value::String(self.string()?.into_owned()),
            b'-' | b'0'..=b'9' => self.number()?,
            _ => self.literal()?,
        })
    }

    /// Checks the value that starts here without building it: what
    /// [`value`](Self::value) would read, with the same bounds.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(|r, _| r.skip()),
            b'[' => self.array(Self::skip),
            b'"' => self.string().map(drop),
            b'-' | b'0'..=b'9' => self.number_end().map(drop),
            _ => self.literal().map(drop),
        }
    }

    /// A string value, read as [`string`](Self::string).
    fn string_value(&mut self) -> Option<Cow<'a, str>> {
        if self.peek()? != b'"' {
            return None;
        }
        self.string()
    }

    /// The string whose opening quote is here: borrowed from the text when
    /// it has no escape, else read by serde_json. A control character ends
    /// this path.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.at + 1;
        let end = special(self.bytes, start)?;
        match self.bytes[end] {
            b'"' => {
                self.at = end + 1;
                Some(Cow::Borrowed(&self.text[start..end]))
            }
            b'\\' => self.escaped_string(end),
            _ => None,
        }
    }

    /// The string whose opening quote is here and whose first escape is at
    /// `escape`.
    fn escaped_string(&mut self, mut escape: usize) -> Option<Cow<'a, str>> {
        self.unplain = true;
        let start = self.at;
        let end = loop {
            let at = special(self.bytes, escape + 2)?;
            match self.bytes[at] {
                b'"' => break at + 1,
                b'\\' => escape = at,
                _ => return None,
            }
        };
        self.at = end;
        serde_json::from_str(self.text.get(start..end)?)
            .ok()
            .map(Cow::Owned)
    }

    /// The number that starts here: a plain non-negative integer read
    /// here, any other read by serde_json from its text.
    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        let plain = self.number_end()?;
        let text = &self.text[start..self.at];
        if plain {
            let n = text
                .bytes()
                .fold(0u64, |n, digit| n * 10 + u64::from(digit - b'0'));
            return Some(Value::from(n));
        }
        serde_json::from_str(text).ok()
    }

    /// Moves past the number that starts here (JSON's grammar, each run of
    /// digits within the limit); whether it is a plain non-negative integer
    /// of at most [`PLAIN_DIGITS`] digits.
    fn number_end(&mut self) -> Option<bool> {
        let negative = self.bytes[self.at] == b'-';
        if negative {
            self.at += 1;
        }
        let first = *self.bytes.get(self.at)?;
        let int = self.digits()?;
        if first == b'0' && int > 1 {
            return None;
        }
        let mut plain = !negative && int <= PLAIN_DIGITS;
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            self.digits()?;
            plain = false;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            self.digits()?;
            plain = false;
            self.unplain = true;
        }
        Some(plain)
    }

    /// Moves past a run of digits: at least one, at most the limit.
    fn digits(&mut self) -> Option<usize> {
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let run = self.at - start;
        (run >= 1 && run <= self.max_digits).then_some(run)
    }

    /// `true`, `false` or `null`.
    fn literal(&mut self) -> Option<Value> {
        let rest = &self.bytes[self.at..];
        let (len, value) = if rest.starts_with(b"true") {
            (4, Value::Bool(true))
        } else if rest.starts_with(b"false") {
            (5, Value::Bool(false))
        } else if rest.starts_with(b"null") {
            (4, Value::Null)
        } else {
            return None;
        };
        self.at += len;
        Some(value)
    }

    /// The next byte that is not JSON whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }
}

/// The index of the first quote, backslash or control character at or
/// after `from`, eight bytes at a time.
fn special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        // The lowest byte flagged is exact (a borrow only flags bytes
        // above one that matched): a zero byte of `quote` or `backslash`,
        // or a byte of `word` under 0x20.
        let found = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word))
            & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes
        .get(at..)?
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(text: &str) -> Option<Message> {
        decode(text.as_bytes(), &Limits::default())
    }

    #[test]
    fn special_bytes_are_found_at_any_offset() {
        for len in 0..40 {
            for special_byte in [b'"', b'\\', 0x00, 0x1f] {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    // Bytes around the first one found do not matter.
                    bytes.iter_mut().skip(at + 1).for_each(|b| *b = 0x7f);
                    bytes[at] = special_byte;
                    assert_eq!(special(&bytes, 0), Some(at), "{len} {at} {special_byte}");
                }
                let plain: Vec<u8> = (0..len)
                    .map(|i| [b'a', 0x20, 0xc3, 0x7f, b'!'][i % 5])
                    .collect();
                assert_eq!(special(&plain, 0), None);
            }
        }
    }

    #[test]
    fn values_are_read_as_serde_json_reads_them() {
        for value in [
            r#"{"a":[1,2.5,-3,0,-0,1e3,1E-2,12345678901234567890,true,false,null,"x\u00e9\n",{}]}"#,
            r#"{"a" : { "b" :[ ] , "c":"" } }"#,
            r#"{"a":123456789012345678}"#,
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{value}}}"#);
            let Some(Message::Request(request)) = fast(&text) else {
                panic!("{text} not taken")
            };
            let want: Value = serde_json::from_str(value).unwrap();
            assert_eq!(Value::Object(request.into_params()), want, "{text}");
        }
    }

    #[test]
    fn malformed_or_unbounded_input_is_left_to_the_value_path() {
        for params in [
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":tru}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":"\x"}"#,
            r#"{"a":1e400}"#,
            r#"{"$serde_json::private::Number":"5"}"#,
            r#"{"_meta":{"io.modelcontextprotocol/clientInfo":{"a":01}}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/clientInfo":{"a":"b"}"#,
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#);
            assert_eq!(fast(&text), None, "{text}");
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}{}}}}}"#,
            "[".repeat(62),
            "]".repeat(62)
        );
        assert!(fast(&deep).is_some());
        let deeper = deep.replacen('[', "[[", 1).replacen(']', "]]", 1);
        assert_eq!(fast(&deeper), None);
        let tight = Limits::default().max_depth(200).max_digits(3);
        let very_deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}{}}}}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        assert_eq!(decode(very_deep.as_bytes(), &tight), None);
        let digits = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1234}}"#;
        assert_eq!(decode(digits.as_bytes(), &tight), None);
        let id_digits = r#"{"jsonrpc":"2.0","id":1234,"method":"m"}"#;
        assert_eq!(decode(id_digits.as_bytes(), &tight), None);
        assert!(fast(r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#).is_none());
    }
}
