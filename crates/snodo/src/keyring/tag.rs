//! Tags (HMAC-SHA256) for what the nodes of a service share where others
//! may read or write it: bus envelopes, session records, and the keyed
//! digests that name sessions and their owners there.
//!
//! Each [`Purpose`] has keys of its own, derived from every key of the ring
//! (`HMAC(secret, "snodo/" + purpose)`), so that a tag made for one purpose
//! never passes for another, nor for sealed request state (which uses the
//! secrets themselves). A tag covers a list of parts, each prefixed with its
//! length, so that no two lists give the same input.
//!
//! A *stamp* is the text `KEY_ID.TAG` (the tag in unpadded base64url): the
//! keyring's sealing key makes it, and any key of the ring checks it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::Key;

type HmacSha256 = Hmac<Sha256>;

/// The length of a tag in bytes.
pub(crate) const TAG_BYTES: usize = 32;

/// The length of a tag as unpadded base64url.
pub(crate) const TAG_TEXT: usize = 43;

/// The longest stamp: a key id (at most 32 characters), a dot, a tag.
pub(crate) const MAX_STAMP: usize = 32 + 1 + TAG_TEXT;

/// What a tag is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A bus envelope.
    Envelope,
    /// A part of a session record kept in a directory.
    Record,
    /// The digest that names a session in a directory and on the bus.
    SessionKey,
    /// The digest of the principal that owns a session.
    Owner,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Envelope => b"snodo/bus-envelope/v1",
            Purpose::Record => b"snodo/session-record/v1",
            Purpose::SessionKey => b"snodo/session-key/v1",
            Purpose::Owner => b"snodo/session-owner/v1",
        }
    }
}

fn keyed(secret: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(secret).expect("HMAC takes any key length")
}

/// The purposes, in the order [`Keyed`] holds their keys.
const PURPOSES: [Purpose; 4] = [
    Purpose::Envelope,
    Purpose::Record,
    Purpose::SessionKey,
    Purpose::Owner,
];

/// A key's HMAC for every purpose, keyed once (a tag then costs the
/// hashing of its parts only).
#[derive(Clone)]
pub(crate) struct Keyed([HmacSha256; PURPOSES.len()]);

impl Keyed {
    /// The purposes' keys derived from `secret`.
    pub(crate) fn new(secret: &[u8]) -> Self {
        Self(PURPOSES.map(|purpose| {
            let mut derive = keyed(secret);
            derive.update(purpose.label());
            keyed(&derive.finalize().into_bytes())
        }))
    }
}

/// The HMAC of `purpose` under `key`, fed with `parts`.
fn mac(key: &Key, purpose: Purpose, parts: &[&[u8]]) -> HmacSha256 {
    let mut mac = key.tags.0[purpose as usize].clone();
    for part in parts {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac
}

/// The tag of `parts` for `purpose` under `key`.
pub(crate) fn tag(key: &Key, purpose: Purpose, parts: &[&[u8]]) -> [u8; TAG_BYTES] {
    mac(key, purpose, parts).finalize().into_bytes().into()
}

/// The tag of `parts` as unpadded base64url.
pub(crate) fn tag_text(key: &Key, purpose: Purpose, parts: &[&[u8]]) -> String {
    URL_SAFE_NO_PAD.encode(tag(key, purpose, parts))
}

/// Whether `tag` is the tag of `parts` for `purpose` under `key` (compared
/// in constant time).
pub(crate) fn verify(key: &Key, purpose: Purpose, parts: &[&[u8]], tag: &[u8]) -> bool {
    mac(key, purpose, parts).verify_slice(tag).is_ok()
}

/// Why a stamp was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not of the form `KEY_ID.TAG`.
    Malformed,
    /// It names a key the ring does not hold.
    UnknownKey,
    /// The tag is not the key's tag of the parts.
    BadTag,
}

/// `KEY_ID.TAG` of `parts` with the ring's sealing key (the last of
/// `keys`).
pub(crate) fn stamp(keys: &[Key], purpose: Purpose, parts: &[&[u8]]) -> String {
    let key = keys.last().expect("a keyring holds a key");
    format!("{}.{}", key.id, tag_text(key, purpose, parts))
}

/// Checks a `KEY_ID.TAG` stamp of `parts` with the key it names.
pub(crate) fn check(
    keys: &[Key],
    purpose: Purpose,
    stamp: &str,
    parts: &[&[u8]],
) -> Result<(), Refusal> {
    if stamp.len() > MAX_STAMP {
        return Err(Refusal::Malformed);
    }
    let (kid, tag) = stamp.split_once('.').ok_or(Refusal::Malformed)?;
    if tag.len() != TAG_TEXT {
        return Err(Refusal::Malformed);
    }
    let tag = URL_SAFE_NO_PAD
        .decode(tag)
        .map_err(|_| Refusal::Malformed)?;
    let key = keys
        .iter()
        .find(|k| k.id == kid)
        .ok_or(Refusal::UnknownKey)?;
    if verify(key, purpose, parts, &tag) {
        Ok(())
    } else {
        Err(Refusal::BadTag)
    }
}

/// `KEY_ID.TAG.` then `payload`: the sealing key's stamp of `context`
/// followed by the payload.
pub(crate) fn seal(keys: &[Key], purpose: Purpose, context: &[&[u8]], payload: &[u8]) -> Vec<u8> {
    let mut parts = context.to_vec();
    parts.push(payload);
    let stamp = stamp(keys, purpose, &parts);
    let mut out = Vec::with_capacity(stamp.len() + 1 + payload.len());
    out.extend_from_slice(stamp.as_bytes());
    out.push(b'.');
    out.extend_from_slice(payload);
    out
}

/// The payload of what [`seal`] made with the same purpose and context,
/// checked with the key its stamp names.
pub(crate) fn open<'a>(
    keys: &[Key],
    purpose: Purpose,
    context: &[&[u8]],
    sealed: &'a [u8],
) -> Result<&'a [u8], Refusal> {
    // KEY_ID '.' TAG '.' PAYLOAD: the key id and the tag hold no dot.
    let dot = sealed
        .iter()
        .take(MAX_STAMP + 1)
        .position(|b| *b == b'.')
        .ok_or(Refusal::Malformed)?;
    let end = dot + 1 + TAG_TEXT;
    if sealed.get(end) != Some(&b'.') {
        return Err(Refusal::Malformed);
    }
    let stamp = std::str::from_utf8(&sealed[..end]).map_err(|_| Refusal::Malformed)?;
    let payload = &sealed[end + 1..];
    let mut parts = context.to_vec();
    parts.push(payload);
    check(keys, purpose, stamp, &parts)?;
    Ok(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, byte: u8) -> Key {
        Key::new(id, vec![byte; 32])
    }

    #[test]
    fn stamps_open_with_the_key_they_name_and_nothing_else() {
        let (old, new) = (key("old", 1), key("new", 2));
        let ring = [old.clone(), new.clone()];
        let made = stamp(&ring, Purpose::Record, &[b"a", b"b"]);
        assert!(made.starts_with("new."));
        assert_eq!(check(&ring, Purpose::Record, &made, &[b"a", b"b"]), Ok(()));
        assert_eq!(
            check(
                std::slice::from_ref(&new),
                Purpose::Record,
                &made,
                &[b"a", b"b"]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                std::slice::from_ref(&old),
                Purpose::Record,
                &made,
                &[b"a", b"b"]
            ),
            Err(Refusal::UnknownKey)
        );
        // Another purpose, other parts, parts cut elsewhere: refused.
        assert_eq!(
            check(&ring, Purpose::Envelope, &made, &[b"a", b"b"]),
            Err(Refusal::BadTag)
        );
        assert_eq!(
            check(&ring, Purpose::Record, &made, &[b"a", b"c"]),
            Err(Refusal::BadTag)
        );
        assert_eq!(
            check(&ring, Purpose::Record, &made, &[b"ab", b""]),
            Err(Refusal::BadTag)
        );
        // A key with the same id and another secret: refused.
        assert_eq!(
            check(&[key("new", 3)], Purpose::Record, &made, &[b"a", b"b"]),
            Err(Refusal::BadTag)
        );
        for bad in ["", "new", "new.", "new.!!", &"x".repeat(MAX_STAMP + 1)] {
            assert_eq!(
                check(&ring, Purpose::Record, bad, &[b"a", b"b"]),
                Err(Refusal::Malformed),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn sealed_payloads_open_in_their_context_only() {
        let ring = [key("k1", 1)];
        let sealed = seal(&ring, Purpose::Record, &[b"s1", b"h"], b"{}");
        assert_eq!(
            open(&ring, Purpose::Record, &[b"s1", b"h"], &sealed),
            Ok(&b"{}"[..])
        );
        assert_eq!(
            open(&ring, Purpose::Record, &[b"s2", b"h"], &sealed),
            Err(Refusal::BadTag)
        );
        let mut changed = sealed.clone();
        *changed.last_mut().unwrap() = b']';
        assert_eq!(
            open(&ring, Purpose::Record, &[b"s1", b"h"], &changed),
            Err(Refusal::BadTag)
        );
        for bad in [
            &b""[..],
            b"{}",
            b"k1.",
            b"k1.x.{}",
            b"\xff.",
            &sealed[..sealed.len() - 3],
        ] {
            assert!(open(&ring, Purpose::Record, &[b"s1", b"h"], bad).is_err());
        }
    }

    #[test]
    fn each_purpose_has_its_own_key() {
        for (i, purpose) in PURPOSES.iter().enumerate() {
            assert_eq!(*purpose as usize, i);
        }
        let k = key("k", 9);
        let tags: Vec<_> = PURPOSES.iter().map(|p| tag(&k, *p, &[b"x"])).collect();
        for (i, a) in tags.iter().enumerate() {
            assert!(tags[i + 1..].iter().all(|b| a != b));
        }
    }

    #[test]
    fn a_purpose_is_not_the_secret_itself() {
        let k = key("k", 9);
        let mut plain = keyed(&k.secret);
        plain.update(&1u64.to_be_bytes());
        plain.update(b"x");
        let plain: [u8; TAG_BYTES] = plain.finalize().into_bytes().into();
        for purpose in [
            Purpose::Envelope,
            Purpose::Record,
            Purpose::SessionKey,
            Purpose::Owner,
        ] {
            assert_ne!(tag(&k, purpose, &[b"x"]), plain);
        }
    }
}
