//! Text from a server, made safe to show on a terminal.
//!
//! Whatever a server sends — names, titles, descriptions, URIs, results,
//! log and progress messages, questions, errors, its stderr — is printed
//! through [`line`], [`block`] or [`json`], whether the output is a
//! terminal or a pipe. They write as a visible escape every character a
//! terminal would act on, or that would make it show something other than
//! the text:
//!
//! - the control characters: C0 (U+0000–U+001F), DEL (U+007F) and C1
//!   (U+0080–U+009F). ESC and CSI start the sequences that colour, move the
//!   cursor, clear the screen, set the window title or write the clipboard;
//!   a carriage return or a backspace writes over what was shown;
//! - the bidirectional formatting characters (U+061C, U+200E, U+200F,
//!   U+202A–U+202E, U+2066–U+2069), which show text in another order than
//!   it has;
//! - the line and paragraph separators (U+2028, U+2029);
//! - invisible characters that hide or split text: U+200B (zero width
//!   space), U+2060–U+2064 and U+206A–U+206F, U+FEFF, U+FFF9–U+FFFB and
//!   the tag characters U+E0000–U+E007F.
//!
//! The zero width joiner and non-joiner (U+200C, U+200D) and the variation
//! selectors stay: emoji and several scripts need them.
//!
//! A character below U+0080 is written `\x1b` (two hex digits), any other
//! `\u{202e}`, as Rust writes them. The escape is for showing, not for
//! reading back: a backslash the server sent stays as it is.
//!
//! The CLI's own colours are added after the server's text has been
//! escaped, so they still work.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` for a field shown on one line (a name, a title, a URI, a status
/// message): line breaks and tabs are escaped too.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// `text` shown as a block of lines (a tool's text result, a resource's
/// text, instructions, captured stderr): its line feeds and tabs stay.
pub(crate) fn block(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// JSON text as `serde_json` writes it, with the characters [`line`]
/// escapes that `serde_json` leaves raw (DEL, C1, bidi, separators,
/// invisible characters) written as JSON escapes (`\u009b`): the same JSON
/// value, safe to show.
///
/// Only string contents can hold such characters in JSON text (outside
/// strings it has ASCII only), and `serde_json` already escapes C0 in
/// strings, so any character replaced here is within a string.
pub(crate) fn json(text: &str) -> Cow<'_, str> {
    let Some(start) = text.find(|c| escaped(c, true)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..start]);
    for c in text[start..].chars() {
        if escaped(c, true) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every character [`escaped`] written as an escape.
fn escape(text: &str, multiline: bool) -> Cow<'_, str> {
    let Some(start) = text.find(|c| escaped(c, multiline)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..start]);
    for c in text[start..].chars() {
        if !escaped(c, multiline) {
            out.push(c);
        } else if c.is_ascii() {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is shown escaped; the line feed and the tab are not in
/// `multiline` text.
fn escaped(c: char, multiline: bool) -> bool {
    match c {
        '\n' | '\t' => !multiline,
        // C0, DEL and C1.
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        // Bidirectional formatting.
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            true
        }
        // Line and paragraph separators.
        '\u{2028}' | '\u{2029}' => true,
        // Invisible characters that hide or split text.
        '\u{200b}'
        | '\u{2060}'..='\u{2064}'
        | '\u{206a}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_is_borrowed() {
        for text in ["", "plain text", "ünïcödé — 日本語 🙂", "a\\x1b stays"] {
            assert!(matches!(line(text), Cow::Borrowed(t) if t == text));
            assert!(matches!(block(text), Cow::Borrowed(t) if t == text));
            assert!(matches!(json(text), Cow::Borrowed(t) if t == text));
        }
        assert!(matches!(block("two\nlines\tand a tab"), Cow::Borrowed(_)));
    }

    #[test]
    fn terminal_sequences_are_escaped() {
        let vectors = [
            ("\x1b]52;c;SGVsbG8=\x07", r"\x1b]52;c;SGVsbG8=\x07"),
            ("\x1b[2J\x1b[H", r"\x1b[2J\x1b[H"),
            ("\x1b]0;title\x07", r"\x1b]0;title\x07"),
            ("\u{9b}31m", r"\u{9b}31m"),
            ("ok\rFAKE", r"ok\x0dFAKE"),
            ("a\x08b\x7fc\0d", r"a\x08b\x7fc\x00d"),
            ("\u{80}\u{85}\u{9f}", r"\u{80}\u{85}\u{9f}"),
            ("abc\u{202e}fed", r"abc\u{202e}fed"),
            (
                "\u{61c}\u{200e}\u{200f}\u{202a}\u{2066}\u{2069}",
                r"\u{61c}\u{200e}\u{200f}\u{202a}\u{2066}\u{2069}",
            ),
            ("a\u{2028}b\u{2029}c", r"a\u{2028}b\u{2029}c"),
            (
                "hid\u{200b}den\u{2060}\u{feff}\u{fffb}\u{e0041}",
                r"hid\u{200b}den\u{2060}\u{feff}\u{fffb}\u{e0041}",
            ),
        ];
        for (raw, shown) in vectors {
            assert_eq!(line(raw), shown, "line({raw:?})");
            assert_eq!(block(raw), shown, "block({raw:?})");
        }
    }

    #[test]
    fn a_line_escapes_line_breaks_and_tabs_a_block_keeps_them() {
        assert_eq!(line("name\nFAKE\tx"), r"name\x0aFAKE\x09x");
        assert_eq!(block("name\nFAKE\tx"), "name\nFAKE\tx");
        assert_eq!(block("a\r\nb"), "a\\x0d\nb");
    }

    #[test]
    fn joiners_and_variation_selectors_stay() {
        for text in ["👩\u{200d}💻", "क्\u{200c}ष", "☺\u{fe0f}", "é"] {
            assert_eq!(line(text), text);
        }
    }

    #[test]
    fn json_keeps_the_value_and_escapes_as_json() {
        let value = serde_json::json!({
            "k\u{9b}": "\x1b]52;c;SGVsbG8=\x07\u{9b}31m\r\u{202e}\x7f\u{e0041}\nend",
        });
        let text = serde_json::to_string(&value).unwrap();
        let shown = json(&text);
        assert_eq!(
            shown,
            r#"{"k\u009b":"\u001b]52;c;SGVsbG8=\u0007\u009b31m\r\u202e\u007f\udb40\udc41\nend"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
        // Pretty JSON keeps its layout.
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        assert!(json(&pretty).starts_with("{\n  \"k\\u009b\": "));
    }
}
