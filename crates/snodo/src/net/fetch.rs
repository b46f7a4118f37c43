//! The few HTTP exchanges OAuth needs (the client's flows, and the resource
//! server's JWKS and introspection), over a keep-alive pool: GET a JSON
//! document, POST a form or JSON, GET without following a redirect. Bodies
//! are bounded; nothing here logs a credential.

use std::fmt;
use std::time::Duration;

use ::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};

use super::pool::{Pool, new_pool};
use crate::error::BackendError;
use crate::protocol::auth::metadata::{is_loopback, split_url};

/// Largest OAuth response body read (metadata, tokens, registrations, the
/// resource server's JWKS and introspection answers).
pub(crate) const MAX_BODY: usize = 256 * 1024;
/// Deadline of one OAuth exchange.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// An answer: status, headers, body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    // Read by the client's flows (`WWW-Authenticate`, `Location`).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    /// The body as JSON, if it is a JSON object: every OAuth answer is one,
    /// and a struct would otherwise also read from an array.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&self.body).ok()?;
        serde_json::from_value(serde_json::Value::Object(object)).ok()
    }
}

/// Why an exchange failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FetchError {
    /// The endpoint could not be reached or answered badly (the HTTP
    /// client's error kept as the source).
    Http(BackendError),
    /// The endpoint is plain http outside loopback, or not a URL.
    Insecure(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Http(e) => fmt::Display::fmt(e, f),
            FetchError::Insecure(m) => f.write_str(m),
        }
    }
}

/// The OAuth side's HTTP client.
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    pool: Pool,
    allow_http: bool,
    /// How long one exchange may take ([`EXCHANGE_TIMEOUT`]).
    deadline: Duration,
}

impl std::fmt::Debug for OAuthHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthHttp")
            .field("allow_http", &self.allow_http)
            .finish_non_exhaustive()
    }
}

impl OAuthHttp {
    pub(crate) fn new(allow_http: bool) -> Result<Self, FetchError> {
        let pool = new_pool()
            .map_err(|e| FetchError::Http(BackendError::with_boxed_source(e.to_string(), e)))?;
        Ok(Self {
            pool,
            allow_http,
            deadline: EXCHANGE_TIMEOUT,
        })
    }

    /// The same client with another deadline per exchange.
    #[cfg(test)]
    fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Refuses an endpoint that is not https, or plain http on loopback
    /// (or anywhere, when insecure http was allowed).
    pub(crate) fn check_url(&self, url: &str) -> Result<(), FetchError> {
        // A URL holds no control character and no space (they would be
        // shown to a person, or sent, as they are).
        if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(FetchError::Insecure(format!(
                "not a URL (control characters or spaces): {}",
                url.escape_debug()
            )));
        }
        if split_url(url).is_none() {
            return Err(FetchError::Insecure(format!("not an http(s) URL: {url}")));
        }
        if url.starts_with("https://") || self.allow_http || is_loopback(url) {
            Ok(())
        } else {
            Err(FetchError::Insecure(format!(
                "refusing plain http outside loopback: {url}"
            )))
        }
    }

    /// Sends one request and reads the whole (bounded) answer.
    pub(crate) async fn exchange(
        &self,
        method: Method,
        url: &str,
        headers: Vec<(header::HeaderName, HeaderValue)>,
        body: Option<(&'static str, Vec<u8>)>,
    ) -> Result<Answer, FetchError> {
        self.check_url(url)?;
        let mut req = Request::builder().method(method).uri(url);
        let h = req.headers_mut().expect("a fresh builder has headers");
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let body = match body {
            Some((content_type, bytes)) => {
                h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
                Bytes::from(bytes)
            }
            None => Bytes::new(),
        };
        for (name, value) in headers {
            h.insert(name, value);
        }
        let req = req.body(Full::new(body)).map_err(|e| {
            let message = format!("cannot build a request to {url}: {e}");
            FetchError::Http(BackendError::with_source(message, e))
        })?;
        let sent = tokio::time::timeout(self.deadline, async {
            let resp = self.pool.request(req).await.map_err(|e| {
                let message = format!("cannot reach {url}: {}", crate::error::chain(&e));
                FetchError::Http(BackendError::with_source(message, e))
            })?;
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| {
                    let message = if e.is::<LengthLimitError>() {
                        format!("the answer of {url} is larger than {} KiB", MAX_BODY / 1024)
                    } else {
                        format!("reading the answer of {url}: {e}")
                    };
                    FetchError::Http(BackendError::with_boxed_source(message, e))
                })?
                .to_bytes();
            Ok::<_, FetchError>(Answer {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        })
        .await;
        sent.unwrap_or_else(|_| {
            Err(FetchError::Http(BackendError::new(format!(
                "{url} did not answer within {} s",
                self.deadline.as_secs_f64()
            ))))
        })
    }

    /// GET `url` for JSON.
    pub(crate) async fn get(&self, url: &str) -> Result<Answer, FetchError> {
        self.exchange(Method::GET, url, Vec::new(), None).await
    }

    /// POST a form.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        headers: Vec<(header::HeaderName, HeaderValue)>,
    ) -> Result<Answer, FetchError> {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        self.exchange(
            Method::POST,
            url,
            headers,
            Some(("application/x-www-form-urlencoded", body.into_bytes())),
        )
        .await
    }

    /// POST a JSON document (the client's dynamic registration).
    #[cfg(feature = "client")]
    pub(crate) async fn post_json(
        &self,
        url: &str,
        value: &serde_json::Value,
    ) -> Result<Answer, FetchError> {
        let body = serde_json::to_vec(value).unwrap_or_default();
        self.exchange(
            Method::POST,
            url,
            Vec::new(),
            Some(("application/json", body)),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_control_characters_or_spaces_is_refused() {
        let http = OAuthHttp::new(false).unwrap();
        assert!(http.check_url("https://as.example/authorize").is_ok());
        for bad in [
            "https://as.example/\u{1b}]52;c;SGVsbG8=\u{7}",
            "https://as.example/a b",
            "https://as.example/\u{9b}31m",
            "https://as.example/\r\nSubmit",
        ] {
            let e = http.check_url(bad).unwrap_err().to_string();
            assert!(e.contains("control characters or spaces"), "{e}");
            assert!(
                !e.chars().any(char::is_control),
                "the error quotes it escaped: {e:?}"
            );
        }
    }

    fn answer(body: &str) -> Answer {
        Answer {
            status: StatusCode::OK,
            headers: HeaderMap::new(),
            body: Bytes::copy_from_slice(body.as_bytes()),
        }
    }

    /// A token answer that is an array is no token (found by the
    /// `oauth_answers` fuzz target).
    #[test]
    fn only_an_object_is_an_answer() {
        #[derive(serde::Deserialize)]
        struct Token {
            access_token: String,
        }
        assert!(answer(r#"["S08"]"#).json::<Token>().is_none());
        let token = answer(r#"{"access_token":"S08"}"#).json::<Token>();
        assert_eq!(token.map(|t| t.access_token).as_deref(), Some("S08"));
        assert!(answer("[]").json::<serde_json::Value>().is_none());
    }

    /// An endpoint nobody listens on fails the exchange naming the URL, and
    /// the HTTP client's error is kept under it, through to `OAuthError`.
    #[tokio::test]
    async fn an_unreachable_endpoint_keeps_the_clients_error() {
        use std::error::Error as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        drop(listener);
        let http = OAuthHttp::new(true).unwrap();
        let e = http.get(&url).await.unwrap_err();
        let FetchError::Http(inner) = &e else {
            panic!("an HTTP failure: {e:?}");
        };
        assert!(
            inner.message().starts_with(&format!("cannot reach {url}")),
            "{e}"
        );
        let hyper = inner.source().map(ToString::to_string);
        assert!(hyper.is_some(), "{inner:?}");
        #[cfg(feature = "client")]
        {
            let oauth = crate::client::oauth::OAuthError::from(e);
            assert_eq!(oauth.source().map(ToString::to_string), hyper, "{oauth:?}");
        }
    }

    /// Every exchange has 30 s; an endpoint on 127.0.0.1 that reads the
    /// request and never answers fails it at its deadline (a shorter one
    /// here), naming the URL and the time.
    #[tokio::test]
    async fn an_exchange_that_gets_no_answer_fails_at_its_deadline() {
        assert_eq!(
            OAuthHttp::new(false).unwrap().deadline,
            Duration::from_secs(30)
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let (asked, mut heard) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = asked.send(());
            // Holds the connection open, silent, past the test.
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        let http = OAuthHttp::new(false)
            .unwrap()
            .with_deadline(Duration::from_millis(300));
        let started = std::time::Instant::now();
        let e = http
            .post_form(&url, &[("grant_type", "x")], Vec::new())
            .await;
        let took = started.elapsed();
        assert!(heard.try_recv().is_ok(), "the request reached the endpoint");
        assert_eq!(
            e.unwrap_err(),
            FetchError::Http(BackendError::new(format!(
                "{url} did not answer within 0.3 s"
            )))
        );
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(3),
            "{took:?}"
        );
    }
}
