//! Sealed request state: integrity-protected, expiring, bound to the request.
//!
//! A token is `mrtr2.<kid>.<payload>.<mac>` (base64url parts): the payload is
//! `{"d": data, "exp": unix seconds}` and the MAC is HMAC-SHA256 over the key
//! id, the method, the request's salient params (without `_meta`,
//! `inputResponses` and `requestState`; key order ignored), the principal and
//! the payload. Tokens are signed, not encrypted: put nothing secret in them.
//! Any failure is -32602 `Invalid or expired request state`, with no data.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::wire::canonical;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::keyring::Keyring;
use crate::{Context, Error};

type HmacSha256 = Hmac<Sha256>;

const PREFIX: &str = "mrtr2";
/// Default lifetime of sealed state.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_secs(300);
/// Longest lifetime allowed.
pub const MAX_STATE_TTL: Duration = Duration::from_secs(900);
const MAX_TOKEN: usize = 16 * 1024;

/// Why a sealer could not be configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(String);

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StateError {}

/// Seals and opens `requestState` with a [`Keyring`] of HMAC-SHA256 keys.
///
/// The keyring's sealing key seals; every key opens, so keys rotate with no
/// downtime (see [`keyring`](crate::server::keyring)). Built from one key with
/// [`StateSealer::new`], or sharing a configured keyring with
/// [`StateSealer::from_keyring`] (then a reload of the keyring is seen at
/// once, and every node given the same keys opens what any node sealed).
///
/// ```
/// use snodo::server::StateSealer;
/// use snodo::Context;
/// let sealer = StateSealer::new("k1", [7u8; 32]).unwrap();
/// let cx = Context::detached();
/// let token = sealer.seal(&cx, &serde_json::json!({"step": 1}));
/// assert_eq!(sealer.open_token(&cx, &token).unwrap(), serde_json::json!({"step": 1}));
/// let mut forged = token.clone();
/// forged.push('x');
/// assert_eq!(sealer.open_token(&cx, &forged).unwrap_err().code(), -32602);
/// ```
#[derive(Clone)]
pub struct StateSealer {
    keys: Keyring,
    ttl: Duration,
}

impl fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSealer")
            .field("kids", &self.keys.ids())
            .field("ttl", &self.ttl)
            .finish()
    }
}

fn keyring_error(e: crate::keyring::KeyringError) -> StateError {
    StateError(e.to_string())
}

impl StateSealer {
    /// A sealer with one key (at least 32 bytes) and the default TTL of 300 s.
    pub fn new(kid: &str, secret: impl AsRef<[u8]>) -> Result<Self, StateError> {
        Ok(Self::from_keyring(
            Keyring::single(kid, secret).map_err(keyring_error)?,
        ))
    }

    /// A sealer sharing `keys` (sealing with its newest key), with the
    /// default TTL of 300 s.
    pub fn from_keyring(keys: Keyring) -> Self {
        Self {
            keys,
            ttl: DEFAULT_STATE_TTL,
        }
    }

    /// Adds a key that opens tokens but does not seal them (for rotation).
    /// At most 16 keys.
    pub fn with_key(self, kid: &str, secret: impl AsRef<[u8]>) -> Result<Self, StateError> {
        self.keys.add_opening(kid, secret).map_err(keyring_error)?;
        Ok(self)
    }

    /// Sets the lifetime of sealed state (at most 900 s).
    pub fn with_ttl(mut self, ttl: Duration) -> Result<Self, StateError> {
        if ttl.is_zero() || ttl > MAX_STATE_TTL {
            return Err(StateError("the TTL must be between 1 s and 900 s".into()));
        }
        self.ttl = ttl;
        Ok(self)
    }

    fn mac(secret: &[u8], kid: &str, cx: &Context, payload: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes any key length");
        let principal = cx
            .principal()
            .map(crate::Principal::key)
            .unwrap_or_default();
        let bound = json!([kid, cx.method(), cx.params(), principal, payload]);
        mac.update(canonical(&bound).as_bytes());
        mac
    }

    /// Seals `data` for a retry of the request `cx` serves.
    pub fn seal(&self, cx: &Context, data: &Value) -> String {
        let keys = self.keys.snapshot();
        let key = keys.last().expect("a keyring holds a key");
        let (kid, secret) = (&key.id, &key.secret);
        let exp = now() + self.ttl.as_secs();
        let payload = URL_SAFE_NO_PAD.encode(json!({"d": data, "exp": exp}).to_string());
        let tag = Self::mac(secret, kid, cx, &payload).finalize().into_bytes();
        format!("{PREFIX}.{kid}.{payload}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// Opens the request's `requestState`: `Ok(None)` when there is none.
    pub fn open(&self, cx: &Context) -> Result<Option<Value>, Error> {
        match cx.request_state() {
            None => Ok(None),
            Some(token) => self.open_token(cx, token).map(Some),
        }
    }

    /// Opens a token for the request `cx` serves.
    pub fn open_token(&self, cx: &Context, token: &str) -> Result<Value, Error> {
        let invalid = || Error::invalid_params("Invalid or expired request state");
        if token.len() > MAX_TOKEN {
            return Err(invalid());
        }
        let mut parts = token.split('.');
        let (Some(PREFIX), Some(kid), Some(payload), Some(tag), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(invalid());
        };
        let keys = self.keys.snapshot();
        let secret = &keys
            .iter()
            .find(|k| k.id == kid)
            .ok_or_else(invalid)?
            .secret;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid())?;
        Self::mac(secret, kid, cx, payload)
            .verify_slice(&tag)
            .map_err(|_| invalid())?;
        let body = URL_SAFE_NO_PAD.decode(payload).map_err(|_| invalid())?;
        let body: Value = serde_json::from_slice(&body).map_err(|_| invalid())?;
        let exp = body
            .get("exp")
            .and_then(Value::as_u64)
            .ok_or_else(invalid)?;
        if exp < now() {
            return Err(invalid());
        }
        Ok(body.get("d").cloned().unwrap_or(Value::Null))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_ignores_key_order_only() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[2,1],"x":null}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[2,1]},"b":1}"#).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"a":{"x":null,"y":[2,1]},"b":1}"#);
        let c: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,2]},"b":1}"#).unwrap();
        assert_ne!(canonical(&a), canonical(&c));
        let d: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[2,1]},"b":1.0}"#).unwrap();
        assert_ne!(canonical(&a), canonical(&d));
    }

    #[test]
    fn keys_rotate_and_foreign_keys_fail() {
        let old = StateSealer::new("old", [1u8; 32]).unwrap();
        let cx = Context::detached();
        let token = old.seal(&cx, &json!(1));
        let rotated = StateSealer::new("new", [2u8; 32])
            .unwrap()
            .with_key("old", [1u8; 32])
            .unwrap();
        assert_eq!(rotated.open_token(&cx, &token).unwrap(), json!(1));
        let other = StateSealer::new("old", [3u8; 32]).unwrap();
        assert!(other.open_token(&cx, &token).is_err());
        assert!(StateSealer::new("k", [0u8; 31]).is_err());
        assert!(StateSealer::new("bad kid!", [0u8; 32]).is_err());
        assert!(old.clone().with_ttl(Duration::from_secs(901)).is_err());
    }

    #[test]
    fn numbers_open_exactly_as_they_were_sealed() {
        // Found by the `request_state` fuzz target: without serde_json's
        // `float_roundtrip`, 1.5555555555555555e22 came back as ...557e22.
        // (The workspace's dev-dependency on jsonschema turns that feature on
        // in tests too; fuzz/regressions/request_state/ holds the case for a
        // build without it.)
        let sealer = StateSealer::new("k", [9u8; 32]).unwrap();
        let cx = Context::detached();
        // Rust's own literals, exact doubles (parsing JSON text here would
        // hide the bug behind the same imprecision twice).
        let data = json!([
            1.5555555555555555e22_f64,
            0.1_f64,
            2.2250738585072014e-308_f64,
            9007199254740992.0_f64,
            123456.789e100_f64,
            -0.0_f64
        ]);
        let opened = sealer.open_token(&cx, &sealer.seal(&cx, &data)).unwrap();
        for (sealed, opened) in data
            .as_array()
            .unwrap()
            .iter()
            .zip(opened.as_array().unwrap())
        {
            assert_eq!(
                sealed.as_f64().unwrap().to_bits(),
                opened.as_f64().unwrap().to_bits(),
                "{sealed} came back as {opened}"
            );
        }
    }

    #[test]
    fn tampering_anywhere_fails_without_data() {
        let sealer = StateSealer::new("k", [9u8; 32]).unwrap();
        let cx = Context::detached();
        let token = sealer.seal(&cx, &json!({"round": 1}));
        for bad in [
            format!("{token}-TAMPERED"),
            token.replacen("mrtr2", "mrtr1", 1),
            "mrtr2.k.e30.AAAA".into(),
            String::new(),
        ] {
            let err = sealer.open_token(&cx, &bad).unwrap_err();
            assert_eq!(
                err.to_json(),
                json!({"code": -32602, "message": "Invalid or expired request state"})
            );
        }
    }
}
