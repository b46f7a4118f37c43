//! What a hub puts on the bus: `b1.KEY_ID.TAG.JSON`, where the JSON is
//! `{"o": origin, "s": sequence, "t": unix milliseconds, ...}` with the event
//! (`"e"`) or a session change (`"sid"`: the session's keyed digest, `"w"`:
//! its owner's, `"c"`: the change), and `KEY_ID.TAG` is the keyring's stamp
//! of the JSON ([`tag`](crate::keyring::tag), purpose `Envelope`): sealed
//! with the sealing key, opened with any key of the ring.
//!
//! Decoding is bounded ([`MAX_BUS_PAYLOAD`]) and never panics; the JSON is
//! read only once its tag is checked. Anything else is refused, with the
//! reason.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::bus::MAX_BUS_PAYLOAD;
use super::event::{Event, SessionChange};
use crate::keyring::Key;
use crate::keyring::tag::{self, Purpose, Refusal};
use crate::protocol::LogLevel;

/// The version prefix of the wire form.
const PREFIX: &str = "b1.";

/// The longest origin (node id).
const MAX_ORIGIN: usize = 64;

/// The longest session key or owner digest.
const MAX_DIGEST: usize = 64;

/// What an envelope carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    Event(Event),
    Session {
        /// The session's keyed digest (its directory key).
        key: String,
        /// The keyed digest of its owner, if it has one.
        owner: Option<String>,
        change: SessionChange,
    },
}

/// One decoded envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub(crate) origin: String,
    pub(crate) seq: u64,
    /// When it was sealed: milliseconds since the Unix epoch, by the
    /// sender's clock.
    pub(crate) time: u64,
    pub(crate) body: Body,
}

/// Why an envelope was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not an envelope, or not one this version reads.
    Malformed,
    /// Sealed with a key the ring does not hold, or its tag does not match.
    Forged,
}

impl From<Refusal> for Refused {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Malformed => Refused::Malformed,
            Refusal::UnknownKey | Refusal::BadTag => Refused::Forged,
        }
    }
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

/// Encodes and seals an envelope with the sealing key of `keys`; `None`
/// for what does not cross nodes or would be larger than
/// [`MAX_BUS_PAYLOAD`].
pub(crate) fn encode(
    keys: &[Key],
    origin: &str,
    seq: u64,
    time: u64,
    body: &Body,
) -> Option<Bytes> {
    let mut out = Map::new();
    out.insert("o".into(), origin.into());
    out.insert("s".into(), seq.into());
    out.insert("t".into(), time.into());
    match body {
        Body::Event(event) => {
            out.insert("e".into(), event_value(event)?);
        }
        Body::Session { key, owner, change } => {
            out.insert("sid".into(), key.as_str().into());
            if let Some(owner) = owner {
                out.insert("w".into(), owner.as_str().into());
            }
            out.insert("c".into(), change_value(change));
        }
    }
    let json = serde_json::to_vec(&Value::Object(out)).ok()?;
    let mut bytes = PREFIX.as_bytes().to_vec();
    bytes.extend_from_slice(&tag::seal(keys, Purpose::Envelope, &[], &json));
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

fn digest(value: &Value, key: &str) -> Option<String> {
    let text = text(value, key)?;
    (!text.is_empty() && text.len() <= MAX_DIGEST).then(|| text.to_string())
}

/// The JSON of an envelope whose tag is good.
fn decode_json(json: &[u8]) -> Option<Envelope> {
    let value: Value = serde_json::from_slice(json).ok()?;
    let origin = text(&value, "o")?;
    if origin.is_empty() || origin.len() > MAX_ORIGIN {
        return None;
    }
    let seq = value.get("s")?.as_u64()?;
    let time = value.get("t")?.as_u64()?;
    let body = if let Some(event) = value.get("e") {
        Body::Event(decode_event(event)?)
    } else {
        let owner = match value.get("w") {
            None => None,
            Some(_) => Some(digest(&value, "w")?),
        };
        Body::Session {
            key: digest(&value, "sid")?,
            owner,
            change: decode_change(value.get("c")?)?,
        }
    };
    Some(Envelope {
        origin: origin.to_string(),
        seq,
        time,
        body,
    })
}

/// Opens an envelope with any key of `keys`.
pub(crate) fn decode(keys: &[Key], bytes: &[u8]) -> Result<Envelope, Refused> {
    if bytes.len() > MAX_BUS_PAYLOAD {
        return Err(Refused::Malformed);
    }
    let sealed = bytes
        .strip_prefix(PREFIX.as_bytes())
        .ok_or(Refused::Malformed)?;
    let json = tag::open(keys, Purpose::Envelope, &[], sealed)?;
    decode_json(json).ok_or(Refused::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<Key> {
        vec![Key::new("k1", vec![1; 32])]
    }

    fn round_trip(body: Body) {
        let bytes = encode(&keys(), "node-a", 7, 1234, &body).unwrap();
        let back = decode(&keys(), &bytes).unwrap();
        assert_eq!(back.origin, "node-a");
        assert_eq!(back.seq, 7);
        assert_eq!(back.time, 1234);
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
            for owner in [None, Some("w0".to_string())] {
                round_trip(Body::Session {
                    key: "abc".into(),
                    owner,
                    change: change.clone(),
                });
            }
        }
    }

    #[test]
    fn the_wire_form_is_stable() {
        let bytes = encode(
            &keys(),
            "n1",
            1,
            5,
            &Body::Event(Event::ResourceUpdated("demo://r".into())),
        )
        .unwrap();
        let json = br#"{"e":{"k":"updated","uri":"demo://r"},"o":"n1","s":1,"t":5}"#;
        let stamp = tag::stamp(&keys(), Purpose::Envelope, &[json]);
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            format!("b1.{stamp}.{}", String::from_utf8_lossy(json))
        );
        assert!(stamp.starts_with("k1."));
    }

    #[test]
    fn forged_tampered_and_unkeyed_envelopes_are_refused() {
        let good = encode(&keys(), "n", 1, 5, &Body::Event(Event::ToolsListChanged)).unwrap();
        let text = String::from_utf8(good.to_vec()).unwrap();
        // Another key with the same id, another key id, a changed body.
        let other = vec![Key::new("k1", vec![2; 32])];
        assert_eq!(decode(&other, &good), Err(Refused::Forged));
        let renamed = vec![Key::new("k2", vec![1; 32])];
        assert_eq!(decode(&renamed, &good), Err(Refused::Forged));
        let changed = text.replace("tools", "prompts");
        assert_eq!(decode(&keys(), changed.as_bytes()), Err(Refused::Forged));
        // The JSON alone, as earlier versions sent it.
        let json = &text[text.find('{').unwrap()..];
        assert_eq!(decode(&keys(), json.as_bytes()), Err(Refused::Malformed));
    }

    #[test]
    fn local_events_do_not_cross_and_garbage_is_refused() {
        assert!(encode(&keys(), "n", 1, 0, &Body::Event(Event::Shutdown)).is_none());
        assert!(encode(&keys(), "n", 1, 0, &Body::Event(Event::Resync)).is_none());
        let sealed = |json: &[u8]| {
            let stamp = tag::stamp(&keys(), Purpose::Envelope, &[json]);
            let mut out = format!("b1.{stamp}.").into_bytes();
            out.extend_from_slice(json);
            out
        };
        for bad in [
            &b""[..],
            b"null",
            b"{}",
            br#"{"o":"n","s":1,"t":1,"e":{"k":"tools"}}"#,
            b"b1.",
            b"b1.k1.",
            b"b1.k1.x.{}",
            b"b1.\xff\xfe",
        ] {
            assert_eq!(
                decode(&keys(), bad),
                Err(Refused::Malformed),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        // Well sealed, badly formed.
        for bad in [
            &b"null"[..],
            b"{}",
            br#"{"o":"n","s":-1,"t":1,"e":{"k":"tools"}}"#,
            br#"{"o":"n","s":1,"e":{"k":"tools"}}"#,
            br#"{"o":"","s":1,"t":1,"e":{"k":"tools"}}"#,
            br#"{"o":"n","s":1,"t":1,"e":{"k":"nope"}}"#,
            br#"{"o":"n","s":1,"t":1,"e":{"k":"updated"}}"#,
            br#"{"o":"n","s":1,"t":1,"sid":"x","c":{"k":"level","level":"loud"}}"#,
            br#"{"o":"n","s":1,"t":1,"sid":"","c":{"k":"ended"}}"#,
            br#"{"o":"n","s":1,"t":1,"sid":"x","w":7,"c":{"k":"ended"}}"#,
            br#"{"o":"n","s":1,"t":1}"#,
        ] {
            assert_eq!(
                decode(&keys(), &sealed(bad)),
                Err(Refused::Malformed),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let huge = vec![b' '; MAX_BUS_PAYLOAD + 1];
        assert_eq!(decode(&keys(), &huge), Err(Refused::Malformed));
    }
}
