//! The token endpoint: the grants (authorization code, refresh, client
//! credentials) and the client authentication methods (`client_secret_basic`,
//! `client_secret_post`, `none`, `private_key_jwt`), with a DPoP proof where
//! the client has a key and the issuer takes ES256 proofs.

use ::http::{HeaderValue, header};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::OAuthError;
use super::dpop::Prover;
use super::store::{Registration, TokenSet};
use crate::net::now_secs;
use crate::net::{Answer, OAuthHttp};
use crate::protocol::auth::metadata::ServerMetadata;

/// How the client proves its identity at the token endpoint.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum AuthMethod {
    /// `Authorization: Basic` with the form-encoded id and secret.
    Basic,
    /// `client_id` and `client_secret` in the form.
    Post,
    /// Only `client_id` in the form (a public client).
    None,
    /// A signed JWT assertion (RFC 7523).
    #[cfg(feature = "auth")]
    PrivateKeyJwt(super::credentials::SigningKey),
}

/// Chooses the method: the one the registration named when the server
/// lists it; otherwise, with a secret, `client_secret_basic` then
/// `client_secret_post`; otherwise `none`. A server that lists no methods
/// gets Basic when there is a secret (RFC 8414's default).
pub(crate) fn choose_method(meta: &ServerMetadata, reg: &Registration) -> AuthMethod {
    let from_name = |name: &str| match name {
        "client_secret_basic" if reg.client_secret.is_some() => Some(AuthMethod::Basic),
        "client_secret_post" if reg.client_secret.is_some() => Some(AuthMethod::Post),
        "none" => Some(AuthMethod::None),
        _ => None,
    };
    let Some(listed) = &meta.token_endpoint_auth_methods_supported else {
        return if reg.client_secret.is_some() {
            AuthMethod::Basic
        } else {
            AuthMethod::None
        };
    };
    if let Some(m) = reg
        .auth_method
        .as_deref()
        .filter(|m| listed.iter().any(|l| l == m))
        .and_then(from_name)
    {
        return m;
    }
    if reg.client_secret.is_some() {
        for name in ["client_secret_basic", "client_secret_post"] {
            if listed.iter().any(|l| l == name) {
                return from_name(name).unwrap_or(AuthMethod::Basic);
            }
        }
    }
    AuthMethod::None
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// One request to the token endpoint: `grant` plus client authentication
/// and `resource`; `requested` are the scopes asked for, used as the grant
/// when the answer names none. With `dpop` and an issuer that lists ES256,
/// the request carries a proof (sent once more with the issuer's nonce when
/// it answers `use_dpop_nonce`) and the token may come back bound to it.
pub(crate) async fn request(
    http: &OAuthHttp,
    meta: &ServerMetadata,
    reg: &Registration,
    method: &AuthMethod,
    mut grant: Vec<(&'static str, String)>,
    requested: &[String],
    dpop: Option<&Prover>,
) -> Result<TokenSet, OAuthError> {
    let endpoint = meta
        .token_endpoint
        .as_deref()
        .ok_or_else(|| OAuthError::Metadata("the issuer has no token_endpoint".into()))?;
    let mut headers = Vec::new();
    match method {
        AuthMethod::Basic => headers.push((
            header::AUTHORIZATION,
            basic(&reg.client_id, reg.client_secret.as_deref().unwrap_or(""))?,
        )),
        AuthMethod::Post => {
            grant.push(("client_id", reg.client_id.clone()));
            grant.push((
                "client_secret",
                reg.client_secret.clone().unwrap_or_default(),
            ));
        }
        AuthMethod::None => grant.push(("client_id", reg.client_id.clone())),
        #[cfg(feature = "auth")]
        AuthMethod::PrivateKeyJwt(key) => {
            grant.push(("client_id", reg.client_id.clone()));
            grant.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            grant.push((
                "client_assertion",
                key.assertion(&reg.client_id, &meta.issuer)?,
            ));
        }
    }
    let form: Vec<(&str, &str)> = grant.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let Some(prover) = dpop.filter(|_| meta.supports_dpop(crate::protocol::auth::dpop::ALGORITHM))
    else {
        let answer = http.post_form(endpoint, &form, headers).await?;
        return read_answer(&answer, requested, None);
    };
    let mut nonce_retried = false;
    loop {
        let mut with_proof = headers.clone();
        with_proof.push((
            ::http::HeaderName::from_static(crate::protocol::auth::dpop::DPOP_HEADER),
            prover.proof("POST", endpoint, None)?,
        ));
        let answer = http.post_form(endpoint, &form, with_proof).await?;
        let fresh_nonce = prover.remember(endpoint, &answer.headers);
        let wants_nonce = answer.status == ::http::StatusCode::BAD_REQUEST
            && answer
                .json::<ErrorResponse>()
                .is_some_and(|e| e.error == "use_dpop_nonce");
        if wants_nonce && fresh_nonce && !nonce_retried {
            nonce_retried = true;
            continue;
        }
        return read_answer(&answer, requested, Some(prover.thumbprint()));
    }
}

/// The `Authorization` value of `client_secret_basic` (RFC 6749 §2.3.1:
/// the id and the secret form-encoded, then base64).
pub(crate) fn basic(client_id: &str, secret: &str) -> Result<HeaderValue, OAuthError> {
    let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", enc(client_id), enc(secret));
    HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(pair)))
        .map_err(|_| OAuthError::Registration("the client id cannot be sent".into()))
}

/// The token endpoint's `answer`: a bearer token (or, when the request
/// carried a proof of the key whose thumbprint is `proved`, a DPoP-bound
/// one), or the error it names; `requested` are the scopes granted when
/// the answer names none.
pub(crate) fn read_answer(
    answer: &Answer,
    requested: &[String],
    proved: Option<&str>,
) -> Result<TokenSet, OAuthError> {
    if !answer.status.is_success() {
        let detail = answer
            .json::<ErrorResponse>()
            .map(|e| match e.error_description {
                Some(d) => format!("{}: {d}", e.error),
                None => e.error,
            })
            .unwrap_or_else(|| format!("HTTP status {}", answer.status.as_u16()));
        return Err(OAuthError::Token(detail));
    }
    let tr: TokenResponse = answer
        .json()
        .ok_or_else(|| OAuthError::Token("the token response is not a token".into()))?;
    let token_type = tr.token_type.unwrap_or_else(|| "Bearer".into());
    let dpop_jkt = match proved {
        Some(jkt) if token_type.eq_ignore_ascii_case("dpop") => Some(jkt.to_string()),
        _ if token_type.eq_ignore_ascii_case("bearer") => None,
        _ => {
            return Err(OAuthError::Token(format!(
                "unsupported token type {token_type:?}"
            )));
        }
    };
    Ok(TokenSet {
        access_token: tr.access_token,
        token_type: if dpop_jkt.is_some() { "DPoP" } else { "Bearer" }.into(),
        dpop_jkt,
        refresh_token: tr.refresh_token,
        expires_at: tr.expires_in.map(|s| now_secs().saturating_add(s)),
        scopes: match tr.scope {
            Some(s) => s
                .split(' ')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            None => requested.to_vec(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(methods: Option<&[&str]>) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://a".into(),
            token_endpoint_auth_methods_supported: methods
                .map(|m| m.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }

    fn reg(secret: bool, method: Option<&str>) -> Registration {
        Registration {
            client_id: "c".into(),
            client_secret: secret.then(|| "s".into()),
            auth_method: method.map(str::to_string),
        }
    }

    #[test]
    fn method_choice_follows_registration_then_secret_then_none() {
        let both = Some(&["client_secret_basic", "client_secret_post", "none"][..]);
        assert_eq!(
            choose_method(&meta(both), &reg(true, Some("client_secret_post"))),
            AuthMethod::Post
        );
        assert_eq!(
            choose_method(&meta(both), &reg(true, None)),
            AuthMethod::Basic
        );
        assert_eq!(
            choose_method(&meta(Some(&["client_secret_post"])), &reg(true, None)),
            AuthMethod::Post
        );
        assert_eq!(
            choose_method(&meta(Some(&["none"])), &reg(true, None)),
            AuthMethod::None
        );
        assert_eq!(
            choose_method(&meta(both), &reg(false, None)),
            AuthMethod::None
        );
        assert_eq!(
            choose_method(&meta(None), &reg(true, None)),
            AuthMethod::Basic
        );
        assert_eq!(
            choose_method(&meta(None), &reg(false, None)),
            AuthMethod::None
        );
        // A registered method the server does not list is not used.
        assert_eq!(
            choose_method(
                &meta(Some(&["client_secret_basic"])),
                &reg(true, Some("client_secret_post"))
            ),
            AuthMethod::Basic
        );
    }
}
