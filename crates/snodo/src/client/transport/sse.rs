//! An incremental, bounded parser of `text/event-stream` bodies.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Event {
    /// The `event:` field (`message` when absent).
    pub(crate) event: Option<String>,
    /// The joined `data:` lines.
    pub(crate) data: String,
    /// The `id:` field, if the event had one.
    pub(crate) id: Option<String>,
}

/// Parser state across chunks.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    line: Vec<u8>,
    after_cr: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    /// The last event id seen (for `Last-Event-ID`).
    pub(crate) last_id: Option<String>,
    /// The last `retry:` value, in milliseconds.
    pub(crate) retry_ms: Option<u64>,
    max_event: usize,
    /// Set when an event grew past the bound; the stream must be dropped.
    pub(crate) overflow: bool,
}

impl Parser {
    /// A parser that refuses events larger than `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        Self {
            max_event,
            ..Self::default()
        }
    }

    /// Feeds bytes; returns the events they complete.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                _ => {
                    if self.line.len() + self.data.len() >= self.max_event {
                        self.overflow = true;
                        self.line.clear();
                        continue;
                    }
                    self.line.push(b);
                }
            }
        }
        out
    }

    fn end_line(&mut self, out: &mut Vec<Event>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let mut v = &line[i + 1..];
                if v.first() == Some(&b' ') {
                    v = &v[1..];
                }
                (&line[..i], v)
            }
            None => (&line[..], &[][..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = Some(value.into_owned()),
            b"id" if !value.contains('\0') => self.id = Some(value.into_owned()),
            b"retry" => {
                if let Ok(ms) = value.trim().parse::<u64>() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        if let Some(id) = self.id.take() {
            self.last_id = Some(id.clone());
            if self.has_data {
                out.push(Event {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                    id: Some(id),
                });
            }
        } else if self.has_data {
            out.push(Event {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: None,
            });
        }
        self.data.clear();
        self.has_data = false;
        self.event = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_across_chunks_and_line_endings() {
        let mut p = Parser::new(1 << 20);
        let mut events = p.push(b"event: message\r\ndata: {\"a\"");
        assert!(events.is_empty());
        events.extend(p.push(b":1}\r\n\r\n: keep-alive\n\nid: 7\nretry: 500\ndata: \n\n"));
        events.extend(p.push(b"data: x\ndata: y\n\n"));
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[0].event.as_deref(), Some("message"));
        assert_eq!(events[1].data, "");
        assert_eq!(events[1].id.as_deref(), Some("7"));
        assert_eq!(events[2].data, "x\ny");
        assert_eq!(p.last_id.as_deref(), Some("7"));
        assert_eq!(p.retry_ms, Some(500));
    }

    #[test]
    fn oversized_events_are_flagged() {
        let mut p = Parser::new(8);
        p.push(b"data: 0123456789\n\n");
        assert!(p.overflow);
    }
}
