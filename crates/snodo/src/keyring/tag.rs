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
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Envelope => b"snodo/bus-envelope/v1",
        }
    }
}

fn keyed(secret: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(secret).expect("HMAC takes any key length")
}

/// The HMAC of `purpose` under `key`, fed with `parts`.
fn mac(key: &Key, purpose: Purpose, parts: &[&[u8]]) -> HmacSha256 {
    let mut derive = keyed(&key.secret);
    derive.update(purpose.label());
    let derived = derive.finalize().into_bytes();
    let mut mac = keyed(&derived);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, byte: u8) -> Key {
        Key {
            id: id.into(),
            secret: vec![byte; 32],
        }
    }

    #[test]
    fn stamps_open_with_the_key_they_name_and_nothing_else() {
        let (old, new) = (key("old", 1), key("new", 2));
        let ring = [old.clone(), new.clone()];
        let made = stamp(&ring, Purpose::Envelope, &[b"a", b"b"]);
        assert!(made.starts_with("new."));
        assert_eq!(check(&ring, Purpose::Envelope, &made, &[b"a", b"b"]), Ok(()));
        assert_eq!(
            check(&[new.clone()], Purpose::Envelope, &made, &[b"a", b"b"]),
            Ok(())
        );
        assert_eq!(
            check(&[old.clone()], Purpose::Envelope, &made, &[b"a", b"b"]),
            Err(Refusal::UnknownKey)
        );
        // Other parts, parts cut elsewhere: refused.
        assert_eq!(
            check(&ring, Purpose::Envelope, &made, &[b"a", b"c"]),
            Err(Refusal::BadTag)
        );
        assert_eq!(
            check(&ring, Purpose::Envelope, &made, &[b"ab", b""]),
            Err(Refusal::BadTag)
        );
        // A key with the same id and another secret: refused.
        assert_eq!(
            check(&[key("new", 3)], Purpose::Envelope, &made, &[b"a", b"b"]),
            Err(Refusal::BadTag)
        );
        for bad in ["", "new", "new.", "new.!!", &"x".repeat(MAX_STAMP + 1)] {
            assert_eq!(
                check(&ring, Purpose::Envelope, bad, &[b"a", b"b"]),
                Err(Refusal::Malformed),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_purpose_is_not_the_secret_itself() {
        let k = key("k", 9);
        let mut plain = keyed(&k.secret);
        plain.update(&1u64.to_be_bytes());
        plain.update(b"x");
        let plain: [u8; TAG_BYTES] = plain.finalize().into_bytes().into();
        assert_ne!(tag(&k, Purpose::Envelope, &[b"x"]), plain);
    }
}
