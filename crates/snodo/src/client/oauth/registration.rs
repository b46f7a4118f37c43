//! Finding a client identity at an authorization server, in the spec's
//! order: what the store kept for that issuer, a registration made
//! beforehand for it, a Client ID Metadata Document where the server takes
//! them, or dynamic client registration (RFC 7591).

use serde_json::{Value, json};

use super::OAuthError;
use super::store::Registration;
use crate::net::{Answer, OAuthHttp};
use crate::protocol::auth::metadata::ServerMetadata;

/// What the client tells a registration endpoint about itself.
pub(crate) struct ClientInfo<'a> {
    pub(crate) name: &'a str,
    pub(crate) redirect_uri: &'a str,
    pub(crate) metadata_url: Option<&'a str>,
}

/// The `token_endpoint_auth_method` to ask for: `none` (a native public
/// client) where the server takes it, else a secret method it lists.
fn requested_method(meta: &ServerMetadata) -> Option<&'static str> {
    let listed = meta.token_endpoint_auth_methods_supported.as_ref()?;
    ["none", "client_secret_basic", "client_secret_post"]
        .into_iter()
        .find(|m| listed.iter().any(|l| l == m))
}

/// A Client ID Metadata Document for `info` (what the https URL it is
/// published at must serve).
pub fn client_metadata_document(client_id: &str, name: &str, redirect_uris: &[&str]) -> Value {
    json!({
        "client_id": client_id,
        "client_name": name,
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    })
}

/// The identity to use with `meta`'s issuer when nothing is kept for it.
pub(crate) async fn register(
    http: &OAuthHttp,
    meta: &ServerMetadata,
    info: &ClientInfo<'_>,
) -> Result<Registration, OAuthError> {
    if meta.client_id_metadata_document_supported == Some(true)
        && let Some(url) = info.metadata_url
    {
        return Ok(Registration {
            client_id: url.to_string(),
            client_secret: None,
            auth_method: Some("none".into()),
        });
    }
    let Some(endpoint) = meta.registration_endpoint.as_deref() else {
        return Err(OAuthError::Registration(format!(
            "{} offers no dynamic registration and no client is registered there",
            meta.issuer
        )));
    };
    let mut body = json!({
        "client_name": info.name,
        "redirect_uris": [info.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "application_type": "native",
    });
    if let Some(method) = requested_method(meta) {
        body["token_endpoint_auth_method"] = json!(method);
    }
    let answer = http.post_json(endpoint, &body).await?;
    read_answer(&answer)
}

/// The registration endpoint's `answer`: the client it registered, or the
/// error it names.
pub(crate) fn read_answer(answer: &Answer) -> Result<Registration, OAuthError> {
    if !answer.status.is_success() {
        let why = answer
            .json::<Value>()
            .and_then(|v| {
                let e = v.get("error")?.as_str()?.to_string();
                Some(match v.get("error_description").and_then(Value::as_str) {
                    Some(d) => format!("{e}: {d}"),
                    None => e,
                })
            })
            .unwrap_or_else(|| format!("HTTP status {}", answer.status.as_u16()));
        return Err(OAuthError::Registration(why));
    }
    let v: Value = answer
        .json()
        .ok_or_else(|| OAuthError::Registration("the registration answer is not JSON".into()))?;
    let client_id = v.get("client_id").and_then(Value::as_str).ok_or_else(|| {
        OAuthError::Registration("the registration answer has no client_id".into())
    })?;
    Ok(Registration {
        client_id: client_id.to_string(),
        client_secret: v
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_string),
        auth_method: v
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}
