//! Literal HTTP/1.1 exchanges over a TCP connection of their own: a request
//! written byte for byte, the response head parsed, the body read whole
//! (JSON) or frame by frame (SSE), chunked transfer decoded.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// How long one read may wait.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A response being read.
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, names in lowercase.
    pub headers: HashMap<String, String>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    length: Option<usize>,
    /// Body bytes decoded but not yet parsed into lines.
    pending: Vec<u8>,
    done: bool,
}

/// The address of an `http://HOST:PORT/...` URL.
pub fn addr_of(url: &str) -> SocketAddr {
    let rest = url.strip_prefix("http://").unwrap();
    rest[..rest.find('/').unwrap_or(rest.len())]
        .parse()
        .unwrap()
}

/// Sends one request to `url` and reads the response head.
pub async fn request(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let addr = addr_of(url);
    let path = &url[url[7..].find('/').map(|i| i + 7).unwrap_or(url.len())..];
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n"
    );
    if !body.is_empty() {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = timeout(PATIENCE, TcpStream::connect(addr))
        .await
        .expect("connect in time")
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    timeout(PATIENCE, reader.read_line(&mut status))
        .await
        .expect("a status line in time")
        .unwrap();
    let code: u16 = status
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not a status line: {status:?}"));
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        timeout(PATIENCE, reader.read_line(&mut line))
            .await
            .expect("headers in time")
            .unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    let length = headers.get("content-length").and_then(|v| v.parse().ok());
    Reply {
        status: code,
        headers,
        reader,
        chunked,
        length,
        pending: Vec::new(),
        done: false,
    }
}

impl Reply {
    /// Decodes more of the body into `pending`; `false` at its end.
    async fn fill(&mut self) -> bool {
        if self.done {
            return false;
        }
        if self.chunked {
            let mut size = String::new();
            let n = self.reader.read_line(&mut size).await.unwrap_or(0);
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 || size == 0 {
                self.done = true;
                return false;
            }
            let mut chunk = vec![0u8; size + 2];
            if self.reader.read_exact(&mut chunk).await.is_err() {
                self.done = true;
                return false;
            }
            chunk.truncate(size);
            self.pending.extend_from_slice(&chunk);
            return true;
        }
        if let Some(length) = self.length {
            let mut body = vec![0u8; length];
            let ok = self.reader.read_exact(&mut body).await.is_ok();
            self.pending.extend_from_slice(&body);
            self.done = true;
            return ok;
        }
        let mut buf = [0u8; 4096];
        match self.reader.read(&mut buf).await {
            Ok(0) | Err(_) => {
                self.done = true;
                false
            }
            Ok(n) => {
                self.pending.extend_from_slice(&buf[..n]);
                true
            }
        }
    }

    /// The whole body as text.
    pub async fn text(&mut self) -> String {
        while timeout(PATIENCE, self.fill())
            .await
            .expect("the body in time")
        {}
        String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned()
    }

    /// The body's JSON: the whole body, or the first SSE data frame.
    pub async fn json(&mut self) -> Value {
        if self
            .headers
            .get("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            return self.frame().await.expect("an SSE frame");
        }
        let text = self.text().await;
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"))
    }

    /// The next SSE `data:` frame that is not empty; `None` when the stream
    /// ended. Panics after [`PATIENCE`] without one.
    pub async fn frame(&mut self) -> Option<Value> {
        self.frame_within(PATIENCE)
            .await
            .expect("an SSE frame, or the stream's end, in time")
    }

    /// Like [`Reply::frame`], `Err(())` when nothing came within `wait`.
    pub async fn frame_within(&mut self, wait: Duration) -> Result<Option<Value>, ()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(data) = line.trim_end().strip_prefix("data:") {
                    let data = data.trim();
                    if !data.is_empty() {
                        return Ok(Some(serde_json::from_str(data).unwrap()));
                    }
                }
            }
            match tokio::time::timeout_at(deadline, self.fill()).await {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(_) => return Err(()),
            }
        }
    }
}
