//! What a hub puts on the bus: `{"o": origin, "s": sequence, ...}` with the
//! event (`"e"`) or a session change (`"sid"`, `"c"`), as JSON. Decoding is
//! bounded ([`MAX_BUS_PAYLOAD`]) and never panics: anything else is `None`.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::bus::MAX_BUS_PAYLOAD;
use super::event::{Event, SessionChange};
use crate::protocol::LogLevel;

/// What an envelope carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    Event(Event),
    Session { id: String, change: SessionChange },
}

/// One decoded envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub(crate) origin: String,
    pub(crate) seq: u64,
    pub(crate) body: Body,
}

fn event_value(event: &Event) -> Option<Value> {
    Some(match event {
        Event::ToolsListChanged => json!({"k": "tools"}),
        Event::PromptsListChanged => json!({"k": "prompts"}),
        Event::ResourcesListChanged => json!({"k": "resources"}),
        Event::ResourceUpdated(uri) => json!({"k": "updated", "uri": &**uri}),
        _ => return None,
    })
}

fn change_value(change: &SessionChange) -> Value {
    match change {
        SessionChange::Initialized => json!({"k": "initialized"}),
        SessionChange::LogLevel(level) => json!({"k": "level", "level": level.as_str()}),
        SessionChange::Subscribed(uri) => json!({"k": "subscribed", "uri": uri}),
        SessionChange::Unsubscribed(uri) => json!({"k": "unsubscribed", "uri": uri}),
        SessionChange::Answer(response) => json!({"k": "answer", "response": response}),
        SessionChange::Cancelled(id) => json!({"k": "cancelled", "id": id}),
        SessionChange::Ended => json!({"k": "ended"}),
    }
}

/// Encodes an envelope; `None` for what does not cross nodes or would be
/// larger than [`MAX_BUS_PAYLOAD`].
pub(crate) fn encode(origin: &str, seq: u64, body: &Body) -> Option<Bytes> {
    let mut out = Map::new();
    out.insert("o".into(), origin.into());
    out.insert("s".into(), seq.into());
    match body {
        Body::Event(event) => {
            out.insert("e".into(), event_value(event)?);
        }
        Body::Session { id, change } => {
            out.insert("sid".into(), id.as_str().into());
            out.insert("c".into(), change_value(change));
        }
    }
    let bytes = serde_json::to_vec(&Value::Object(out)).ok()?;
    (bytes.len() <= MAX_BUS_PAYLOAD).then(|| Bytes::from(bytes))
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

fn decode_event(value: &Value) -> Option<Event> {
    Some(match text(value, "k")? {
        "tools" => Event::ToolsListChanged,
        "prompts" => Event::PromptsListChanged,
        "resources" => Event::ResourcesListChanged,
        "updated" => Event::ResourceUpdated(Arc::from(text(value, "uri")?)),
        _ => return None,
    })
}

fn decode_change(value: &Value) -> Option<SessionChange> {
    Some(match text(value, "k")? {
        "initialized" => SessionChange::Initialized,
        "level" => SessionChange::LogLevel(LogLevel::parse(text(value, "level")?)?),
        "subscribed" => SessionChange::Subscribed(text(value, "uri")?.to_string()),
        "unsubscribed" => SessionChange::Unsubscribed(text(value, "uri")?.to_string()),
        "answer" => SessionChange::Answer(value.get("response")?.clone()),
        "cancelled" => SessionChange::Cancelled(value.get("id")?.clone()),
        "ended" => SessionChange::Ended,
        _ => return None,
    })
}

/// Decodes an envelope; `None` for anything malformed or too large.
pub(crate) fn decode(bytes: &[u8]) -> Option<Envelope> {
    if bytes.len() > MAX_BUS_PAYLOAD {
        return None;
    }
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let origin = text(&value, "o")?;
    if origin.is_empty() || origin.len() > 64 {
        return None;
    }
    let seq = value.get("s")?.as_u64()?;
    let body = if let Some(event) = value.get("e") {
        Body::Event(decode_event(event)?)
    } else {
        let id = text(&value, "sid")?;
        if id.is_empty() || id.len() > 256 {
            return None;
        }
        Body::Session {
            id: id.to_string(),
            change: decode_change(value.get("c")?)?,
        }
    };
    Some(Envelope {
        origin: origin.to_string(),
        seq,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(body: Body) {
        let bytes = encode("node-a", 7, &body).unwrap();
        let back = decode(&bytes).unwrap();
        assert_eq!(back.origin, "node-a");
        assert_eq!(back.seq, 7);
        assert_eq!(back.body, body);
    }

    #[test]
    fn events_and_session_changes_round_trip() {
        round_trip(Body::Event(Event::ToolsListChanged));
        round_trip(Body::Event(Event::PromptsListChanged));
        round_trip(Body::Event(Event::ResourcesListChanged));
        round_trip(Body::Event(Event::ResourceUpdated("demo://a/b".into())));
        for change in [
            SessionChange::Initialized,
            SessionChange::LogLevel(LogLevel::Warning),
            SessionChange::Subscribed("demo://x".into()),
            SessionChange::Unsubscribed("demo://x".into()),
            SessionChange::Answer(json!({"jsonrpc": "2.0", "id": 3, "result": {}})),
            SessionChange::Cancelled(json!(12)),
            SessionChange::Ended,
        ] {
            round_trip(Body::Session {
                id: "abc".into(),
                change,
            });
        }
    }

    #[test]
    fn the_wire_form_is_stable() {
        let bytes = encode(
            "n1",
            1,
            &Body::Event(Event::ResourceUpdated("demo://r".into())),
        )
        .unwrap();
        assert_eq!(
            &bytes[..],
            br#"{"e":{"k":"updated","uri":"demo://r"},"o":"n1","s":1}"#
        );
    }

    #[test]
    fn local_events_do_not_cross_and_garbage_is_refused() {
        assert!(encode("n", 1, &Body::Event(Event::Shutdown)).is_none());
        assert!(encode("n", 1, &Body::Event(Event::Resync)).is_none());
        for bad in [
            &b""[..],
            b"null",
            b"{}",
            br#"{"o":"n","s":-1,"e":{"k":"tools"}}"#,
            br#"{"o":"","s":1,"e":{"k":"tools"}}"#,
            br#"{"o":"n","s":1,"e":{"k":"nope"}}"#,
            br#"{"o":"n","s":1,"e":{"k":"updated"}}"#,
            br#"{"o":"n","s":1,"sid":"x","c":{"k":"level","level":"loud"}}"#,
            br#"{"o":"n","s":1}"#,
            b"\xff\xfe",
        ] {
            assert!(decode(bad).is_none(), "{:?}", String::from_utf8_lossy(bad));
        }
        let huge = vec![b' '; MAX_BUS_PAYLOAD + 1];
        assert!(decode(&huge).is_none());
    }
}
