//! Server-sent events, read one at a time.

use std::time::Duration;

use http::StatusCode;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::Value;

/// Reads server-sent events one at a time.
pub(crate) struct Events {
    body: Incoming,
    buffer: String,
}

/// One event: its id (if any), whether it carried `retry`, and its data.
#[derive(Debug)]
pub(crate) struct Event {
    pub(crate) id: Option<String>,
    pub(crate) retry: bool,
    pub(crate) data: String,
}

impl Events {
    pub(crate) fn new(response: http::Response<Incoming>) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    pub(crate) async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if block.starts_with(':') {
                    continue;
                }
                let mut event = Event {
                    id: None,
                    retry: false,
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(id) = line.strip_prefix("id: ") {
                        event.id = Some(id.to_string());
                    } else if line.starts_with("retry: ") {
                        event.retry = true;
                    } else if let Some(data) = line.strip_prefix("data: ") {
                        event.data = data.to_string();
                    }
                }
                return Some(event);
            }
            let frame = tokio::time::timeout(Duration::from_secs(5), self.body.frame())
                .await
                .expect("an event within 5 s")?
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    pub(crate) async fn json(&mut self) -> Value {
        let event = self.next().await.expect("another event");
        serde_json::from_str(&event.data).unwrap_or_else(|e| panic!("{event:?}: {e}"))
    }
}
