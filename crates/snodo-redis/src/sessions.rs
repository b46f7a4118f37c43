//! The session directory on Redis: one key per session, its record as JSON,
//! with an idle expiry that every read renews (`GETEX … PX`).

use std::time::Duration;

use snodo::future::BoxFuture;
use snodo::server::legacy::{DirectoryError, MAX_RECORD_BYTES, SessionDirectory, SessionRecord};

use crate::connection::{Link, RedisError, client};

/// The key prefix a directory uses unless told otherwise.
pub const DEFAULT_PREFIX: &str = "snodo:session:";

/// A [`SessionDirectory`] in Redis.
#[derive(Debug, Clone)]
pub struct RedisSessions {
    link: Link,
    prefix: String,
    idle_ms: u64,
}

fn failed(e: RedisError) -> DirectoryError {
    DirectoryError(e.to_string())
}

impl RedisSessions {
    /// A directory in the Redis server at `url`, with keys under `prefix`,
    /// each session expiring after `idle` without a request; fails when
    /// Redis cannot be reached now.
    pub async fn connect(url: &str, prefix: &str, idle: Duration) -> Result<Self, RedisError> {
        let link = Link::open(client(url)?).await?;
        Ok(Self {
            link,
            prefix: prefix.to_string(),
            idle_ms: idle.as_millis().clamp(1, u64::MAX.into()) as u64,
        })
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }
}

impl SessionDirectory for RedisSessions {
    fn save<'a>(&'a self, record: &'a SessionRecord) -> BoxFuture<'a, Result<(), DirectoryError>> {
        Box::pin(async move {
            let json = record.to_json();
            if json.len() > MAX_RECORD_BYTES {
                return Err(DirectoryError("the session record is too large".into()));
            }
            let cmd = redis::cmd("SET")
                .arg(self.key(&record.id))
                .arg(json)
                .arg("PX")
                .arg(self.idle_ms)
                .clone();
            self.link.run::<()>(&cmd).await.map_err(failed)
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, DirectoryError>> {
        Box::pin(async move {
            let cmd = redis::cmd("GETEX")
                .arg(self.key(id))
                .arg("PX")
                .arg(self.idle_ms)
                .clone();
            let bytes: Option<Vec<u8>> = self.link.run(&cmd).await.map_err(failed)?;
            Ok(bytes.and_then(|b| SessionRecord::from_json(&b)))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        Box::pin(async move {
            let cmd = redis::cmd("DEL").arg(self.key(id)).clone();
            let n: i64 = self.link.run(&cmd).await.map_err(failed)?;
            Ok(n > 0)
        })
    }
}
