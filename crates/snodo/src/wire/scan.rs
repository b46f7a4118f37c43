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
pub(crate) fn scan(bytes: &[u8], max_depth: usize, max_digits: usize) -> Result<(), ScanError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut digits = 0usize;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        if b.is_ascii_digit() {
            digits += 1;
            if digits > max_digits {
                return Err(ScanError::NumberTooLong);
            }
            continue;
        }
        digits = 0;
        match b {
            b'"' => in_string = true,
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
    fn digit_runs_are_bounded() {
        let ok = format!("[{}]", "9".repeat(64));
        let long = format!("[{}]", "9".repeat(65));
        assert_eq!(scan(ok.as_bytes(), 8, 64), Ok(()));
        assert_eq!(scan(long.as_bytes(), 8, 64), Err(ScanError::NumberTooLong));
        let in_string = format!("[\"{}\"]", "9".repeat(200));
        assert_eq!(scan(in_string.as_bytes(), 8, 64), Ok(()));
    }
}
