//! A single pass over raw bytes that enforces structural bounds before the JSON
//! parser allocates anything: nesting depth and the length of number literals.

/// Why the scan refused a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// Arrays and objects nest deeper than allowed.
    TooDeep,
    /// A number literal has more digits than allowed.
    NumberTooLong,
}

/// Checks nesting depth and digit runs outside strings. Linear, no allocation.
///
/// A string is skipped to its closing quote with `memchr2`, which looks for
/// the next quote or backslash many bytes at a time: most of a message's
/// bytes are inside strings.
pub(crate) fn scan(bytes: &[u8], max_depth: usize, max_digits: usize) -> Result<(), ScanError> {
    let mut depth = 0usize;
    let mut digits = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        if b.is_ascii_digit() {
            digits += 1;
            if digits > max_digits {
                return Err(ScanError::NumberTooLong);
            }
            continue;
        }
        digits = 0;
        match b {
            b'"' => match string_end(bytes, i) {
                Some(end) => i = end,
                // Unterminated: the parser reports it.
                None => return Ok(()),
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(ScanError::TooDeep);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The index just past the quote that closes the string whose contents
/// start at `from`, or `None` when the string does not end.
pub(super) fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', bytes.get(from..)?)?;
        if bytes[at] == b'"' {
            return Some(at + 1);
        }
        // A backslash escapes the byte after it.
        from = at + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_only_outside_strings() {
        assert_eq!(scan(b"[[[]]]", 3, 64), Ok(()));
        assert_eq!(scan(b"[[[[]]]]", 3, 64), Err(ScanError::TooDeep));
        assert_eq!(scan(br#"["[[[[[[["]"#, 3, 64), Ok(()));
        assert_eq!(scan(br#"["\"[[[[[[["]"#, 3, 64), Ok(()));
    }

    #[test]
    fn strings_end_at_their_first_unescaped_quote() {
        assert_eq!(scan(br#"["\\"[[[[]"#, 3, 64), Err(ScanError::TooDeep));
        assert_eq!(scan(br#"["\\\"[[[[]"]"#, 3, 64), Ok(()));
        assert_eq!(scan(br#"["a\"#, 3, 64), Ok(()));
        assert_eq!(scan(br#"["a\\"#, 3, 64), Ok(()));
        assert_eq!(scan(br#"["a"#, 3, 64), Ok(()));
        assert_eq!(scan(br#"["a",[[[]]]]"#, 3, 64), Err(ScanError::TooDeep));
        assert_eq!(scan(br#"{"k":"v"}"#, 1, 64), Ok(()));
    }

    #[test]
    fn digit_runs_are_bounded() {
        let ok = format!("[{}]", "9".repeat(64));
        let long = format!("[{}]", "9".repeat(65));
        assert_eq!(scan(ok.as_bytes(), 8, 64), Ok(()));
        assert_eq!(scan(long.as_bytes(), 8, 64), Err(ScanError::NumberTooLong));
        let in_string = format!("[\"{}\"]", "9".repeat(200));
        assert_eq!(scan(in_string.as_bytes(), 8, 64), Ok(()));
    }
}
