//! Newline-delimited framing, for both ends of a stdio connection: bounded
//! lines, read without losing a partial line to a cancelled read.

use std::io;

use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

/// One line read from the input.
pub(crate) enum Line {
    /// A complete line (without the newline).
    Data(Vec<u8>),
    /// A line longer than the limit: its first [`HEAD`] bytes (at most);
    /// the rest were discarded (the client reads the head; the server
    /// answers without it).
    TooLong(#[cfg_attr(not(feature = "client"), allow(dead_code))] Vec<u8>),
    /// End of input.
    Eof,
}

/// How much of a line over the limit is kept, to say what it was.
pub(crate) const HEAD: usize = 4096;

/// Reads bounded lines. Partial lines live in the reader, not in the
/// future, so a read abandoned by `select!` loses nothing.
pub(crate) struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    overflow: bool,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(input: R, max: usize) -> Self {
        Self {
            reader: BufReader::new(input),
            line: Vec::new(),
            overflow: false,
            max,
        }
    }

    /// The next line of at most `max` bytes; the rest of a longer one is
    /// discarded. Cancel-safe.
    pub(crate) async fn next(&mut self) -> io::Result<Line> {
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                let line = std::mem::take(&mut self.line);
                return Ok(if std::mem::take(&mut self.overflow) {
                    Line::TooLong(line)
                } else if line.is_empty() {
                    Line::Eof
                } else {
                    Line::Data(line)
                });
            }
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if self.overflow {
                let room = HEAD.saturating_sub(self.line.len());
                self.line.extend_from_slice(&chunk[..room.min(chunk.len())]);
            } else if self.line.len() + chunk.len() > self.max {
                self.overflow = true;
                let room = HEAD.saturating_sub(self.line.len());
                self.line.extend_from_slice(&chunk[..room.min(chunk.len())]);
                self.line.truncate(HEAD);
                self.line.shrink_to_fit();
            } else {
                self.line.extend_from_slice(chunk);
            }
            let used = done.unwrap_or(buf.len());
            self.reader.consume(used);
            if done.is_some() {
                let line = std::mem::take(&mut self.line);
                return Ok(if std::mem::take(&mut self.overflow) {
                    Line::TooLong(line)
                } else {
                    Line::Data(line)
                });
            }
        }
    }
}

impl<R> LineReader<R> {
    /// Takes back the buffer of a line the caller is done with, so that the
    /// next line is read into it rather than into a new allocation (a
    /// buffer grown past [`HEAD`] by a long line is let go).
    pub(crate) fn recycle(&mut self, mut buffer: Vec<u8>) {
        if self.line.capacity() == 0 && buffer.capacity() <= HEAD {
            buffer.clear();
            self.line = buffer;
        }
    }
}

/// A line without its trailing `\r` (a byte-order mark is the decoder's
/// business: [`strip_bom`](super::decode::strip_bom)).
pub(crate) fn trim_line(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::AsyncWriteExt as _;

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let data = format!("{}\nok\n\nlast", "x".repeat(100));
        let mut lines = LineReader {
            reader: BufReader::with_capacity(8, data.as_bytes()),
            line: Vec::new(),
            overflow: false,
            max: 10,
        };
        assert!(matches!(lines.next().await.unwrap(), Line::TooLong(head) if head == [b'x'; 100]));
        assert!(matches!(lines.next().await.unwrap(), Line::Data(l) if l == b"ok"));
        assert!(matches!(lines.next().await.unwrap(), Line::Data(l) if l.is_empty()));
        assert!(matches!(lines.next().await.unwrap(), Line::Data(l) if l == b"last"));
        assert!(matches!(lines.next().await.unwrap(), Line::Eof));
    }

    #[tokio::test]
    async fn a_long_line_keeps_its_head_only() {
        let data = format!("{}\nok\n", "y".repeat(3 * HEAD));
        let mut lines = LineReader {
            reader: BufReader::with_capacity(1000, data.as_bytes()),
            line: Vec::new(),
            overflow: false,
            max: HEAD + 10,
        };
        let Line::TooLong(head) = lines.next().await.unwrap() else {
            panic!("a line over the limit");
        };
        assert_eq!(head, vec![b'y'; HEAD]);
        assert!(matches!(lines.next().await.unwrap(), Line::Data(l) if l == b"ok"));
    }

    #[tokio::test]
    async fn a_read_abandoned_mid_line_loses_nothing() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut lines = LineReader::new(rx, 1024);
        tx.write_all(b"{\"half\":").await.unwrap();
        let first = tokio::time::timeout(Duration::from_millis(50), lines.next()).await;
        assert!(first.is_err(), "no line yet");
        tx.write_all(b"1}\n").await.unwrap();
        assert!(matches!(lines.next().await.unwrap(), Line::Data(l) if l == b"{\"half\":1}"));
    }

    #[tokio::test]
    async fn a_recycled_buffer_carries_the_next_line_only() {
        let (mut tx, rx) = tokio::io::duplex(1 << 16);
        let mut lines = LineReader::new(rx, 1 << 20);
        let long = vec![b'x'; HEAD + 1];
        tx.write_all(b"first line\nsecond\n").await.unwrap();
        tx.write_all(&long).await.unwrap();
        tx.write_all(b"\nthird\n").await.unwrap();
        let Line::Data(first) = lines.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(first, b"first line");
        let at = first.as_ptr();
        lines.recycle(first);
        let Line::Data(second) = lines.next().await.unwrap() else {
            panic!()
        };
        assert_eq!((second.as_slice(), second.as_ptr()), (&b"second"[..], at));
        lines.recycle(second);
        let Line::Data(grown) = lines.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(grown, long);
        // Grown past the head: let go, not kept for every later line.
        lines.recycle(grown);
        assert_eq!(lines.line.capacity(), 0);
        let Line::Data(third) = lines.next().await.unwrap() else {
            panic!()
        };
        assert_eq!(third, b"third");
    }
}
