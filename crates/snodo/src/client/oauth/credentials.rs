//! Client credentials for machine-to-machine access: a secret, or a private
//! key that signs a JWT assertion (`private_key_jwt`, RFC 7523).

use std::fmt;
#[cfg(feature = "auth")]
use std::sync::Arc;

#[cfg(feature = "auth")]
use super::OAuthError;

/// How a client without a person authenticates: the `client_credentials`
/// grant with one of these.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientCredentials {
    /// A client id and secret (sent with `client_secret_basic`, or
    /// `client_secret_post` when the server lists only that).
    Secret {
        /// The `client_id`.
        client_id: String,
        /// The `client_secret`.
        client_secret: String,
    },
    /// A client id and a private key: the token request carries a JWT
    /// signed with it (`iss` = `sub` = the client id, `aud` = the issuer).
    #[cfg(feature = "auth")]
    PrivateKeyJwt {
        /// The `client_id`.
        client_id: String,
        /// The signing key.
        key: SigningKey,
    },
}

impl ClientCredentials {
    /// A client id and secret.
    pub fn secret(client_id: &str, client_secret: &str) -> Self {
        ClientCredentials::Secret {
            client_id: client_id.to_string(),
            client_secret: client_secret.to_string(),
        }
    }

    /// The client id.
    pub fn client_id(&self) -> &str {
        match self {
            ClientCredentials::Secret { client_id, .. } => client_id,
            #[cfg(feature = "auth")]
            ClientCredentials::PrivateKeyJwt { client_id, .. } => client_id,
        }
    }
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id())
            .finish_non_exhaustive()
    }
}

/// A private key that signs client assertions.
#[cfg(feature = "auth")]
#[derive(Clone)]
pub struct SigningKey {
    key: Arc<jsonwebtoken::EncodingKey>,
    algorithm: jsonwebtoken::Algorithm,
}

#[cfg(feature = "auth")]
impl PartialEq for SigningKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.key, &other.key) && self.algorithm == other.algorithm
    }
}

#[cfg(feature = "auth")]
impl Eq for SigningKey {}

#[cfg(feature = "auth")]
impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "auth")]
impl SigningKey {
    /// A key from PEM (PKCS#8 or the algorithm's own form) for `algorithm`
    /// (`ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...; no HMAC).
    pub fn from_pem(pem: &str, algorithm: &str) -> Result<Self, OAuthError> {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let algorithm: Algorithm = algorithm
            .parse()
            .map_err(|_| OAuthError::Registration(format!("unknown algorithm {algorithm:?}")))?;
        let bad = |e: jsonwebtoken::errors::Error| {
            OAuthError::Registration(format!("the private key does not load: {e}"))
        };
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()),
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem.as_bytes()),
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem.as_bytes()),
            _ => {
                return Err(OAuthError::Registration(
                    "private_key_jwt needs an asymmetric algorithm".into(),
                ));
            }
        }
        .map_err(bad)?;
        Ok(Self {
            key: Arc::new(key),
            algorithm,
        })
    }

    /// A fresh assertion for `client_id` at `issuer` (valid 60 s).
    pub(crate) fn assertion(&self, client_id: &str, issuer: &str) -> Result<String, OAuthError> {
        let jti = super::pkce::random_token(16)
            .map_err(|e| OAuthError::Token(format!("cannot make the client assertion: {e}")))?;
        let now = crate::net::now_secs();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": issuer,
            "iat": now,
            "exp": now + 60,
            "jti": jti,
        });
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(self.algorithm),
            &claims,
            &self.key,
        )
        .map_err(|e| OAuthError::Token(format!("cannot sign the client assertion: {e}")))
    }
}
