//! An authorization server played by the test on 127.0.0.1 over raw TCP:
//! one HTTP/1.1 request per connection, answered by a closure (or never,
//! for a while: a hanging peer). It counts what it is asked and stops with
//! the test's runtime.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the peer read it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `GET`, `POST`…
    pub method: String,
    /// The request target.
    pub path: String,
    /// The header lines, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, as text.
    pub body: String,
}

impl Seen {
    /// The value of header `name` (lowercase), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the peer does with a request.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A status line's tail (`"200 OK"`) and a JSON body.
    Json(&'static str, String),
    /// A status line's tail, more header lines, and a JSON body.
    With(&'static str, Vec<(String, String)>, String),
    /// Nothing, for a minute (the test is over long before).
    Hang,
}

/// Serves `answer` on 127.0.0.1; the base URL (`http://127.0.0.1:port`).
pub async fn serve(answer: impl Fn(Seen) -> Answer + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let Some(seen) = read_request(&mut socket).await else {
                    return;
                };
                let (status, headers, body) = match answer(seen) {
                    Answer::Hang => {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    }
                    Answer::Json(status, body) => (status, Vec::new(), body),
                    Answer::With(status, headers, body) => (status, headers, body),
                };
                let more: String = headers
                    .iter()
                    .map(|(name, value)| format!("{name}: {value}\r\n"))
                    .collect();
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{more}\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    url
}

/// Reads one request: the head, then `content-length` bytes of body.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while data.len() < end + length {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    let mut words = head.split(' ');
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Seen {
        method: words.next().unwrap_or_default().to_string(),
        path: words.next().unwrap_or_default().to_string(),
        headers,
        body: String::from_utf8_lossy(&data[end..end + length]).into_owned(),
    })
}

/// The issuer answers.
pub const UP: u8 = 0;
/// The issuer accepts connections and never answers.
pub const HANGING: u8 = 1;
/// The issuer answers 503 to everything.
pub const DOWN: u8 = 2;

/// An issuer whose behaviour and published keys the test switches: its
/// metadata (at any path but `/jwks`) names `/jwks` as its JWKS, and it
/// counts the requests for `/jwks` (answered or not).
#[derive(Debug, Clone)]
pub struct Issuer {
    pub url: String,
    mode: Arc<AtomicU8>,
    keys: Arc<Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
}

impl Issuer {
    /// An issuer in `mode` publishing `keys` (a JWK array).
    pub async fn start(mode: u8, keys: Value) -> Self {
        let mode = Arc::new(AtomicU8::new(mode));
        let keys = Arc::new(Mutex::new(keys));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (state, published, counted) = (mode.clone(), keys.clone(), fetches.clone());
        let issuer = Arc::new(Mutex::new(String::new()));
        let named = issuer.clone();
        let url = serve(move |seen| {
            let jwks = seen.path == "/jwks";
            if jwks {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            match state.load(Ordering::SeqCst) {
                HANGING => Answer::Hang,
                DOWN => Answer::Json("503 Service Unavailable", String::new()),
                _ if jwks => {
                    let keys = published.lock().unwrap().clone();
                    Answer::Json("200 OK", json!({ "keys": keys }).to_string())
                }
                _ => {
                    let issuer = named.lock().unwrap().clone();
                    let meta = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
                    Answer::Json("200 OK", meta.to_string())
                }
            }
        })
        .await;
        *issuer.lock().unwrap() = url.clone();
        Self {
            url,
            mode,
            keys,
            fetches,
        }
    }

    /// Switches the issuer's behaviour.
    pub fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    /// Publishes `keys` (a JWK array) from now on.
    pub fn publish(&self, keys: Value) {
        *self.keys.lock().unwrap() = keys;
    }

    /// How many times the JWKS was asked for.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}
