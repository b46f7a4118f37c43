//! A stand-in authorization server for the protected workload: it publishes
//! metadata and a JWKS on 127.0.0.1 and signs one access token for the
//! server under test. Only the server's own work is measured (its JWT check
//! on every call, with the keys cached after the first fetch).

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A throwaway P-256 key made for this benchmark (it protects nothing).
const KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgh4nLBEJS8H0KWsKl
8IYo8HYdyhrRv27vSwhaH5BLDqihRANCAAQwmwKWU8+1X/ixDRwKJdIZYc/fX/QB
3S3suVoMoqQcP3Q4qfWC8CEZdQ5eh0PDhFdqq+Zyb3CQB4Q8TWhGW1RY
-----END PRIVATE KEY-----
";
/// Its public half, as a JWK.
const JWK_X: &str = "MJsCllPPtV_4sQ0cCiXSGWHP31_0Ad0t7LlaDKKkHD8";
const JWK_Y: &str = "dDip9YLwIRl1Dl6HQ8OEV2qr5nJvcJAHhDxNaEZbVFg";
const KID: &str = "bench-1";

/// A running issuer.
pub(crate) struct Issuer {
    pub(crate) url: String,
    task: JoinHandle<()>,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Issuer {
    /// Listens on 127.0.0.1 (a free port).
    pub(crate) async fn start() -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("issuer: {e}"))?;
        let url = format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        let metadata = serde_json::json!({
            "issuer": url,
            "jwks_uri": format!("{url}/jwks"),
            "token_endpoint": format!("{url}/token"),
            "code_challenge_methods_supported": ["S256"],
        })
        .to_string();
        let jwks = serde_json::json!({"keys": [{
            "kty": "EC", "crv": "P-256", "x": JWK_X, "y": JWK_Y,
            "kid": KID, "alg": "ES256", "use": "sig"
        }]})
        .to_string();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (metadata, jwks) = (metadata.clone(), jwks.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let mut n = 0;
                    while n < buf.len() && !buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf[n..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => n += k,
                        }
                    }
                    let head = String::from_utf8_lossy(&buf[..n]);
                    let path = head.split(' ').nth(1).unwrap_or("");
                    let (status, body) = match path {
                        "/.well-known/oauth-authorization-server" => ("200 OK", metadata),
                        "/jwks" => ("200 OK", jwks),
                        _ => ("404 Not Found", String::new()),
                    };
                    let resp = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(resp.as_bytes()).await;
                });
            }
        });
        Ok(Self { url, task })
    }

    /// An access token for `audience`, valid for an hour.
    pub(crate) fn token(&self, audience: &str) -> Result<String, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| e.to_string())?
            .as_secs();
        let claims = serde_json::json!({
            "iss": self.url, "aud": audience, "sub": "bench", "client_id": "bench",
            "scope": "bench", "iat": now, "exp": now + 3600,
        });
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(KID.into());
        header.typ = Some("at+jwt".into());
        let key = jsonwebtoken::EncodingKey::from_ec_pem(KEY_PEM.as_bytes())
            .map_err(|e| format!("the bench key: {e}"))?;
        jsonwebtoken::encode(&header, &claims, &key).map_err(|e| e.to_string())
    }
}
