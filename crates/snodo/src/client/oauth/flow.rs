//! The decisions taken on a `401` or `403`: discovery, identity, and the
//! grant that yields the next token.

use super::authorizer::CallbackParams;
use super::pkce::{Pkce, random_token};
use super::registration::{ClientInfo, register};
use super::store::{IssuerState, Registration, TokenSet};
use super::token::{self, AuthMethod, choose_method};
use super::{ClientCredentials, OAuth, OAuthError};

/// The `jwt-bearer` grant type (RFC 7523).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The token exchange grant type (RFC 8693).
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The identity assertion JWT authorization grant's token type.
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// An ID token's token type.
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// Refuses to send a workload's JWT to an authorization server it is not
/// for: its `aud` must name the server's issuer or token endpoint (a server
/// that names another authorization server must not collect a credential it
/// could replay where the JWT is valid).
fn check_audience(jwt: &str, meta: &ServerMetadata) -> Result<(), OAuthError> {
    use base64::Engine as _;
    let payload = jwt
        .split('.')
        .nth(1)
        .and_then(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .ok()
        })
        .and_then(|p| serde_json::from_slice::<serde_json::Value>(&p).ok())
        .ok_or_else(|| OAuthError::Token("the workload token is not a JWT".into()))?;
    let audiences: Vec<&str> = match payload.get("aud") {
        Some(serde_json::Value::String(a)) => vec![a.as_str()],
        Some(serde_json::Value::Array(list)) => {
            list.iter().filter_map(serde_json::Value::as_str).collect()
        }
        _ => Vec::new(),
    };
    let trim = |s: &str| s.trim_end_matches('/').to_string();
    let wanted: Vec<String> = std::iter::once(meta.issuer.as_str())
        .chain(meta.token_endpoint.as_deref())
        .map(trim)
        .collect();
    if audiences.iter().any(|a| wanted.contains(&trim(a))) {
        Ok(())
    } else {
        Err(OAuthError::Token(format!(
            "the workload token is for {audiences:?}, not for the authorization server {}: not sent",
            meta.issuer
        )))
    }
}
use crate::net::OAuthHttp;
use crate::protocol::auth::challenge::Challenge;
use crate::protocol::auth::metadata::{
    ResourceMetadata, ServerMetadata, resource_covers, resource_metadata_urls, server_metadata_urls,
};

/// What came back with a `401` or `403`.
#[derive(Debug)]
pub(crate) struct Refusal<'a> {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The `Bearer` challenge, if the server sent one.
    pub(crate) challenge: Option<&'a Challenge>,
    /// The `Authorization` value the refused request carried.
    pub(crate) sent: Option<&'a ::http::HeaderValue>,
}

fn union(into: &mut Vec<String>, more: &[String]) {
    for s in more {
        if !into.contains(s) {
            into.push(s.clone());
        }
    }
}

impl OAuth {
    /// Reacts to a refusal of a request to `endpoint`; `Ok` means a new
    /// token is in place and the request may be sent again.
    pub(crate) async fn on_refusal(
        &self,
        endpoint: &str,
        refusal: Refusal<'_>,
    ) -> Result<(), OAuthError> {
        let mut guard = self.inner.flow.lock().await;
        let state_of_flow = &mut *guard;
        let metadata_cache = &mut state_of_flow.metadata;
        let flow = state_of_flow
            .endpoints
            .entry(endpoint.to_string())
            .or_default();
        // Another request may have fixed things while this one waited.
        if self.authorization(endpoint).as_ref() != refusal.sent {
            return Ok(());
        }
        let challenged = refusal.challenge.map(Challenge::scopes).unwrap_or_default();
        if refusal.status == 403 {
            let error = refusal.challenge.and_then(|c| c.param("error"));
            if error != Some("insufficient_scope") {
                let why = refusal
                    .challenge
                    .and_then(|c| c.param("error_description"))
                    .unwrap_or("the server refused the request");
                return Err(OAuthError::Forbidden(why.to_string()));
            }
            let granted = flow
                .issuer
                .as_deref()
                .and_then(|i| self.inner.config.store.load(i))
                .and_then(|s| s.tokens)
                .map(|t| t.scopes)
                .unwrap_or_default();
            if !challenged.is_empty() && challenged.iter().all(|s| granted.contains(s)) {
                return Err(OAuthError::InsufficientScope(format!(
                    "the server wants {:?}, which the token already has",
                    challenged.join(" ")
                )));
            }
        }

        // Discovery, fresh on every refusal: the server may have moved to
        // another authorization server.
        let http = &self.inner.http;
        let prm = fetch_resource_metadata(http, endpoint, refusal.challenge).await?;
        if !resource_covers(&prm.resource, endpoint) {
            return Err(OAuthError::ResourceMismatch {
                resource: prm.resource,
                endpoint: endpoint.to_string(),
            });
        }
        let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| {
            OAuthError::Metadata("the resource metadata names no authorization server".into())
        })?;
        // A new authorization server: nothing of the old one is reused, and
        // what was kept for it is forgotten once the new one issued a token.
        let moved_from = flow.issuer.clone().filter(|old| *old != issuer);
        if moved_from.is_some() {
            self.clear_current(endpoint);
            flow.requested.clear();
        }
        let meta = match metadata_cache.get(&issuer) {
            Some(m) => m.clone(),
            None => {
                let m = fetch_server_metadata(http, &issuer).await?;
                metadata_cache.insert(issuer.clone(), m.clone());
                m
            }
        };
        let forget_old = |store: &dyn super::TokenStore| {
            if let Some(old) = &moved_from {
                store.remove(old);
            }
        };

        let mut state = self
            .inner
            .config
            .store
            .load(&issuer)
            .unwrap_or_else(|| IssuerState::new(&issuer));

        // A 401: a stored token this request did not carry, or a refresh.
        if refusal.status == 401 {
            if let Some(tokens) = &state.tokens
                && !tokens.expires_within(30)
                && refusal.sent.map(::http::HeaderValue::as_bytes)
                    != Some(tokens.authorization().as_bytes())
                && state.resource.as_deref() == Some(prm.resource.as_str())
                && self.can_present(tokens)
            {
                let tokens = tokens.clone();
                union(&mut flow.requested, &tokens.scopes);
                self.set_current(endpoint, &issuer, &tokens)?;
                flow.issuer = Some(issuer);
                forget_old(self.inner.config.store.as_ref());
                return Ok(());
            }
            if let (Some(refresh), Some(reg)) = (
                state.tokens.as_ref().and_then(|t| t.refresh_token.clone()),
                state.registration.clone(),
            ) {
                let method = self.method_for(&meta, &reg);
                let grant = vec![
                    ("grant_type", "refresh_token".to_string()),
                    ("refresh_token", refresh.clone()),
                    ("resource", prm.resource.clone()),
                ];
                let old_scopes = state
                    .tokens
                    .as_ref()
                    .map(|t| t.scopes.clone())
                    .unwrap_or_default();
                if let Ok(mut fresh) = self.token(&meta, &reg, &method, grant, &old_scopes).await {
                    // Rotation: keep the old refresh token only if no new one came.
                    if fresh.refresh_token.is_none() {
                        fresh.refresh_token = Some(refresh);
                    }
                    state.tokens = Some(fresh.clone());
                    state.resource = Some(prm.resource.clone());
                    self.inner.config.store.save(&state);
                    self.set_current(endpoint, &issuer, &fresh)?;
                    flow.issuer = Some(issuer);
                    forget_old(self.inner.config.store.as_ref());
                    return Ok(());
                }
            }
        }

        // Scopes: the challenge's, else the resource's, else none; step-up
        // adds what was asked before.
        let mut scopes = if !challenged.is_empty() {
            challenged
        } else {
            prm.scopes_supported.clone().unwrap_or_default()
        };
        let mut all = flow.requested.clone();
        union(&mut all, &scopes);
        scopes = all;
        if !scopes.is_empty()
            && meta.supports_scope("offline_access")
            && !scopes.iter().any(|s| s == "offline_access")
            && self.inner.config.credentials.is_none()
        {
            scopes.push("offline_access".into());
        }

        let tokens = match self.inner.config.credentials.clone() {
            Some(credentials) => {
                self.client_credentials(&meta, &credentials, &prm.resource, &scopes, &mut state)
                    .await?
            }
            None => {
                self.authorization_code(&meta, &prm.resource, &scopes, &mut state)
                    .await?
            }
        };
        union(&mut flow.requested, &scopes);
        state.tokens = Some(tokens.clone());
        state.resource = Some(prm.resource.clone());
        self.inner.config.store.save(&state);
        self.set_current(endpoint, &issuer, &tokens)?;
        flow.issuer = Some(issuer);
        forget_old(self.inner.config.store.as_ref());
        Ok(())
    }

    /// One token request with this client's HTTP and DPoP key.
    async fn token(
        &self,
        meta: &ServerMetadata,
        reg: &Registration,
        method: &AuthMethod,
        grant: Vec<(&'static str, String)>,
        requested: &[String],
    ) -> Result<TokenSet, OAuthError> {
        let (http, dpop) = (&self.inner.http, self.inner.dpop.as_ref());
        token::request(http, meta, reg, method, grant, requested, dpop).await
    }

    fn method_for(&self, meta: &ServerMetadata, reg: &Registration) -> AuthMethod {
        #[cfg(feature = "auth")]
        if let Some(ClientCredentials::PrivateKeyJwt { client_id, key }) =
            &self.inner.config.credentials
            && *client_id == reg.client_id
        {
            return AuthMethod::PrivateKeyJwt(key.clone());
        }
        choose_method(meta, reg)
    }

    async fn client_credentials(
        &self,
        meta: &ServerMetadata,
        credentials: &ClientCredentials,
        resource: &str,
        scopes: &[String],
        state: &mut IssuerState,
    ) -> Result<TokenSet, OAuthError> {
        {
            let mut pinned = self
                .inner
                .config
                .credentials_issuer
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match pinned.as_deref() {
                Some(owner) if owner != meta.issuer => {
                    return Err(OAuthError::Registration(format!(
                        "the client credentials belong to {owner}; the server names {}",
                        meta.issuer
                    )));
                }
                Some(_) => {}
                None => *pinned = Some(meta.issuer.clone()),
            }
        }
        let reg = Registration {
            client_id: credentials.client_id().to_string(),
            client_secret: match credentials {
                ClientCredentials::Secret { client_secret, .. }
                | ClientCredentials::Enterprise { client_secret, .. } => {
                    Some(client_secret.clone())
                }
                #[cfg(feature = "auth")]
                ClientCredentials::PrivateKeyJwt { .. } => None,
                ClientCredentials::WorkloadJwt { .. } => None,
            },
            auth_method: None,
        };
        let method = self.method_for(meta, &reg);
        let mut grant = match credentials {
            ClientCredentials::WorkloadJwt { assertion, .. } => {
                let jwt = assertion.read()?;
                check_audience(&jwt, meta)?;
                vec![("grant_type", JWT_BEARER.to_string()), ("assertion", jwt)]
            }
            ClientCredentials::Enterprise { idp, .. } => vec![
                ("grant_type", JWT_BEARER.to_string()),
                (
                    "assertion",
                    self.exchange_id_token(idp, meta, resource, scopes).await?,
                ),
            ],
            _ => vec![("grant_type", "client_credentials".to_string())],
        };
        grant.push(("resource", resource.to_string()));
        if !scopes.is_empty() {
            grant.push(("scope", scopes.join(" ")));
        }
        let tokens = self.token(meta, &reg, &method, grant, scopes).await?;
        state.registration = Some(reg);
        Ok(tokens)
    }

    /// Trades the user's ID token at the identity provider for an identity
    /// assertion grant (ID-JAG) for the authorization server `meta` and
    /// `resource` (RFC 8693 token exchange).
    async fn exchange_id_token(
        &self,
        idp: &super::EnterpriseIdp,
        meta: &ServerMetadata,
        resource: &str,
        scopes: &[String],
    ) -> Result<String, OAuthError> {
        let http = &self.inner.http;
        http.check_url(&idp.token_endpoint)?;
        let id_token = idp.id_token.read()?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("audience", meta.issuer.as_str()),
            ("resource", resource),
            ("subject_token", id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
        ];
        let mut headers = Vec::new();
        match &idp.client_secret {
            Some(secret) => headers.push((
                http::header::AUTHORIZATION,
                token::basic(&idp.client_id, secret)?,
            )),
            None => form.push(("client_id", idp.client_id.as_str())),
        }
        let scope = scopes.join(" ");
        if !scope.is_empty() {
            form.push(("scope", scope.as_str()));
        }
        let answer = http.post_form(&idp.token_endpoint, &form, headers).await?;
        #[derive(serde::Deserialize)]
        struct Exchanged {
            access_token: String,
            issued_token_type: String,
        }
        if !answer.status.is_success() {
            // The error is read as a token endpoint's.
            return Err(token::read_answer(&answer, scopes, None)
                .err()
                .unwrap_or_else(|| OAuthError::Token("the token exchange failed".into())));
        }
        let exchanged: Exchanged = answer.json().ok_or_else(|| {
            OAuthError::Token("the identity provider's exchange answer is not a token".into())
        })?;
        if exchanged.issued_token_type != ID_JAG {
            return Err(OAuthError::Token(format!(
                "the identity provider issued a {}, not an ID-JAG",
                exchanged.issued_token_type
            )));
        }
        Ok(exchanged.access_token)
    }

    async fn authorization_code(
        &self,
        meta: &ServerMetadata,
        resource: &str,
        scopes: &[String],
        state: &mut IssuerState,
    ) -> Result<TokenSet, OAuthError> {
        let config = &self.inner.config;
        let http = &self.inner.http;
        if !meta.supports_s256() {
            return Err(OAuthError::Metadata(format!(
                "{} does not support PKCE with S256",
                meta.issuer
            )));
        }
        let authorize = meta.authorization_endpoint.as_deref().ok_or_else(|| {
            OAuthError::Metadata(format!("{} has no authorization_endpoint", meta.issuer))
        })?;
        http.check_url(authorize)?;
        if let Some(token) = &meta.token_endpoint {
            http.check_url(token)?;
        }
        // The verifier and the state first: without the random source the
        // login is refused before anything starts.
        let unavailable = |e| OAuthError::Authorization(format!("cannot start a login: {e}"));
        let pkce = Pkce::new().map_err(unavailable)?;
        let csrf = random_token(16).map_err(unavailable)?;
        let session = config.authorizer.start().await?;
        let redirect_uri = session.redirect_uri().to_string();
        let reg = match state.registration.clone() {
            Some(reg) => reg,
            None => {
                let reg = match config
                    .pre_registered
                    .iter()
                    .find(|(issuer, _)| *issuer == meta.issuer)
                {
                    Some((_, reg)) => reg.clone(),
                    None => {
                        let info = ClientInfo {
                            name: &config.client_name,
                            redirect_uri: &redirect_uri,
                            metadata_url: config.client_metadata_url.as_deref(),
                        };
                        register(http, meta, &info).await?
                    }
                };
                state.registration = Some(reg.clone());
                config.store.save(state);
                reg
            }
        };
        let mut url = String::from(authorize);
        url.push(if authorize.contains('?') { '&' } else { '?' });
        url.push_str(&{
            let mut query = form_urlencoded::Serializer::new(String::new());
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &reg.client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("state", &csrf)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", resource);
            if !scopes.is_empty() {
                query.append_pair("scope", &scopes.join(" "));
            }
            // OpenID Connect grants offline_access only with consent asked.
            if scopes.iter().any(|s| s == "offline_access") {
                query.append_pair("prompt", "consent");
            }
            query.finish()
        });
        let params = session.complete(url).await?;
        let code = check_callback(&params, &csrf, meta)?;
        let method = self.method_for(meta, &reg);
        let grant = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", pkce.verifier),
            ("resource", resource.to_string()),
        ];
        self.token(meta, &reg, &method, grant, scopes).await
    }
}

/// The code of a redirect, after the `iss` rule of RFC 9207 §2.4 (compared
/// as plain strings) and the `state` check; an `error` is believed only
/// once `iss` checked out.
pub(crate) fn check_callback(
    params: &CallbackParams,
    state: &str,
    meta: &ServerMetadata,
) -> Result<String, OAuthError> {
    let advertised = meta.authorization_response_iss_parameter_supported == Some(true);
    match &params.iss {
        Some(iss) if *iss != meta.issuer => {
            return Err(OAuthError::IssuerMismatch {
                expected: meta.issuer.clone(),
                found: iss.clone(),
            });
        }
        None if advertised => {
            return Err(OAuthError::Authorization(
                "the redirect lacks the iss the authorization server promised".into(),
            ));
        }
        _ => {}
    }
    if params.state.as_deref() != Some(state) {
        return Err(OAuthError::Authorization(
            "the redirect's state does not match".into(),
        ));
    }
    if let Some(error) = &params.error {
        return Err(OAuthError::Authorization(match &params.error_description {
            Some(d) => format!("{error}: {d}"),
            None => error.clone(),
        }));
    }
    params
        .code
        .clone()
        .ok_or_else(|| OAuthError::Authorization("the redirect carries no code".into()))
}

/// The Protected Resource Metadata: the URL the challenge names, else the
/// path-inserted then the root well-known URL.
async fn fetch_resource_metadata(
    http: &OAuthHttp,
    endpoint: &str,
    challenge: Option<&Challenge>,
) -> Result<ResourceMetadata, OAuthError> {
    let urls = match challenge.and_then(|c| c.param("resource_metadata")) {
        Some(url) => vec![url.to_string()],
        None => resource_metadata_urls(endpoint),
    };
    let mut tried = Vec::new();
    for url in &urls {
        let answer = http.get(url).await?;
        if answer.status.is_success()
            && let Some(doc) = answer.json::<ResourceMetadata>()
        {
            return Ok(doc);
        }
        tried.push(format!("{url} ({})", answer.status.as_u16()));
    }
    Err(OAuthError::Metadata(format!(
        "no protected resource metadata at {}",
        tried.join(", ")
    )))
}

/// Authorization server metadata for `issuer`, from the first of the
/// spec's URLs that answers; its `issuer` must be `issuer` exactly.
async fn fetch_server_metadata(
    http: &OAuthHttp,
    issuer: &str,
) -> Result<ServerMetadata, OAuthError> {
    let urls = server_metadata_urls(issuer);
    if urls.is_empty() {
        return Err(OAuthError::Metadata(format!(
            "the issuer {issuer:?} is not an http(s) URL"
        )));
    }
    let mut tried = Vec::new();
    for url in &urls {
        let answer = http.get(url).await?;
        if answer.status.is_success()
            && let Some(doc) = answer.json::<ServerMetadata>()
        {
            if doc.issuer != issuer {
                return Err(OAuthError::IssuerMismatch {
                    expected: issuer.to_string(),
                    found: doc.issuer,
                });
            }
            return Ok(doc);
        }
        tried.push(format!("{url} ({})", answer.status.as_u16()));
    }
    Err(OAuthError::Metadata(format!(
        "no authorization server metadata at {}",
        tried.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(advertised: Option<bool>) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://localhost:9".into(),
            authorization_response_iss_parameter_supported: advertised,
            ..Default::default()
        }
    }

    fn params(iss: Option<&str>, error: Option<&str>) -> CallbackParams {
        CallbackParams {
            code: Some("c".into()),
            state: Some("s".into()),
            iss: iss.map(str::to_string),
            error: error.map(str::to_string),
            error_description: None,
        }
    }

    /// An authorizer that only records whether a login started.
    #[derive(Debug, Default)]
    struct Recording(std::sync::Arc<std::sync::atomic::AtomicBool>);

    impl super::super::Authorizer for Recording {
        fn start(
            &self,
        ) -> crate::future::BoxFuture<
            '_,
            Result<Box<dyn super::super::AuthorizationSession>, OAuthError>,
        > {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async { Err(OAuthError::Authorization("not in this test".into())) })
        }
    }

    #[tokio::test]
    async fn a_login_without_the_random_source_is_refused_before_it_starts() {
        let recording = Recording::default();
        let started = recording.0.clone();
        let oauth = OAuth::builder().authorizer(recording).build();
        let meta = ServerMetadata {
            issuer: "http://127.0.0.1:9".into(),
            authorization_endpoint: Some("http://127.0.0.1:9/authorize".into()),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            ..Default::default()
        };
        let mut state = IssuerState::new(&meta.issuer);
        let refused = {
            let _off = crate::random::failing();
            oauth
                .authorization_code(&meta, "http://127.0.0.1:9/mcp", &[], &mut state)
                .await
                .unwrap_err()
        };
        match refused {
            OAuthError::Authorization(m) => assert!(m.contains("random source failed"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(!started.load(std::sync::atomic::Ordering::SeqCst));
        // With the random source, the login reaches the authorizer.
        let _ = oauth
            .authorization_code(&meta, "http://127.0.0.1:9/mcp", &[], &mut state)
            .await;
        assert!(started.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn the_rfc_9207_table() {
        let right = Some("http://localhost:9");
        // advertised & present: compare.
        assert_eq!(
            check_callback(&params(right, None), "s", &meta(Some(true))),
            Ok("c".into())
        );
        for wrong in [
            "http://localhost:9/",
            "HTTP://localhost:9",
            "http://localhost:09",
            "https://evil.example.com",
        ] {
            assert!(
                matches!(
                    check_callback(&params(Some(wrong), None), "s", &meta(Some(true))),
                    Err(OAuthError::IssuerMismatch { .. })
                ),
                "{wrong}"
            );
            // not advertised & present: compare anyway.
            assert!(check_callback(&params(Some(wrong), None), "s", &meta(None)).is_err());
        }
        // advertised & absent: reject.
        assert!(check_callback(&params(None, None), "s", &meta(Some(true))).is_err());
        // not advertised & absent: proceed.
        assert_eq!(
            check_callback(&params(None, None), "s", &meta(Some(false))),
            Ok("c".into())
        );
        // state.
        assert!(check_callback(&params(right, None), "other", &meta(Some(true))).is_err());
        // An error from the wrong issuer is reported as the issuer mismatch.
        assert!(matches!(
            check_callback(
                &params(Some("https://evil.example.com"), Some("access_denied")),
                "s",
                &meta(None)
            ),
            Err(OAuthError::IssuerMismatch { .. })
        ));
        assert!(matches!(
            check_callback(&params(right, Some("access_denied")), "s", &meta(Some(true))),
            Err(OAuthError::Authorization(m)) if m == "access_denied"
        ));
    }
}

#[cfg(test)]
mod audience_tests {
    use super::*;
    use base64::Engine as _;

    fn jwt(claims: serde_json::Value) -> String {
        let enc = |v: &serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        format!(
            "{}.{}.sig",
            enc(&serde_json::json!({"alg": "ES256"})),
            enc(&claims)
        )
    }

    #[test]
    fn a_workload_token_goes_only_to_the_server_it_names() {
        let meta: ServerMetadata = serde_json::from_value(serde_json::json!({
            "issuer": "https://as.example.com",
            "token_endpoint": "https://as.example.com/token",
        }))
        .unwrap();
        for aud in [
            serde_json::json!("https://as.example.com/"),
            serde_json::json!(["x", "https://as.example.com/token"]),
        ] {
            assert!(check_audience(&jwt(serde_json::json!({"aud": aud})), &meta).is_ok());
        }
        for claims in [
            serde_json::json!({"aud": "https://evil.example.com"}),
            serde_json::json!({"sub": "no aud"}),
        ] {
            let e = check_audience(&jwt(claims), &meta).unwrap_err();
            assert!(e.to_string().contains("not sent"), "{e}");
        }
        assert!(check_audience("not-a-jwt", &meta).is_err());
    }
}

#[cfg(test)]
mod dpop_tests {
    use super::super::{DpopKey, TokenSet};
    use super::OAuth;

    #[test]
    fn a_bound_token_is_presented_only_with_its_key() {
        let key = DpopKey::generate().unwrap();
        let other = DpopKey::generate().unwrap();
        let with_key = OAuth::builder().dpop(key.clone()).build();
        let without = OAuth::builder().build();
        let bound = |jkt: &str| TokenSet {
            access_token: "t".into(),
            token_type: "DPoP".into(),
            dpop_jkt: Some(jkt.into()),
            ..TokenSet::default()
        };
        assert!(with_key.can_present(&bound(key.thumbprint())));
        assert!(!with_key.can_present(&bound(other.thumbprint())));
        assert!(!without.can_present(&bound(key.thumbprint())));
        assert!(with_key.can_present(&TokenSet::default()));
        assert_eq!(bound("k").authorization(), "DPoP t");
        // A token of another key is never put in use.
        assert!(
            with_key
                .set_current("http://127.0.0.1:9/mcp", "i", &bound(other.thumbprint()))
                .is_err()
        );
        with_key
            .set_current("http://127.0.0.1:9/mcp", "i", &bound(key.thumbprint()))
            .unwrap();
        let (header, proof) = with_key
            .credentials("http://127.0.0.1:9/mcp", "POST")
            .unwrap()
            .unwrap();
        assert_eq!(header, "DPoP t");
        assert!(proof.is_some());
    }
}
