//! The envelope of a message too long to decode, read from its first
//! bytes: its `id`, and whether it is a response. A client that drops an
//! oversized answer fails the call it answers with this, instead of
//! leaving the call to time out.

use serde_json::Value;

use super::RequestId;
use super::scan::string_end;

/// What the first bytes of a message say about it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Envelope {
    /// The `id` member, when it ends within the bytes read.
    pub(crate) id: Option<RequestId>,
    /// A `result` or `error` member starts within them.
    pub(crate) answers: bool,
    /// A `method` member starts within them (a request or notification).
    pub(crate) asks: bool,
}

impl Envelope {
    /// The id of the response these bytes begin: an `id`, a `result` or
    /// `error`, and no `method`.
    pub(crate) fn response_id(self) -> Option<RequestId> {
        (self.answers && !self.asks).then_some(self.id).flatten()
    }
}

/// Reads the top-level members of the JSON object `head` begins, until
/// `head` ends (a member whose value runs past the end is the last one
/// named).
pub(crate) fn envelope(head: &[u8]) -> Envelope {
    let mut out = Envelope::default();
    let head = super::strip_bom(head);
    let mut i = skip_ws(head, 0);
    if head.get(i) != Some(&b'{') {
        return out;
    }
    i += 1;
    loop {
        i = skip_ws(head, i);
        if head.get(i) != Some(&b'"') {
            return out;
        }
        let Some(end) = string_end(head, i + 1) else {
            return out;
        };
        let key = &head[i + 1..end - 1];
        i = skip_ws(head, end);
        if head.get(i) != Some(&b':') {
            return out;
        }
        i = skip_ws(head, i + 1);
        match key {
            b"result" | b"error" => out.answers = true,
            b"method" => out.asks = true,
            _ => {}
        }
        let Some(value_end) = value_end(head, i) else {
            return out;
        };
        if key == b"id" {
            out.id = serde_json::from_slice::<Value>(&head[i..value_end])
                .ok()
                .and_then(|v| RequestId::from_value(&v));
        }
        i = skip_ws(head, value_end);
        if head.get(i) != Some(&b',') {
            return out;
        }
        i += 1;
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index just past the JSON value that starts at `from`, or `None`
/// when it does not end within `bytes`.
fn value_end(bytes: &[u8], from: usize) -> Option<usize> {
    match bytes.get(from)? {
        b'"' => string_end(bytes, from + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = from;
            loop {
                match bytes.get(i)? {
                    b'"' => i = string_end(bytes, i + 1)?,
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        i += 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => i += 1,
                }
            }
        }
        // A number or literal ends where the member or object does; one
        // cut off by the end of `bytes` may be longer than it looks.
        _ => {
            let len = bytes[from..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(from + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(head: &str) -> Option<RequestId> {
        envelope(head.as_bytes()).response_id()
    }

    #[test]
    fn the_id_of_a_response_cut_short_is_read_from_its_head() {
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"#),
            Some(RequestId::Number(7))
        );
        assert_eq!(
            id(
                "\u{feff} { \"jsonrpc\" : \"2.0\", \"id\" : \"a,}\" , \"error\": {\"message\": \"xx"
            ),
            Some(RequestId::String("a,}".into()))
        );
        // Members before the id are skipped, nested and quoted alike.
        assert_eq!(
            id(r#"{"_x":{"a":[1,{"b":"}]"}]},"result":{},"id":-3,"more":"#),
            Some(RequestId::Number(-3))
        );
    }

    #[test]
    fn no_id_when_it_is_not_a_response_or_not_in_the_head() {
        // A request or notification of the server, whatever its id.
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"#),
            None
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","method":"x","params":{"#), None);
        // The id comes after a value the head cuts.
        assert_eq!(id(r#"{"jsonrpc":"2.0","result":{"text":"xxxx"#), None);
        // A number cut by the end of the head may have more digits.
        assert_eq!(id(r#"{"result":{},"id":12"#), None);
        assert_eq!(id("not json"), None);
        assert_eq!(id(""), None);
    }
}
