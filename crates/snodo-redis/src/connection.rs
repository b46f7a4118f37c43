//! Connections to Redis: opened with timeouts, reopened after a failure.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client};
use snodo::error::BackendError;
use tokio::sync::Mutex;

/// How long opening a connection may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one command may take.
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// A Redis URL that does not parse, or Redis that cannot be reached or
/// answered an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisError(pub BackendError);

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redis: {}", self.0)
    }
}

impl std::error::Error for RedisError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}

impl From<redis::RedisError> for RedisError {
    fn from(e: redis::RedisError) -> Self {
        RedisError(BackendError::with_source(e.to_string(), e))
    }
}

/// A client for `url`.
pub(crate) fn client(url: &str) -> Result<Client, RedisError> {
    Client::open(url).map_err(|e| RedisError(BackendError::with_source(format!("{url}: {e}"), e)))
}

fn config() -> AsyncConnectionConfig {
    AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT))
}

/// One multiplexed connection, reopened on the next use after a failure.
#[derive(Clone)]
pub(crate) struct Link {
    client: Client,
    conn: Arc<Mutex<Option<MultiplexedConnection>>>,
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link").finish_non_exhaustive()
    }
}

impl Link {
    /// A link to `client`'s server, connected now (so that a wrong URL or a
    /// server that is down shows at once).
    pub(crate) async fn open(client: Client) -> Result<Self, RedisError> {
        let link = Self {
            client,
            conn: Arc::default(),
        };
        link.connection().await?;
        Ok(link)
    }

    /// The connection, opened if there is none.
    pub(crate) async fn connection(&self) -> Result<MultiplexedConnection, RedisError> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = &*slot {
            return Ok(conn.clone());
        }
        let conn = self
            .client
            .get_multiplexed_async_connection_with_config(&config())
            .await?;
        *slot = Some(conn.clone());
        Ok(conn)
    }

    /// Runs a command; a failure drops the connection so that the next
    /// command opens a new one.
    pub(crate) async fn run<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, RedisError> {
        let mut conn = self.connection().await?;
        match cmd.query_async(&mut conn).await {
            Ok(value) => Ok(value),
            Err(e) => {
                if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() {
                    self.conn.lock().await.take();
                }
                Err(e.into())
            }
        }
    }
}
