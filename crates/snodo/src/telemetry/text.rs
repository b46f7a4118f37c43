//! Short attribute values written on the stack: a span's name, a request id
//! and addresses become `&str` fields, which a layer takes as they are
//! instead of formatting a `Display` value for each span.

use std::fmt::{self, Write as _};
use std::net::IpAddr;

/// Up to `N` bytes of text on the stack; longer text moves to the heap.
pub(crate) struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
    spilled: Option<String>,
}

impl<const N: usize> Text<N> {
    pub(crate) const fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
            spilled: None,
        }
    }

    /// `value` formatted.
    pub(crate) fn display(value: impl fmt::Display) -> Self {
        let mut text = Self::new();
        let _ = write!(text, "{value}");
        text
    }

    /// An integer, without the formatting machinery.
    pub(crate) fn int(n: i64) -> Self {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = n.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        let mut text = Self::new();
        if n < 0 {
            text.push(b"-");
        }
        text.push(&digits[at..]);
        text
    }

    /// A request id as `jsonrpc.request.id` shows it.
    pub(crate) fn request_id(id: &crate::wire::RequestId) -> Self {
        match id {
            crate::wire::RequestId::Number(n) => Self::int(*n),
            crate::wire::RequestId::String(s) => Self::display(s),
        }
    }

    /// An IP address as `Display` writes it (IPv4 without the formatting
    /// machinery).
    pub(crate) fn ip(ip: IpAddr) -> Self {
        let IpAddr::V4(v4) = ip else {
            return Self::display(ip);
        };
        // "255.255.255.255" at most.
        let mut out = [0u8; 15];
        let mut at = 0;
        for (i, octet) in v4.octets().into_iter().enumerate() {
            if i > 0 {
                out[at] = b'.';
                at += 1;
            }
            if octet >= 100 {
                out[at] = b'0' + octet / 100;
                at += 1;
            }
            if octet >= 10 {
                out[at] = b'0' + octet / 10 % 10;
                at += 1;
            }
            out[at] = b'0' + octet % 10;
            at += 1;
        }
        let mut text = Self::new();
        text.push(&out[..at]);
        text
    }

    /// `first`, a space and `second` (a span name).
    pub(crate) fn pair(first: &str, second: &str) -> Self {
        let mut text = Self::new();
        text.push(first.as_bytes());
        text.push(b" ");
        text.push(second.as_bytes());
        text
    }

    /// Appends ASCII or whole UTF-8 text.
    #[inline]
    fn push(&mut self, bytes: &[u8]) {
        if let Some(s) = &mut self.spilled {
            // Only ever called with whole UTF-8 sequences.
            s.push_str(std::str::from_utf8(bytes).unwrap_or_default());
        } else if self.len + bytes.len() <= N {
            self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            let mut s = String::with_capacity(self.len + bytes.len());
            s.push_str(self.as_str());
            s.push_str(std::str::from_utf8(bytes).unwrap_or_default());
            self.spilled = Some(s);
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match &self.spilled {
            Some(s) => s,
            // Only whole UTF-8 sequences are ever written to `buf`.
            None => std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default(),
        }
    }
}

impl<const N: usize> fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_display() {
        for n in [0, 7, -7, 10, 12345, i64::MAX, i64::MIN] {
            assert_eq!(Text::<24>::int(n).as_str(), n.to_string());
        }
        for ip in ["0.0.0.0", "127.0.0.1", "10.200.9.255", "::1", "fe80::1:2"] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(Text::<46>::ip(ip).as_str(), ip.to_string());
        }
        assert_eq!(
            Text::<128>::pair("tools/call", "add").as_str(),
            "tools/call add"
        );
        assert_eq!(Text::<4>::pair("ab", "cd").as_str(), "ab cd");
        let long = "é".repeat(40);
        let mut text = Text::<8>::new();
        text.write_str("ab").unwrap();
        text.write_str(&long).unwrap();
        assert_eq!(text.as_str(), format!("ab{long}"));
    }
}
