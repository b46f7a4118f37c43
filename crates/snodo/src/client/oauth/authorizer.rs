//! How the user agent reaches the authorization endpoint and how the
//! redirect comes back: [`Authorizer`], with a loopback listener for people
//! ([`LoopbackBrowser`]) and a redirect-reading one for servers that approve
//! without a person ([`Headless`]).

use std::time::Duration;

use ::http::header;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::OAuthError;
use crate::future::BoxFuture;
use crate::net::OAuthHttp;

/// What the authorization server sent back to the redirect URI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackParams {
    /// The authorization code.
    pub code: Option<String>,
    /// The `state` echoed back.
    pub state: Option<String>,
    /// The issuer that answered (RFC 9207).
    pub iss: Option<String>,
    /// An error code instead of a code.
    pub error: Option<String>,
    /// The error's description.
    pub error_description: Option<String>,
}

impl CallbackParams {
    /// Reads the query of a redirect URL (or a bare query string).
    ///
    /// ```
    /// use snodo::client::oauth::CallbackParams;
    /// let p = CallbackParams::from_url("http://127.0.0.1:9/callback?code=c%2B1&state=s&iss=http%3A%2F%2Fa");
    /// assert_eq!(p.code.as_deref(), Some("c+1"));
    /// assert_eq!(p.iss.as_deref(), Some("http://a"));
    /// ```
    pub fn from_url(url: &str) -> Self {
        let query = url.split_once('?').map_or(url, |(_, q)| q);
        let query = query.split('#').next().unwrap_or("");
        let mut out = Self::default();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            let slot = match &*k {
                "code" => &mut out.code,
                "state" => &mut out.state,
                "iss" => &mut out.iss,
                "error" => &mut out.error,
                "error_description" => &mut out.error_description,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v.into_owned());
            }
        }
        out
    }
}

/// One authorization in progress: it knows its redirect URI before the
/// authorization URL is built, and then waits for the redirect.
pub trait AuthorizationSession: Send {
    /// The redirect URI to register and send.
    fn redirect_uri(&self) -> &str;

    /// Sends the user agent to `authorize_url` and waits for the redirect.
    fn complete(
        self: Box<Self>,
        authorize_url: String,
    ) -> BoxFuture<'static, Result<CallbackParams, OAuthError>>;
}

/// Starts authorization sessions.
pub trait Authorizer: Send + Sync + std::fmt::Debug {
    /// Prepares one session (for a loopback listener: binds its port).
    fn start(&self) -> BoxFuture<'_, Result<Box<dyn AuthorizationSession>, OAuthError>>;
}

/// For authorization servers that approve at once: GETs the authorization
/// URL without following the redirect and reads the `Location` it answers
/// with. Nothing listens on the redirect URI.
#[derive(Debug, Clone)]
pub struct Headless {
    redirect_uri: String,
    http: Option<OAuthHttp>,
}

impl Headless {
    /// A headless authorizer that sends `redirect_uri`.
    pub fn new(redirect_uri: &str) -> Self {
        Self {
            redirect_uri: redirect_uri.to_string(),
            http: None,
        }
    }

    pub(crate) fn with_http(mut self, http: OAuthHttp) -> Self {
        self.http = Some(http);
        self
    }
}

struct HeadlessSession {
    redirect_uri: String,
    http: OAuthHttp,
}

impl Authorizer for Headless {
    fn start(&self) -> BoxFuture<'_, Result<Box<dyn AuthorizationSession>, OAuthError>> {
        Box::pin(async move {
            let http = match &self.http {
                Some(h) => h.clone(),
                None => OAuthHttp::new(false)?,
            };
            Ok(Box::new(HeadlessSession {
                redirect_uri: self.redirect_uri.clone(),
                http,
            }) as Box<dyn AuthorizationSession>)
        })
    }
}

impl AuthorizationSession for HeadlessSession {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn complete(
        self: Box<Self>,
        authorize_url: String,
    ) -> BoxFuture<'static, Result<CallbackParams, OAuthError>> {
        Box::pin(async move {
            let answer = self.http.get(&authorize_url).await?;
            if !answer.status.is_redirection() {
                return Err(OAuthError::Authorization(format!(
                    "the authorization endpoint answered {} instead of a redirect",
                    answer.status.as_u16()
                )));
            }
            let location = answer
                .headers
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| OAuthError::Authorization("a redirect without a Location".into()))?;
            Ok(CallbackParams::from_url(location))
        })
    }
}

/// For people: listens on `127.0.0.1` (port 0 unless set), opens the
/// authorization URL in a browser when one can be started (and always
/// prints it to standard error), then waits for one redirect to
/// `http://127.0.0.1:PORT/callback`, answering it with a page that says the
/// window may be closed.
#[derive(Debug, Clone)]
pub struct LoopbackBrowser {
    port: u16,
    timeout: Duration,
    open_browser: bool,
}

impl Default for LoopbackBrowser {
    fn default() -> Self {
        Self {
            port: 0,
            timeout: Duration::from_secs(300),
            open_browser: true,
        }
    }
}

impl LoopbackBrowser {
    /// The default: any free port, five minutes to finish, a browser if
    /// there is one.
    pub fn new() -> Self {
        Self::default()
    }

    /// Listens on this port instead of a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// How long to wait for the redirect.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether to try to start a browser (the URL is printed either way).
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }
}

struct LoopbackSession {
    listener: TcpListener,
    redirect_uri: String,
    timeout: Duration,
    open_browser: bool,
}

impl Authorizer for LoopbackBrowser {
    fn start(&self) -> BoxFuture<'_, Result<Box<dyn AuthorizationSession>, OAuthError>> {
        Box::pin(async move {
            let listener = TcpListener::bind(("127.0.0.1", self.port))
                .await
                .map_err(|e| {
                    OAuthError::Authorization(format!("cannot listen on 127.0.0.1: {e}"))
                })?;
            let port = listener
                .local_addr()
                .map_err(|e| OAuthError::Authorization(e.to_string()))?
                .port();
            Ok(Box::new(LoopbackSession {
                listener,
                redirect_uri: format!("http://127.0.0.1:{port}/callback"),
                timeout: self.timeout,
                open_browser: self.open_browser,
            }) as Box<dyn AuthorizationSession>)
        })
    }
}

/// Most bytes read of one redirect request.
const MAX_CALLBACK_REQUEST: usize = 16 * 1024;

impl AuthorizationSession for LoopbackSession {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn complete(
        self: Box<Self>,
        authorize_url: String,
    ) -> BoxFuture<'static, Result<CallbackParams, OAuthError>> {
        Box::pin(async move {
            let expected_state = CallbackParams::from_url(&authorize_url).state;
            eprintln!("Open this URL to authorize:\n  {authorize_url}");
            if self.open_browser {
                open_in_browser(&authorize_url);
            }
            let wait = async {
                loop {
                    let (mut stream, _) = self
                        .listener
                        .accept()
                        .await
                        .map_err(|e| OAuthError::Authorization(e.to_string()))?;
                    let Some(target) = read_request_target(&mut stream).await else {
                        continue;
                    };
                    if !target.starts_with("/callback") {
                        let _ = stream
                            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                        continue;
                    }
                    let params = CallbackParams::from_url(&target);
                    // Only the redirect of this authorization ends the wait:
                    // anything else that finds the port is turned away.
                    if params.state != expected_state {
                        let _ = stream
                            .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                        continue;
                    }
                    let page = if params.code.is_some() {
                        "Authorized. You can close this window."
                    } else {
                        "Authorization failed. You can close this window."
                    };
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                        page.len()
                    );
                    let _ = stream.write_all(resp.as_bytes()).await;
                    let _ = stream.shutdown().await;
                    return Ok(params);
                }
            };
            tokio::time::timeout(self.timeout, wait)
                .await
                .unwrap_or_else(|_| {
                    Err(OAuthError::Authorization(
                        "no redirect arrived before the deadline".into(),
                    ))
                })
        })
    }
}

/// The request target of one HTTP/1 request line, read within bounds.
async fn read_request_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_CALLBACK_REQUEST {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
    request_target(&buf)
}

/// The request target of the request line at the start of `buf`, when the
/// request is a `GET`.
pub(crate) fn request_target(buf: &[u8]) -> Option<String> {
    let line = buf.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    if parts.next()? != "GET" {
        return None;
    }
    parts.next().map(str::to_string)
}

/// Starts the platform's URL opener, ignoring failure (the URL was printed).
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
