//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`): the
//! decoders of untrusted bytes that have no public home of their own.
//!
//! Everything else the targets drive is public API (`wire::decode`,
//! `protocol::headers::decode_value`, `UriTemplate`, the validators, a
//! [`Server`](crate::Server) and its HTTP service). This module is not a
//! stable API: it exists so that the private parsers can be fuzzed as they
//! are, not as a copy.

/// What the client's `text/event-stream` parser made of a body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseOutcome {
    /// Every dispatched event: its `event:` field, its joined `data:` lines
    /// and its `id:`, in order.
    pub events: Vec<(Option<String>, String, Option<String>)>,
    /// The last event id seen (what `Last-Event-ID` would carry).
    pub last_id: Option<String>,
    /// The last `retry:` value, in milliseconds.
    pub retry_ms: Option<u64>,
    /// Whether an event grew past the bound (the client drops the stream).
    pub overflow: bool,
}

/// Feeds `chunks` in order to the client's SSE parser, bounded at
/// `max_event` bytes an event, as the HTTP client does with a response body.
///
/// ```
/// let out = snodo::fuzzing::sse_events(&[b"id: 1\ndata: {}\n", b"\n"], 1024);
/// assert_eq!(out.events, vec![(None, "{}".to_string(), Some("1".to_string()))]);
/// assert_eq!(out.last_id.as_deref(), Some("1"));
/// ```
#[cfg(feature = "client")]
pub fn sse_events(chunks: &[&[u8]], max_event: usize) -> SseOutcome {
    let mut parser = crate::client::transport::sse::Parser::new(max_event);
    let mut events = Vec::new();
    for chunk in chunks {
        for event in parser.push(chunk) {
            events.push((event.event, event.data, event.id));
        }
    }
    SseOutcome {
        events,
        last_id: parser.last_id,
        retry_ms: parser.retry_ms,
        overflow: parser.overflow,
    }
}

/// Where a 2024-11-05 HTTP+SSE client would POST, given the `endpoint`
/// event's data on the stream opened at `stream`: `None` when refused (not
/// a URL, or not on the stream's origin).
///
/// ```
/// let stream = "http://127.0.0.1:8000/sse";
/// assert_eq!(
///     snodo::fuzzing::sse_endpoint(stream, "/messages/?session_id=1").as_deref(),
///     Some("http://127.0.0.1:8000/messages/?session_id=1")
/// );
/// assert_eq!(snodo::fuzzing::sse_endpoint(stream, "http://127.0.0.2/m"), None);
/// ```
#[cfg(feature = "client")]
pub fn sse_endpoint(stream: &str, data: &str) -> Option<String> {
    let stream: http::Uri = stream.parse().ok()?;
    crate::client::transport::legacy_sse::resolve(&stream, data)
        .ok()
        .map(|uri| uri.to_string())
}

/// The keyring the bus and record entry points seal and open with: one key,
/// `fuzz`, of 32 bytes of 7.
fn fuzz_keys() -> Vec<crate::keyring::Key> {
    vec![crate::keyring::Key::new("fuzz", [7u8; 32])]
}

/// Seals `json` as a hub seals an envelope's JSON with the fuzzing key: the
/// bytes a hub would publish.
///
/// ```
/// let sealed = snodo::fuzzing::seal_envelope(br#"{"o":"n","s":1,"t":5,"e":{"k":"tools"}}"#);
/// assert!(snodo::fuzzing::open_envelope(&sealed).is_some());
/// assert!(snodo::fuzzing::open_envelope(&sealed[1..]).is_none());
/// ```
pub fn seal_envelope(json: &[u8]) -> Vec<u8> {
    use crate::keyring::tag::{self, Purpose};
    let mut out = b"b1.".to_vec();
    out.extend_from_slice(&tag::seal(&fuzz_keys(), Purpose::Envelope, &[], json));
    out
}

/// What a hub makes of `bytes` from the bus, opened with the fuzzing key:
/// the envelope sealed again (same origin, number, time and content) when
/// it opens, `None` when it is refused.
pub fn open_envelope(bytes: &[u8]) -> Option<Vec<u8>> {
    use crate::events::envelope;
    let keys = fuzz_keys();
    let opened = envelope::decode(&keys, bytes).ok()?;
    envelope::encode(&keys, &opened.origin, opened.seq, opened.time, &opened.body)
        .map(|b| b.to_vec())
}

/// Seals the JSON of a part (`h` head, `s` state) of the record of the
/// session `id` with the fuzzing key, as a node stores it.
pub fn seal_record_part(id: &str, part: &str, json: &[u8]) -> Vec<u8> {
    crate::server::legacy::seal_record_part(&fuzz_keys(), id, part, json)
}

/// The stamp that makes `uri` a subscription of the record of the session
/// `id`, with the fuzzing key.
pub fn seal_record_member(id: &str, uri: &str) -> Vec<u8> {
    crate::server::legacy::seal_record_member(&fuzz_keys(), id, uri)
}

/// What a node makes of a stored record of the session `id` (its head, its
/// state, its members' names and values), opened with the fuzzing key: the
/// record when every part opens, `None` when it is refused.
///
/// ```
/// use snodo::fuzzing::{open_record, seal_record_part};
/// let head = seal_record_part("s", "h", br#"{"r":"2025-11-25","c":{}}"#);
/// let state = seal_record_part("s", "s", br#"{"n":true}"#);
/// assert!(open_record("s", &head, &state, &[]).is_some_and(|r| r.initialized));
/// assert!(open_record("t", &head, &state, &[]).is_none());
/// ```
pub fn open_record(
    id: &str,
    head: &[u8],
    state: &[u8],
    members: &[(String, Vec<u8>)],
) -> Option<crate::server::legacy::SessionRecord> {
    crate::server::legacy::open_stored_record(&fuzz_keys(), id, head, state, members)
}

/// What [`wire::decode`](crate::wire::decode) makes of `bytes` when it goes
/// straight to the `Value` path, never the member-by-member one: the answer
/// both paths must agree on.
///
/// ```
/// use snodo::model::{Limits, decode};
/// let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"m"}"#;
/// let by_value = snodo::fuzzing::decode_by_value(bytes, &Limits::default());
/// assert_eq!(by_value.ok(), decode(bytes, &Limits::default()).ok());
/// ```
pub fn decode_by_value(
    bytes: &[u8],
    limits: &crate::wire::Limits,
) -> Result<crate::wire::Message, crate::wire::DecodeError> {
    crate::wire::decode::decode_by(bytes, limits, false)
}

/// What the resource server makes of an `Authorization` header value:
/// `Ok(Some(token))` for a Bearer credential, `Ok(None)` for another scheme,
/// `Err` for a malformed one.
///
/// ```
/// assert_eq!(snodo::fuzzing::bearer_token(b"Bearer abc=="), Ok(Some("abc==")));
/// assert_eq!(snodo::fuzzing::bearer_token(b"Basic abc"), Ok(None));
/// assert!(snodo::fuzzing::bearer_token(b"Bearer a b").is_err());
/// ```
#[cfg(all(feature = "auth", feature = "http"))]
pub fn bearer_token(value: &[u8]) -> Result<Option<&str>, &'static str> {
    crate::transport::http::oauth::server::bearer_token(value)
}

/// The algorithm a JWT verifier reads in a token's header (its `Debug`
/// name), when the header is accepted: asymmetric, and a `typ` (if any) of
/// an access token or a JWT.
#[cfg(all(feature = "auth", feature = "http"))]
pub fn jwt_header(token: &str) -> Result<String, String> {
    crate::transport::http::oauth::jwt::check_header(token)
        .map(|h| format!("{:?}", h.alg))
        .map_err(|e| e.to_string())
}

/// The principal verified claims (JSON) name for a token meant for
/// `audience`, as a JWT verifier reads them once the signature checked out:
/// `None` when the claims are not JSON or not meant for `audience`.
#[cfg(all(feature = "auth", feature = "http"))]
pub fn jwt_claims(claims: &[u8], audience: &str) -> Option<Result<crate::Principal, String>> {
    use crate::transport::http::oauth::verify;
    let claims: serde_json::Value = serde_json::from_slice(claims).ok()?;
    if !verify::audience_contains(claims.get("aud"), audience) {
        return None;
    }
    Some(verify::principal_of(claims).map_err(|e| e.to_string()))
}

/// What an introspecting resource server makes of an introspection
/// endpoint's answer (a body with a 2xx status) for a token of `issuer`
/// meant for `audience`, at `now` (seconds since the Unix epoch).
#[cfg(all(feature = "auth", feature = "http"))]
pub fn introspection_answer(
    body: &[u8],
    issuer: &str,
    audience: &str,
    now: u64,
) -> Result<crate::Principal, String> {
    let claims: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| "not JSON".to_string())?;
    crate::transport::http::oauth::introspect::judge(claims, issuer, audience, now)
        .map_err(|e| e.to_string())
}

/// How many keys of a JWKS answer (`body`) a JWT verifier could use: keys
/// that fit an asymmetric algorithm and load. `None` when it is not a JWKS.
#[cfg(all(feature = "auth", feature = "http"))]
pub fn jwks_answer(body: &[u8]) -> Option<usize> {
    use jsonwebtoken::Algorithm::*;
    use jsonwebtoken::jwk::JwkSet;
    let set: JwkSet = answer(200, body)?.json()?;
    let algs = [
        RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA,
    ];
    Some(
        set.keys
            .iter()
            .filter(|key| {
                algs.iter()
                    .any(|&alg| crate::transport::http::oauth::jwt::key_fits(key, alg))
                    && jsonwebtoken::DecodingKey::from_jwk(key).is_ok()
            })
            .count(),
    )
}

/// What the client made of one message from a server, when it is a
/// response with a result: the result read as a value, and read member by
/// member as a proxy reads it (then decoded), the members the protocol
/// layer sets (`resultType`, the server's info in `_meta`) taken off both.
/// `None` for anything else; `Some(None)` in either place for a reading
/// that failed.
///
/// ```
/// let text = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete"}}"#;
/// let (value, split) = snodo::fuzzing::client_result(text, 1024).unwrap();
/// assert_eq!(value, Some(serde_json::json!({"content": []})));
/// assert_eq!(split, value);
/// ```
#[cfg(feature = "client")]
#[allow(clippy::type_complexity)]
pub fn client_result(
    bytes: &[u8],
    max_bytes: usize,
) -> Option<(Option<serde_json::Value>, Option<serde_json::Value>)> {
    use crate::client::answer::{FromResult, RawResult, strip};
    use crate::client::transport::Incoming;
    let Incoming::Response { message, .. } = Incoming::decode(bytes, max_bytes)? else {
        return None;
    };
    let text = message.body.ok()?;
    let value = serde_json::Value::read(&text).ok().map(|mut value| {
        if let serde_json::Value::Object(map) = &mut value {
            strip(map);
        }
        value
    });
    let split = RawResult::read(&text).ok().map(RawResult::into_value);
    Some((value, split))
}

/// A fake OAuth answer: `status` and `body`, no headers.
#[cfg(feature = "client")]
fn answer(status: u16, body: &[u8]) -> Option<crate::net::Answer> {
    Some(crate::net::Answer {
        status: ::http::StatusCode::from_u16(status).ok()?,
        headers: ::http::HeaderMap::new(),
        body: bytes::Bytes::copy_from_slice(body),
    })
}

/// What the OAuth client makes of a token endpoint's answer (`status`,
/// `body`) to a request for the scopes `requested`. `None` for a status
/// that is not one.
#[cfg(feature = "client")]
pub fn token_answer(
    status: u16,
    body: &[u8],
    requested: &[String],
) -> Option<Result<crate::client::oauth::TokenSet, crate::client::oauth::OAuthError>> {
    // Every other status as if the request carried a DPoP proof.
    Some(crate::client::oauth::token::read_answer(
        &answer(status, body)?,
        requested,
        (status % 2 == 1).then_some("jkt"),
    ))
}

/// What the OAuth client makes of a registration endpoint's answer
/// (`status`, `body`). `None` for a status that is not one.
#[cfg(feature = "client")]
pub fn registration_answer(
    status: u16,
    body: &[u8],
) -> Option<Result<crate::client::oauth::Registration, crate::client::oauth::OAuthError>> {
    Some(crate::client::oauth::registration::read_answer(&answer(
        status, body,
    )?))
}

/// The request target the OAuth client's loopback listener reads from the
/// first bytes of a connection (`None`: not a `GET`, or unreadable).
///
/// ```
/// let target = snodo::fuzzing::redirect_target(b"GET /callback?code=c HTTP/1.1\r\n\r\n");
/// assert_eq!(target.as_deref(), Some("/callback?code=c"));
/// ```
#[cfg(feature = "client")]
pub fn redirect_target(bytes: &[u8]) -> Option<String> {
    crate::client::oauth::authorizer::request_target(bytes)
}

/// The authorization code the OAuth client takes from a redirect's
/// `target`, when it waited for `state` from `issuer` (which promised an
/// `iss` when `iss_promised`).
#[cfg(feature = "client")]
pub fn redirect_code(
    target: &str,
    state: &str,
    issuer: &str,
    iss_promised: bool,
) -> Result<String, crate::client::oauth::OAuthError> {
    let meta = crate::protocol::auth::metadata::ServerMetadata {
        issuer: issuer.to_string(),
        authorization_response_iss_parameter_supported: Some(iss_promised),
        ..Default::default()
    };
    let params = crate::client::oauth::CallbackParams::from_url(target);
    crate::client::oauth::flow::check_callback(&params, state, &meta)
}

/// A W3C trace context as the server reads it from `_meta`: the
/// `traceparent` it names (written again), its `sampled` flag, and the
/// `tracestate` and `baggage` kept. `None` when the `traceparent` is
/// refused.
///
/// ```
/// let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
/// let (again, sampled, state, _) = snodo::fuzzing::trace_context(tp, Some(" a=1 "), None).unwrap();
/// assert_eq!((again.as_str(), sampled, state.as_deref()), (tp, true, Some("a=1")));
/// ```
#[cfg(feature = "client")]
pub fn trace_context(
    traceparent: &str,
    tracestate: Option<&str>,
    baggage: Option<&str>,
) -> Option<(String, bool, Option<String>, Option<String>)> {
    let context = crate::telemetry::context::TraceContext::parse(traceparent, tracestate, baggage)?;
    Some((
        context.traceparent(),
        context.sampled,
        context.trace_state.map(Into::into),
        context.baggage.map(Into::into),
    ))
}

/// The keys of a keyring's text (id and secret, in order), or why it is
/// refused.
///
/// ```
/// let text = "a=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
/// assert_eq!(snodo::fuzzing::keyring_keys(text).unwrap(), vec![("a".to_string(), vec![0; 32])]);
/// assert!(snodo::fuzzing::keyring_keys("a=AA==").is_err());
/// ```
pub fn keyring_keys(text: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
    let keyring = crate::keyring::Keyring::parse(text).map_err(|e| e.to_string())?;
    Ok(keyring
        .snapshot()
        .iter()
        .map(|k| (k.id.clone(), k.secret.clone()))
        .collect())
}

/// The JSON-RPC error response the transports send for `error` (with the
/// request's `id` when it was read).
pub fn encode_error(id: Option<&crate::model::RequestId>, error: &crate::Error) -> Vec<u8> {
    crate::wire::encode_error(id, error)
}
