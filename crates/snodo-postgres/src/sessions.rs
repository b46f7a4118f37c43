//! The session directory on PostgreSQL: a row per session record
//! (`snodo_sessions`: its head, its state, its counts, the generation of its
//! members and its idle expiry, which every read and change renews) and a
//! row per member (`snodo_session_members`). A change is one transaction that locks the
//! record's row, checks the bounds and writes the one row it changes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use snodo::handler::BoxFuture;
use snodo::server::legacy::{
    Changed, Delta, DirectoryError, Loaded, MAX_RECORD_BYTES, MAX_RECORD_MEMBERS, SessionDirectory,
    StoredRecord,
};
use snodo::task::StoreError;
use tokio_postgres::Transaction;

use crate::pool::{Pool, pg};

/// A [`SessionDirectory`] in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PostgresSessions {
    pool: Pool,
    idle_secs: f64,
    creates: Arc<AtomicU64>,
}

fn failed(e: StoreError) -> DirectoryError {
    DirectoryError::with_source(e.to_string(), e)
}

/// The tables, and the columns records of earlier versions lacked (their
/// rows, plain JSON named by the session id, are dropped: they no longer
/// open).
const TABLES: &str = "
CREATE TABLE IF NOT EXISTS snodo_sessions (
    id text PRIMARY KEY,
    record bytea NOT NULL,
    expires_at timestamptz NOT NULL
);
ALTER TABLE snodo_sessions
    ADD COLUMN IF NOT EXISTS state bytea,
    ADD COLUMN IF NOT EXISTS bytes bigint NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS members integer NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT 0;
DELETE FROM snodo_sessions WHERE state IS NULL;
CREATE TABLE IF NOT EXISTS snodo_session_members (
    session text NOT NULL REFERENCES snodo_sessions (id) ON DELETE CASCADE,
    name bytea NOT NULL,
    value bytea NOT NULL,
    PRIMARY KEY (session, name)
);";

impl PostgresSessions {
    /// A directory in the database at `url`, each session expiring after
    /// `idle` without a request; creates its tables, and fails when
    /// PostgreSQL cannot be reached now.
    pub async fn connect(url: &str, idle: Duration) -> Result<Self, StoreError> {
        let pool = Pool::new(url, 4)?;
        pool.create_tables(7244015130475512835, TABLES).await?;
        Ok(Self {
            pool,
            idle_secs: idle.as_secs_f64().max(0.001),
            creates: Arc::default(),
        })
    }

    /// Runs `write` in a transaction of its own.
    async fn transaction(&self, write: Write<'_>) -> Result<Changed, DirectoryError> {
        let mut conn = self.pool.get().await.map_err(failed)?;
        let outcome = async {
            let tx = conn.client().transaction().await.map_err(pg)?;
            let changed = apply(&tx, write, self.idle_secs).await?;
            tx.commit().await.map_err(pg)?;
            Ok(changed)
        }
        .await;
        conn.check(&outcome);
        outcome.map_err(failed)
    }
}

/// A write of one record.
enum Write<'a> {
    Create {
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
        sweep: bool,
    },
    Change {
        key: &'a str,
        delta: Delta<'a>,
    },
}

/// The size and member count of the live record `key`, its row locked.
async fn locked(tx: &Transaction<'_>, key: &str) -> Result<Option<(i64, i32, i64)>, StoreError> {
    let row = tx
        .query_opt(
            "SELECT bytes, members, octet_length(state)::bigint FROM snodo_sessions \
             WHERE id = $1 AND expires_at > now() FOR UPDATE",
            &[&key],
        )
        .await
        .map_err(pg)?;
    Ok(row.map(|row| {
        (
            row.get(0),
            row.get(1),
            row.get::<_, Option<i64>>(2).unwrap_or(0),
        )
    }))
}

/// Writes the record's counts (and a new generation of its members when
/// they changed), renews its expiry, and returns the generation.
async fn touch(
    tx: &Transaction<'_>,
    key: &str,
    bytes: i64,
    members: i32,
    changed: bool,
    idle_secs: f64,
) -> Result<Changed, StoreError> {
    let step: i64 = changed.into();
    let row = tx
        .query_one(
            "UPDATE snodo_sessions SET bytes = $2, members = $3, generation = generation + $4, \
             expires_at = now() + make_interval(secs => $5) WHERE id = $1 RETURNING generation",
            &[&key, &bytes, &members, &step, &idle_secs],
        )
        .await
        .map_err(pg)?;
    Ok(Changed::Done(row.get::<_, i64>(0) as u64))
}

const MAX_BYTES: i64 = MAX_RECORD_BYTES as i64;

/// Applies `write` in the transaction `tx`.
async fn apply(tx: &Transaction<'_>, write: Write<'_>, idle: f64) -> Result<Changed, StoreError> {
    let (key, delta) = match write {
        Write::Create {
            key,
            head,
            state,
            sweep,
        } => {
            let bytes = (head.len() + state.len()) as i64;
            tx.execute("DELETE FROM snodo_sessions WHERE id = $1", &[&key])
                .await
                .map_err(pg)?;
            tx.execute(
                "INSERT INTO snodo_sessions \
                 (id, record, state, bytes, members, generation, expires_at) \
                 VALUES ($1, $2, $3, $4, 0, 0, now() + make_interval(secs => $5))",
                &[&key, &head, &state, &bytes, &idle],
            )
            .await
            .map_err(pg)?;
            if sweep {
                tx.execute("DELETE FROM snodo_sessions WHERE expires_at < now()", &[])
                    .await
                    .map_err(pg)?;
            }
            return Ok(Changed::Done(0));
        }
        Write::Change { key, delta } => (key, delta),
    };
    let Some((bytes, members, state_len)) = locked(tx, key).await? else {
        return Ok(Changed::Gone);
    };
    match delta {
        Delta::SetState(state) => {
            let bytes = bytes - state_len + state.len() as i64;
            if bytes > MAX_BYTES {
                return Ok(Changed::TooLarge);
            }
            tx.execute(
                "UPDATE snodo_sessions SET state = $2 WHERE id = $1",
                &[&key, &state],
            )
            .await
            .map_err(pg)?;
            touch(tx, key, bytes, members, false, idle).await
        }
        Delta::Add { name, value } => {
            let name = name.as_bytes();
            let old: Option<i64> = tx
                .query_opt(
                    "SELECT octet_length(value)::bigint FROM snodo_session_members \
                     WHERE session = $1 AND name = $2",
                    &[&key, &name],
                )
                .await
                .map_err(pg)?
                .map(|row| row.get(0));
            let members = match old {
                Some(_) => members,
                None if members as usize >= MAX_RECORD_MEMBERS => {
                    return Ok(Changed::TooManyMembers);
                }
                None => members + 1,
            };
            let bytes = bytes + value.len() as i64 + old.map_or(name.len() as i64, |old| -old);
            if bytes > MAX_BYTES {
                return Ok(Changed::TooLarge);
            }
            tx.execute(
                "INSERT INTO snodo_session_members (session, name, value) \
                 VALUES ($1, $2, $3) ON CONFLICT (session, name) \
                 DO UPDATE SET value = EXCLUDED.value",
                &[&key, &name, &value],
            )
            .await
            .map_err(pg)?;
            touch(tx, key, bytes, members, true, idle).await
        }
        Delta::Remove { name } => {
            let name = name.as_bytes();
            let removed: Option<i64> = tx
                .query_opt(
                    "DELETE FROM snodo_session_members WHERE session = $1 \
                     AND name = $2 RETURNING octet_length(value)::bigint",
                    &[&key, &name],
                )
                .await
                .map_err(pg)?
                .map(|row| row.get(0));
            let (bytes, members) = match removed {
                Some(len) => (bytes - len - name.len() as i64, members - 1),
                None => (bytes, members),
            };
            touch(tx, key, bytes, members, removed.is_some(), idle).await
        }
        _ => Err(StoreError::Invalid(
            "a change this directory does not know".into(),
        )),
    }
}

impl SessionDirectory for PostgresSessions {
    fn create<'a>(
        &'a self,
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        Box::pin(async move {
            let bytes = (head.len() + state.len()) as i64;
            if bytes > MAX_BYTES {
                return Ok(Changed::TooLarge);
            }
            let sweep = self
                .creates
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(64);
            self.transaction(Write::Create {
                key,
                head,
                state,
                sweep,
            })
            .await
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a str,
        known: Option<u64>,
    ) -> BoxFuture<'a, Result<Option<Loaded>, DirectoryError>> {
        Box::pin(async move {
            let known = known.map(|g| g as i64);
            let mut conn = self.pool.get().await.map_err(failed)?;
            let outcome = async {
                let client = conn.client();
                let Some(row) = client
                    .query_opt(
                        "UPDATE snodo_sessions SET expires_at = now() + make_interval(secs => $2) \
                         WHERE id = $1 AND expires_at > now() \
                         RETURNING generation, state, \
                         CASE WHEN generation IS NOT DISTINCT FROM $3 THEN NULL ELSE record END",
                        &[&key, &self.idle_secs, &known],
                    )
                    .await
                    .map_err(pg)?
                else {
                    return Ok(None);
                };
                let generation: i64 = row.get(0);
                let state: Option<Vec<u8>> = row.get(1);
                let state = state.unwrap_or_default();
                let Some(head) = row.get::<_, Option<Vec<u8>>>(2) else {
                    return Ok(Some(Loaded::Unchanged(state)));
                };
                let members = client
                    .query(
                        "SELECT name, value FROM snodo_session_members WHERE session = $1",
                        &[&key],
                    )
                    .await
                    .map_err(pg)?;
                // A name that is not UTF-8 was never written here: kept
                // (lossily) so that the record fails its check.
                let named = members
                    .iter()
                    .map(|member| {
                        let name: &[u8] = member.get(0);
                        let value: Vec<u8> = member.get(1);
                        (String::from_utf8_lossy(name).into_owned(), value)
                    })
                    .collect();
                Ok(Some(Loaded::Whole(StoredRecord::new(
                    head,
                    state,
                    named,
                    generation as u64,
                ))))
            }
            .await;
            conn.check(&outcome);
            outcome.map_err(failed)
        })
    }

    fn change<'a>(
        &'a self,
        key: &'a str,
        delta: Delta<'a>,
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        Box::pin(async move { self.transaction(Write::Change { key, delta }).await })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        Box::pin(async move {
            let mut conn = self.pool.get().await.map_err(failed)?;
            let outcome = conn
                .client()
                .query_opt(
                    "DELETE FROM snodo_sessions WHERE id = $1 RETURNING expires_at > now()",
                    &[&key],
                )
                .await
                .map_err(pg);
            conn.check(&outcome);
            Ok(outcome
                .map_err(failed)?
                .is_some_and(|row| row.get::<_, bool>(0)))
        })
    }
}
