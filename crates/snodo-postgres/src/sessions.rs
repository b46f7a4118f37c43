//! The session directory on PostgreSQL: a row per session
//! (`snodo_sessions`), its record as JSON, with an idle expiry that every
//! read renews.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use snodo::future::BoxFuture;
use snodo::server::legacy::{DirectoryError, MAX_RECORD_BYTES, SessionDirectory, SessionRecord};
use snodo::task::StoreError;

use crate::pool::{Pool, pg};

/// A [`SessionDirectory`] in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PostgresSessions {
    pool: Pool,
    idle_secs: f64,
    saves: Arc<AtomicU64>,
}

fn failed(e: StoreError) -> DirectoryError {
    DirectoryError(e.to_string())
}

impl PostgresSessions {
    /// A directory in the database at `url`, each session expiring after
    /// `idle` without a request; creates its table, and fails when
    /// PostgreSQL cannot be reached now.
    pub async fn connect(url: &str, idle: Duration) -> Result<Self, StoreError> {
        let pool = Pool::new(url, 4)?;
        pool.create_tables(
            7244015130475512835,
            "CREATE TABLE IF NOT EXISTS snodo_sessions (
                 id text PRIMARY KEY,
                 record bytea NOT NULL,
                 expires_at timestamptz NOT NULL
                 );",
        )
        .await?;
        Ok(Self {
            pool,
            idle_secs: idle.as_secs_f64().max(0.001),
            saves: Arc::default(),
        })
    }
}

impl SessionDirectory for PostgresSessions {
    fn save<'a>(&'a self, record: &'a SessionRecord) -> BoxFuture<'a, Result<(), DirectoryError>> {
        Box::pin(async move {
            let json = record.to_json();
            if json.len() > MAX_RECORD_BYTES {
                return Err(DirectoryError("the session record is too large".into()));
            }
            let mut conn = self.pool.get().await.map_err(failed)?;
            let sweep = self
                .saves
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(64);
            let outcome = async {
                let client = conn.client();
                client
                    .execute(
                        "INSERT INTO snodo_sessions (id, record, expires_at) \
                         VALUES ($1, $2, now() + make_interval(secs => $3)) \
                         ON CONFLICT (id) DO UPDATE \
                         SET record = EXCLUDED.record, expires_at = EXCLUDED.expires_at",
                        &[&record.id, &json, &self.idle_secs],
                    )
                    .await
                    .map_err(pg)?;
                if sweep {
                    client
                        .execute("DELETE FROM snodo_sessions WHERE expires_at < now()", &[])
                        .await
                        .map_err(pg)?;
                }
                Ok(())
            }
            .await;
            conn.check(&outcome);
            outcome.map_err(failed)
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, DirectoryError>> {
        Box::pin(async move {
            let mut conn = self.pool.get().await.map_err(failed)?;
            let outcome = conn
                .client()
                .query_opt(
                    "UPDATE snodo_sessions SET expires_at = now() + make_interval(secs => $2) \
                     WHERE id = $1 AND expires_at > now() RETURNING record",
                    &[&id, &self.idle_secs],
                )
                .await
                .map_err(pg);
            conn.check(&outcome);
            let row = outcome.map_err(failed)?;
            Ok(row.and_then(|row| SessionRecord::from_json(row.get::<_, &[u8]>(0))))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        Box::pin(async move {
            let mut conn = self.pool.get().await.map_err(failed)?;
            let outcome = conn
                .client()
                .execute(
                    "DELETE FROM snodo_sessions WHERE id = $1 AND expires_at > now()",
                    &[&id],
                )
                .await
                .map_err(pg);
            conn.check(&outcome);
            Ok(outcome.map_err(failed)? > 0)
        })
    }
}
