//! PostgreSQL for several server nodes: a [`TaskStore`] that shares their
//! tasks, an event bus on `LISTEN/NOTIFY` ([`PostgresBus`]) and a directory
//! of initialize-era sessions ([`PostgresSessions`]).
//!
//! Each task is a row; every change is a transaction that locks the row
//! (`SELECT … FOR UPDATE`), applies the rules of
//! [`snodo::task::transition`], and writes it back. Leases are timed by the
//! database's clock, so that nodes whose clocks disagree still agree on who
//! holds a task; a worker's writes name its lease, and a lease superseded by
//! another node's claim (a later generation) is refused. Orphaned tasks are
//! claimed with `FOR UPDATE SKIP LOCKED`, so two nodes never claim the same
//! one. The store creates and migrates its tables (`snodo_tasks`,
//! `snodo_schema`) under an advisory lock, once per database.
//!
//! Every change is announced with `NOTIFY snodo_tasks` (the payload is the
//! task id); [`PostgresTaskStore::changes`] hears them, from every node.
//! `LISTEN` needs a session, so point the store at PostgreSQL itself or at a
//! session-pooled connection, not at a transaction pooler.
//!
//! ```no_run
//! # async fn demo() -> Result<(), snodo::task::StoreError> {
//! use snodo::task::TaskOptions;
//! let store = snodo_postgres::PostgresTaskStore::connect("postgres://postgres@127.0.0.1/test").await?;
//! let options = TaskOptions::new(store);
//! # let _ = options; Ok(()) }
//! ```

mod bus;
mod pool;
mod sessions;

pub use bus::{DEFAULT_BUS_CHANNEL, INLINE_LIMIT, KEEP_PAYLOADS, PostgresBus};
pub use sessions::PostgresSessions;

use std::time::Duration;

use serde_json::{Map, Value};
use snodo::error::BackendError;
use snodo::handler::BoxFuture;
use snodo::task::transition::{self, Orphan};
use snodo::task::{
    Answered, Cancelled, Lease, NewTask, Renewal, Settle, StoreError, TaskRecord, TaskStore,
};
use tokio::sync::broadcast;
use tokio_postgres::Transaction;

use pool::{Pool, pg};

/// How many tasks a store holds by default.
pub const DEFAULT_MAX_TASKS: usize = 1_000_000;

/// How many connections a store opens by default.
pub const DEFAULT_CONNECTIONS: usize = 4;

/// The schema version this crate writes.
pub const SCHEMA_VERSION: i32 = 1;

/// The channel of the change notifications.
pub const CHANNEL: &str = "snodo_tasks";

/// Tasks in PostgreSQL.
#[derive(Debug, Clone)]
pub struct PostgresTaskStore {
    pool: Pool,
    capacity: usize,
}

impl PostgresTaskStore {
    /// Connects (with [`DEFAULT_CONNECTIONS`] connections, opened as
    /// needed and reopened after a failure), creates or migrates the tables,
    /// and starts listening for changes.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, DEFAULT_CONNECTIONS).await
    }

    /// Like [`PostgresTaskStore::connect`], with `connections` connections
    /// (at least one).
    pub async fn connect_with(url: &str, connections: usize) -> Result<Self, StoreError> {
        let pool = Pool::new(url, connections.max(1))?;
        let store = Self {
            pool,
            capacity: DEFAULT_MAX_TASKS,
        };
        store.migrate().await?;
        store.pool.listen(CHANNEL);
        Ok(store)
    }

    /// Holds at most `capacity` unexpired tasks; past it, creation fails
    /// with [`StoreError::Full`] (exactly under 100 000; above, as PostgreSQL
    /// estimates the table's rows until it is near the limit).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// The ids of tasks changed by any node, as PostgreSQL announces them.
    /// After the notification connection was lost and restored, a `""` id
    /// says that changes may have been missed.
    pub fn changes(&self) -> broadcast::Receiver<String> {
        self.pool.subscribe()
    }

    /// Deletes every task (for tests).
    pub async fn clear(&self) -> Result<(), StoreError> {
        let mut conn = self.pool.get().await?;
        let out = conn
            .client()
            .batch_execute("DELETE FROM snodo_tasks")
            .await
            .map_err(pg);
        conn.check(&out);
        out
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let mut conn = self.pool.get().await?;
        let out = async {
            let tx = conn.client().transaction().await.map_err(pg)?;
            tx.batch_execute(
                "SELECT pg_advisory_xact_lock(7244015130475512833);
                 CREATE TABLE IF NOT EXISTS snodo_schema (
                     component text PRIMARY KEY,
                     version integer NOT NULL
                 );",
            )
            .await
            .map_err(pg)?;
            let version: i32 = tx
                .query_opt(
                    "SELECT version FROM snodo_schema WHERE component = 'tasks'",
                    &[],
                )
                .await
                .map_err(pg)?
                .map_or(0, |row| row.get(0));
            if version > SCHEMA_VERSION {
                return Err(StoreError::Backend(BackendError::new(format!(
                    "the database has task schema version {version}; this build knows {SCHEMA_VERSION}"
                ))));
            }
            if version < 1 {
                tx.batch_execute(
                    "CREATE TABLE IF NOT EXISTS snodo_tasks (
                         task_id text PRIMARY KEY,
                         status text NOT NULL CHECK (status IN
                             ('working', 'input_required', 'completed', 'failed', 'cancelled')),
                         created_at_ms bigint NOT NULL,
                         expires_at_ms bigint,
                         lease_expires_at_ms bigint,
                         record jsonb NOT NULL
                     );
                     CREATE INDEX IF NOT EXISTS snodo_tasks_claimable
                         ON snodo_tasks (created_at_ms) WHERE status = 'working';
                     CREATE INDEX IF NOT EXISTS snodo_tasks_expiry
                         ON snodo_tasks (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
                     INSERT INTO snodo_schema (component, version) VALUES ('tasks', 1)
                         ON CONFLICT (component) DO UPDATE SET version = 1;",
                )
                .await
                .map_err(pg)?;
            }
            tx.commit().await.map_err(pg)
        }
        .await;
        conn.check(&out);
        out
    }

    /// Locks, changes and saves one unexpired task; `None` when missing.
    fn update<'a, T, F>(
        &'a self,
        task_id: &'a str,
        announce: bool,
        f: F,
    ) -> BoxFuture<'a, Result<Option<T>, StoreError>>
    where
        T: Send + 'a,
        F: FnOnce(&mut TaskRecord, u64) -> T + Send + 'a,
    {
        Box::pin(async move {
            let mut conn = self.pool.get().await?;
            let out = async {
                let tx = conn.client().transaction().await.map_err(pg)?;
                let now = db_now(&tx).await?;
                let Some(mut record) = load(&tx, task_id).await?.filter(|r| !r.is_expired(now))
                else {
                    // Ended here, not when the dropped transaction's rollback
                    // reaches the server: until then its row lock would make
                    // `SKIP LOCKED` readers (purge, orphan claims) on other
                    // connections pass the row by.
                    tx.rollback().await.map_err(pg)?;
                    return Ok(None);
                };
                let out = f(&mut record, now);
                save(&tx, &record, announce).await?;
                tx.commit().await.map_err(pg)?;
                Ok(Some(out))
            }
            .await;
            conn.check(&out);
            out
        })
    }
}

impl PostgresTaskStore {
    /// Whether the table is full. Under a limit of 100 000 the unexpired
    /// tasks are counted; above it an exact count would scan too many rows on
    /// every creation, so PostgreSQL's estimate of the table's rows decides
    /// until it reaches 90 % of the limit (the bound is then as good as the
    /// estimate, which autovacuum refreshes).
    async fn near_capacity(&self, tx: &Transaction<'_>, now: u64) -> Result<bool, StoreError> {
        if self.capacity < 100_000 {
            return self.count_live(tx, now).await;
        }
        let estimate: i64 = tx
            .query_one(
                "SELECT COALESCE((SELECT GREATEST(reltuples, 0)::bigint FROM pg_class
                                  WHERE oid = to_regclass('snodo_tasks')), 0)",
                &[],
            )
            .await
            .map_err(pg)?
            .get(0);
        if (estimate as usize).saturating_mul(10) < self.capacity.saturating_mul(9) {
            return Ok(false);
        }
        self.count_live(tx, now).await
    }

    async fn count_live(&self, tx: &Transaction<'_>, now: u64) -> Result<bool, StoreError> {
        let live: i64 = tx
            .query_one(
                "SELECT count(*) FROM snodo_tasks WHERE expires_at_ms IS NULL OR expires_at_ms > $1",
                &[&(now as i64)],
            )
            .await
            .map_err(pg)?
            .get(0);
        Ok(live as usize >= self.capacity)
    }

    /// Changes a task under a current lease, and announces it; whether the
    /// lease was current.
    fn change_held<'a>(
        &'a self,
        lease: &'a Lease,
        change: impl FnOnce(&mut TaskRecord, u64) + Send + 'a,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let changed = self
                .update(&lease.task_id, true, move |record, now| {
                    if !record.holds(lease, now) {
                        return false;
                    }
                    change(record, now);
                    true
                })
                .await?;
            Ok(changed == Some(true))
        })
    }
}

/// The database's clock, in milliseconds since the Unix epoch.
async fn db_now(tx: &Transaction<'_>) -> Result<u64, StoreError> {
    let row = tx
        .query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )
        .await
        .map_err(pg)?;
    Ok(row.get::<_, i64>(0).max(0) as u64)
}

/// A stored task that does not decode (written by another build?).
fn undecodable(e: serde_json::Error) -> StoreError {
    StoreError::Backend(BackendError::with_source(
        format!("a stored task does not decode: {e}"),
        e,
    ))
}

async fn load(tx: &Transaction<'_>, id: &str) -> Result<Option<TaskRecord>, StoreError> {
    let row = tx
        .query_opt(
            "SELECT record::text FROM snodo_tasks WHERE task_id = $1 FOR UPDATE",
            &[&id],
        )
        .await
        .map_err(pg)?;
    row.map(|r| serde_json::from_str::<TaskRecord>(r.get::<_, &str>(0)).map_err(undecodable))
        .transpose()
}

async fn save(tx: &Transaction<'_>, record: &TaskRecord, announce: bool) -> Result<(), StoreError> {
    let text = serde_json::to_string(record)
        .map_err(|e| StoreError::Backend(BackendError::with_source(e.to_string(), e)))?;
    let expires = record
        .ttl_ms
        .map(|ttl| record.created_at_ms.saturating_add(ttl) as i64);
    let lease = record.lease.as_ref().map(|l| l.expires_at_ms as i64);
    tx.execute(
        "INSERT INTO snodo_tasks (task_id, status, created_at_ms, expires_at_ms, lease_expires_at_ms, record)
         VALUES ($1, $2, $3, $4, $5, $6::text::jsonb)
         ON CONFLICT (task_id) DO UPDATE SET status = excluded.status,
             lease_expires_at_ms = excluded.lease_expires_at_ms, record = excluded.record",
        &[
            &record.task_id,
            &record.status.as_str(),
            &(record.created_at_ms as i64),
            &expires,
            &lease,
            &text,
        ],
    )
    .await
    .map_err(pg)?;
    if announce {
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &record.task_id])
            .await
            .map_err(pg)?;
    }
    Ok(())
}

impl TaskStore for PostgresTaskStore {
    fn create(
        &self,
        task: NewTask,
        holder: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<Lease, StoreError>> {
        let holder = holder.to_string();
        Box::pin(async move {
            transition::check_new(&task)?;
            let mut conn = self.pool.get().await?;
            let out = async {
                let tx = conn.client().transaction().await.map_err(pg)?;
                let now = db_now(&tx).await?;
                if self.near_capacity(&tx, now).await? {
                    return Err(StoreError::Full {
                        limit: self.capacity,
                    });
                }
                let mut record = TaskRecord::from_new(task);
                let lease = transition::lease(&mut record, &holder, lease, now)?;
                let text = serde_json::to_string(&record)
                    .map_err(|e| StoreError::Backend(BackendError::with_source(e.to_string(), e)))?;
                let expires = record
                    .ttl_ms
                    .map(|ttl| record.created_at_ms.saturating_add(ttl) as i64);
                let inserted = tx
                    .execute(
                        "INSERT INTO snodo_tasks (task_id, status, created_at_ms, expires_at_ms, lease_expires_at_ms, record)
                         VALUES ($1, $2, $3, $4, $5, $6::text::jsonb) ON CONFLICT (task_id) DO NOTHING",
                        &[
                            &record.task_id,
                            &record.status.as_str(),
                            &(record.created_at_ms as i64),
                            &expires,
                            &(lease.expires_at_ms as i64),
                            &text,
                        ],
                    )
                    .await
                    .map_err(pg)?;
                if inserted == 0 {
                    return Err(StoreError::Duplicate);
                }
                tx.commit().await.map_err(pg)?;
                Ok(lease)
            }
            .await;
            conn.check(&out);
            out
        })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let mut conn = self.pool.get().await?;
            let out = async {
                let row = conn
                    .client()
                    .query_opt(
                        "SELECT record::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                         FROM snodo_tasks WHERE task_id = $1",
                        &[&task_id],
                    )
                    .await
                    .map_err(pg)?;
                let Some(row) = row else { return Ok(None) };
                let now = row.get::<_, i64>(1).max(0) as u64;
                let record = serde_json::from_str::<TaskRecord>(row.get::<_, &str>(0))
                    .map_err(undecodable)?;
                Ok((!record.is_expired(now)).then_some(record))
            }
            .await;
            conn.check(&out);
            out
        })
    }

    fn claim<'a>(
        &'a self,
        task_id: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Option<(TaskRecord, Lease)>, StoreError>> {
        Box::pin(async move {
            let claimed = self
                .update(task_id, false, move |record, now| {
                    (record.lease.is_none() && transition::claimable(record, now)).then(|| {
                        // A lease that cannot be drawn leaves the record as
                        // it was.
                        let lease = transition::lease(record, holder, lease, now)?;
                        Ok::<_, StoreError>((record.clone(), lease))
                    })
                })
                .await?;
            claimed.flatten().transpose()
        })
    }

    fn claim_orphans<'a>(
        &'a self,
        holder: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<(TaskRecord, Lease)>, StoreError>> {
        Box::pin(async move {
            let mut conn = self.pool.get().await?;
            let out = async {
                let tx = conn.client().transaction().await.map_err(pg)?;
                let now = db_now(&tx).await?;
                let rows = tx
                    .query(
                        "SELECT record::text FROM snodo_tasks
                         WHERE status = 'working'
                           AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms <= $1)
                           AND (expires_at_ms IS NULL OR expires_at_ms > $1)
                         ORDER BY created_at_ms, task_id LIMIT $2
                         FOR UPDATE SKIP LOCKED",
                        &[&(now as i64), &(limit.max(1) as i64)],
                    )
                    .await
                    .map_err(pg)?;
                let mut out = Vec::new();
                for row in rows {
                    let mut record = serde_json::from_str::<TaskRecord>(row.get::<_, &str>(0))
                        .map_err(undecodable)?;
                    if !transition::claimable(&record, now) {
                        continue;
                    }
                    if transition::recover(&mut record, now) == Orphan::Run {
                        let lease = transition::lease(&mut record, holder, lease, now)?;
                        save(&tx, &record, false).await?;
                        out.push((record, lease));
                    } else {
                        save(&tx, &record, true).await?;
                    }
                }
                tx.commit().await.map_err(pg)?;
                Ok(out)
            }
            .await;
            conn.check(&out);
            out
        })
    }

    fn renew<'a>(
        &'a self,
        lease: &'a Lease,
        extend: Duration,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>> {
        Box::pin(async move {
            let renewed = self
                .update(&lease.task_id, false, move |record, now| {
                    if !record.holds(lease, now) {
                        return Renewal::Lost;
                    }
                    if let Some(current) = &mut record.lease {
                        current.expires_at_ms = now.saturating_add(extend.as_millis() as u64);
                    }
                    Renewal::Held {
                        cancel_requested: record.cancel_requested,
                    }
                })
                .await?;
            Ok(renewed.unwrap_or(Renewal::Lost))
        })
    }

    fn settle<'a>(
        &'a self,
        lease: &'a Lease,
        outcome: Settle,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.change_held(lease, move |record, now| {
            transition::settle(record, outcome, now)
        })
    }

    fn note<'a>(
        &'a self,
        lease: &'a Lease,
        message: String,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.change_held(lease, move |record, now| {
            transition::note(record, message, now)
        })
    }

    fn fail<'a>(
        &'a self,
        task_id: &'a str,
        error: Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let failed = self
                .update(task_id, true, move |record, now| {
                    if record.status.is_terminal() {
                        return false;
                    }
                    transition::settle(record, Settle::Failed(error), now);
                    true
                })
                .await?;
            Ok(failed.unwrap_or(false))
        })
    }

    fn answer<'a>(
        &'a self,
        task_id: &'a str,
        responses: Map<String, Value>,
    ) -> BoxFuture<'a, Result<Answered, StoreError>> {
        Box::pin(async move {
            let out = self
                .update(task_id, true, move |record, now| {
                    transition::answer(record, responses, now)
                })
                .await?;
            Ok(out.unwrap_or(Answered::NotFound))
        })
    }

    fn cancel<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Cancelled, StoreError>> {
        Box::pin(async move {
            let out = self.update(task_id, true, transition::cancel).await?;
            Ok(out.unwrap_or(Cancelled::NotFound))
        })
    }

    fn changes(&self) -> Option<broadcast::Receiver<String>> {
        Some(self.pool.subscribe())
    }

    fn purge(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let mut conn = self.pool.get().await?;
            let out = conn
                .client()
                .execute(
                    "DELETE FROM snodo_tasks WHERE task_id IN (
                         SELECT task_id FROM snodo_tasks
                         WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= $1
                         LIMIT $2 FOR UPDATE SKIP LOCKED)",
                    &[&(now_ms as i64), &(limit as i64)],
                )
                .await
                .map(|n| n as usize)
                .map_err(pg);
            conn.check(&out);
            out
        })
    }
}
