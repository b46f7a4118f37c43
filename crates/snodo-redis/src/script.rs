//! Lua scripts run by their SHA1 (`EVALSHA`), loaded again when Redis does
//! not know them (`NOSCRIPT`: a restart, `SCRIPT FLUSH`), so that each call
//! sends the arguments and not the script.

use std::sync::Arc;

use tokio::sync::Mutex;

use crate::connection::{Link, RedisError};

/// One script and the SHA1 Redis gave it.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    text: &'static str,
    sha: Arc<Mutex<Option<String>>>,
}

impl Script {
    pub(crate) fn new(text: &'static str) -> Self {
        Self {
            text,
            sha: Arc::default(),
        }
    }

    async fn load(&self, link: &Link) -> Result<String, RedisError> {
        let sha: String = link
            .run(redis::cmd("SCRIPT").arg("LOAD").arg(self.text))
            .await?;
        *self.sha.lock().await = Some(sha.clone());
        Ok(sha)
    }

    /// Runs the script on `keys` with `args`.
    pub(crate) async fn run<T: redis::FromRedisValue>(
        &self,
        link: &Link,
        keys: &[&str],
        args: &[&[u8]],
    ) -> Result<T, RedisError> {
        let known = self.sha.lock().await.clone();
        let sha = match known {
            Some(sha) => sha,
            None => self.load(link).await?,
        };
        let call = |sha: &str| {
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(sha).arg(keys.len()).arg(keys);
            for arg in args {
                cmd.arg(*arg);
            }
            cmd
        };
        match link.run(&call(&sha)).await {
            Err(e) if e.0.message().contains("NOSCRIPT") => {
                let sha = self.load(link).await?;
                link.run(&call(&sha)).await
            }
            other => other,
        }
    }
}
