//! Client credentials for machine-to-machine access: a secret, or a private
//! key that signs a JWT assertion (`private_key_jwt`, RFC 7523).

use std::fmt;
#[cfg(feature = "auth")]
use std::sync::Arc;

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
    /// Workload identity federation (a draft of the authorization
    /// extensions): the `jwt-bearer` grant (RFC 7523) with the workload's own
    /// JWT as the assertion, read afresh for each token request; the client
    /// is public (`client_id` in the request).
    WorkloadJwt {
        /// The `client_id`.
        client_id: String,
        /// The workload's JWT.
        assertion: Assertion,
    },
    /// Enterprise-managed authorization (ID-JAG): the enterprise identity
    /// provider trades the user's ID token for an identity assertion grant
    /// (token exchange, RFC 8693), which the authorization server takes in
    /// the `jwt-bearer` grant; no consent screen.
    Enterprise {
        /// The `client_id` at the authorization server.
        client_id: String,
        /// Its `client_secret` there.
        client_secret: String,
        /// The identity provider and the user's ID token.
        idp: EnterpriseIdp,
    },
}

/// The identity provider of [`ClientCredentials::Enterprise`].
#[derive(Clone)]
#[non_exhaustive]
pub struct EnterpriseIdp {
    /// Its token endpoint, where the ID token is exchanged.
    pub token_endpoint: String,
    /// The client's `client_id` at the identity provider.
    pub client_id: String,
    /// Its secret there, sent with `client_secret_basic` (none: a public
    /// client, `client_id` in the request).
    pub client_secret: Option<String>,
    /// The user's ID token from the identity provider.
    pub id_token: Assertion,
}

impl EnterpriseIdp {
    /// An identity provider's token endpoint, the client's id there and
    /// the user's ID token.
    pub fn new(token_endpoint: &str, client_id: &str, id_token: Assertion) -> Self {
        Self {
            token_endpoint: token_endpoint.to_string(),
            client_id: client_id.to_string(),
            client_secret: None,
            id_token,
        }
    }

    /// The client's secret at the identity provider.
    pub fn with_secret(mut self, secret: &str) -> Self {
        self.client_secret = Some(secret.to_string());
        self
    }
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The most bytes of a JWT read from a file.
pub const MAX_ASSERTION_BYTES: u64 = 64 * 1024;

/// A JWT the client presents: given, or read from a file each time it is
/// needed (a workload's token file is rotated in place).
#[derive(Clone)]
pub struct Assertion(AssertionSource);

#[derive(Clone)]
enum AssertionSource {
    Text(String),
    File(std::path::PathBuf),
}

impl Assertion {
    /// A JWT given as text.
    pub fn text(jwt: impl Into<String>) -> Self {
        Self(AssertionSource::Text(jwt.into()))
    }

    /// A JWT read from `path` (at most [`MAX_ASSERTION_BYTES`], surrounding
    /// whitespace trimmed) each time it is needed.
    pub fn file(path: impl Into<std::path::PathBuf>) -> Self {
        Self(AssertionSource::File(path.into()))
    }

    /// The JWT now.
    pub(crate) fn read(&self) -> Result<String, OAuthError> {
        let text = match &self.0 {
            AssertionSource::Text(t) => t.clone(),
            AssertionSource::File(path) => {
                use std::io::Read as _;
                let bad = |e: std::io::Error| {
                    OAuthError::Token(format!("the token file {}: {e}", path.display()))
                };
                let mut text = String::new();
                std::fs::File::open(path)
                    .map_err(bad)?
                    .take(MAX_ASSERTION_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(bad)?;
                if text.len() as u64 > MAX_ASSERTION_BYTES {
                    return Err(OAuthError::Token(format!(
                        "the token file {} is larger than {MAX_ASSERTION_BYTES} bytes",
                        path.display()
                    )));
                }
                text
            }
        };
        let jwt = text.trim();
        if jwt.is_empty() || !jwt.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(OAuthError::Token("the assertion is not a JWT".into()));
        }
        Ok(jwt.to_string())
    }
}

impl fmt::Debug for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            AssertionSource::Text(_) => f.write_str("Assertion(<text>)"),
            AssertionSource::File(p) => write!(f, "Assertion(file {})", p.display()),
        }
    }
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
            ClientCredentials::WorkloadJwt { client_id, .. }
            | ClientCredentials::Enterprise { client_id, .. } => client_id,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assertion_is_read_afresh_trimmed_and_bounded() {
        assert_eq!(Assertion::text(" a.b.c\n").read().unwrap(), "a.b.c");
        assert!(Assertion::text("a b").read().is_err());
        assert!(Assertion::text("\n").read().is_err());
        let path = std::env::temp_dir().join(format!("snodo-assertion-{}", std::process::id()));
        std::fs::write(&path, "one.two.three\n").unwrap();
        let file = Assertion::file(&path);
        assert_eq!(file.read().unwrap(), "one.two.three");
        std::fs::write(&path, "four.five.six").unwrap();
        assert_eq!(file.read().unwrap(), "four.five.six", "read at each use");
        std::fs::write(&path, "x".repeat(MAX_ASSERTION_BYTES as usize + 1)).unwrap();
        assert!(
            file.read()
                .unwrap_err()
                .to_string()
                .contains("larger than 65536 bytes")
        );
        std::fs::remove_file(&path).unwrap();
        assert!(
            file.read()
                .unwrap_err()
                .to_string()
                .contains("the token file")
        );
        assert_eq!(
            format!("{:?}", Assertion::text("secret")),
            "Assertion(<text>)"
        );
    }
}
