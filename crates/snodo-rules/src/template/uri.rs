//! RFC 3986 pieces: schemes, bare hosts and percent-decoding.

/// Whether an authority is a bare host: no userinfo and no port.
pub(super) fn is_plain_host(host: &str) -> bool {
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
pub(super) fn percent_decode(raw: &str) -> Option<String> {
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

/// Whether `scheme` is an RFC 3986 scheme: a letter, then letters, digits,
/// `+`, `-` or `.`.
pub(crate) fn is_valid_scheme(scheme: &str) -> bool {
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}
