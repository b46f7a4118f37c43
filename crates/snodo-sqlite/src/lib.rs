//! A [`TaskStore`] in one SQLite file: tasks and their results survive a
//! restart of the process (and a crash: the file is written ahead, in WAL
//! mode, before a change is acknowledged).
//!
//! One process at a time should serve a file: SQLite has a single writer
//! and no `SKIP LOCKED`, so several nodes belong on a shared database such
//! as PostgreSQL (`snodo-postgres`).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use snodo::task::{NewTask, TaskStore};
//! use snodo_sqlite::SqliteTaskStore;
//! let store = SqliteTaskStore::open_in_memory().unwrap();
//! let task = NewTask::new("", "report", serde_json::json!({})).unwrap();
//! let id = task.task_id.clone();
//! store.create(task, "node-1", std::time::Duration::from_secs(30)).await.unwrap();
//! assert!(store.get(&id).await.unwrap().is_some());
//! # });
//! ```

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::{Map, Value};
use snodo::error::BackendError;
use snodo::handler::BoxFuture;
use snodo::task::transition::{self, Orphan};
use snodo::task::{
    Answered, Cancelled, Lease, NewTask, Renewal, Settle, StoreError, TaskRecord, TaskStore, now_ms,
};

/// How many tasks a store holds by default.
pub const DEFAULT_MAX_TASKS: usize = 100_000;

/// The schema version this crate writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

/// Tasks in a SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteTaskStore {
    conn: Arc<Mutex<Connection>>,
    capacity: usize,
    /// Rows in the table (expired ones until purged): an exact count scans
    /// every row, so it is kept here and recounted only near the limit.
    rows: Arc<std::sync::atomic::AtomicUsize>,
    changes: tokio::sync::broadcast::Sender<String>,
}

/// A failure of SQLite (or of the file, or of decoding a row), its error kept
/// as the source.
fn backend<E: std::error::Error + Send + Sync + 'static>(e: E) -> StoreError {
    StoreError::Backend(BackendError::with_source(e.to_string(), e))
}

/// Creates `path`, empty and private to its owner, unless it exists.
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

impl SqliteTaskStore {
    /// Opens (creating and migrating when needed) the database at `path`.
    ///
    /// A new file is created readable and writable by its owner only (mode
    /// 0600 on Unix; SQLite gives its journal files the same mode): tasks
    /// hold their callers' arguments and results.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        create_private(path).map_err(|e| {
            let message = format!("cannot create {}: {e}", path.display());
            StoreError::Backend(BackendError::with_source(message, e))
        })?;
        let conn = Connection::open(path).map_err(backend)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(backend)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(backend)?;
        Self::with_connection(conn)
    }

    /// A store in memory (for tests: nothing survives it).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::with_connection(Connection::open_in_memory().map_err(backend)?)
    }

    fn with_connection(conn: Connection) -> Result<Self, StoreError> {
        conn.busy_timeout(Duration::from_secs(5)).map_err(backend)?;
        migrate(&conn)?;
        let rows: i64 = conn
            .query_row("SELECT COUNT(*) FROM snodo_tasks", [], |row| row.get(0))
            .map_err(backend)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            capacity: DEFAULT_MAX_TASKS,
            rows: Arc::new(std::sync::atomic::AtomicUsize::new(rows as usize)),
            changes: tokio::sync::broadcast::channel(1024).0,
        })
    }

    /// Holds at most `capacity` unexpired tasks (at least one); past it,
    /// creation fails with [`StoreError::Full`].
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    fn changed(&self, task_id: &str) {
        let _ = self.changes.send(task_id.to_string());
    }

    /// Runs `f` in an immediate transaction on a blocking thread.
    async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>, u64) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|e| e.into_inner());
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let out = f(&tx, now_ms())?;
            tx.commit().map_err(backend)?;
            Ok(out)
        })
        .await
        .map_err(backend)?
    }

    /// Loads, changes and saves one unexpired task; `None` when missing.
    async fn update<T, F>(&self, task_id: &str, f: F) -> Result<Option<T>, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut TaskRecord, u64) -> T + Send + 'static,
    {
        let id = task_id.to_string();
        self.write(move |tx, now| {
            let Some(mut record) = load(tx, &id)?.filter(|r| !r.is_expired(now)) else {
                return Ok(None);
            };
            let out = f(&mut record, now);
            save(tx, &record)?;
            Ok(Some(out))
        })
        .await
    }
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(backend)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::Backend(BackendError::new(format!(
            "the database has schema version {version}; this build knows {SCHEMA_VERSION}"
        ))));
    }
    if version < 1 {
        conn.execute_batch(
            "BEGIN;
             CREATE TABLE IF NOT EXISTS snodo_tasks (
                 task_id TEXT PRIMARY KEY,
                 status TEXT NOT NULL,
                 created_at_ms INTEGER NOT NULL,
                 expires_at_ms INTEGER,
                 lease_expires_at_ms INTEGER,
                 record TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS snodo_tasks_claimable
                 ON snodo_tasks (status, lease_expires_at_ms, created_at_ms);
             CREATE INDEX IF NOT EXISTS snodo_tasks_expiry
                 ON snodo_tasks (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
             PRAGMA user_version = 1;
             COMMIT;",
        )
        .map_err(backend)?;
    }
    Ok(())
}

fn load(tx: &Transaction<'_>, id: &str) -> Result<Option<TaskRecord>, StoreError> {
    let text: Option<String> = tx
        .query_row(
            "SELECT record FROM snodo_tasks WHERE task_id = ?1",
            [id],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    text.map(|t| serde_json::from_str(&t).map_err(backend))
        .transpose()
}

fn expires_at(record: &TaskRecord) -> Option<i64> {
    record
        .ttl_ms
        .map(|ttl| record.created_at_ms.saturating_add(ttl) as i64)
}

fn save(tx: &Transaction<'_>, record: &TaskRecord) -> Result<(), StoreError> {
    let text = serde_json::to_string(record).map_err(backend)?;
    tx.execute(
        "INSERT INTO snodo_tasks (task_id, status, created_at_ms, expires_at_ms, lease_expires_at_ms, record)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (task_id) DO UPDATE SET status = excluded.status,
             lease_expires_at_ms = excluded.lease_expires_at_ms, record = excluded.record",
        params![
            record.task_id,
            record.status.as_str(),
            record.created_at_ms as i64,
            expires_at(record),
            record.lease.as_ref().map(|l| l.expires_at_ms as i64),
            text
        ],
    )
    .map_err(backend)?;
    Ok(())
}

impl TaskStore for SqliteTaskStore {
    fn create(
        &self,
        task: NewTask,
        holder: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<Lease, StoreError>> {
        let holder = holder.to_string();
        let capacity = self.capacity;
        let rows = self.rows.clone();
        Box::pin(self.write(move |tx, now| {
            transition::check_new(&task)?;
            let exists: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM snodo_tasks WHERE task_id = ?1)",
                    [&task.task_id],
                    |row| row.get(0),
                )
                .map_err(backend)?;
            if exists {
                return Err(StoreError::Duplicate);
            }
            if rows.load(Ordering::Relaxed) >= capacity {
                let live: i64 = tx
                    .query_row(
                        "SELECT COUNT(*) FROM snodo_tasks WHERE expires_at_ms IS NULL OR expires_at_ms > ?1",
                        [now as i64],
                        |row| row.get(0),
                    )
                    .map_err(backend)?;
                if live as usize >= capacity {
                    return Err(StoreError::Full { limit: capacity });
                }
            }
            let mut record = TaskRecord::from_new(task);
            let lease = transition::lease(&mut record, &holder, lease, now)?;
            save(tx, &record)?;
            rows.fetch_add(1, Ordering::Relaxed);
            Ok(lease)
        }))
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let id = task_id.to_string();
        let conn = self.conn.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let conn = conn.lock().unwrap_or_else(|e| e.into_inner());
                let text: Option<String> = conn
                    .query_row(
                        "SELECT record FROM snodo_tasks WHERE task_id = ?1",
                        [&id],
                        |row| row.get(0),
                    )
                    .optional()
                    .map_err(backend)?;
                let now = now_ms();
                Ok(text
                    .map(|t| serde_json::from_str::<TaskRecord>(&t).map_err(backend))
                    .transpose()?
                    .filter(|r| !r.is_expired(now)))
            })
            .await
            .map_err(backend)?
        })
    }

    fn claim<'a>(
        &'a self,
        task_id: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Option<(TaskRecord, Lease)>, StoreError>> {
        let id = task_id.to_string();
        let holder = holder.to_string();
        Box::pin(self.write(move |tx, now| {
            let Some(mut record) =
                load(tx, &id)?.filter(|r| r.lease.is_none() && transition::claimable(r, now))
            else {
                return Ok(None);
            };
            let lease = transition::lease(&mut record, &holder, lease, now)?;
            save(tx, &record)?;
            Ok(Some((record, lease)))
        }))
    }

    fn claim_orphans<'a>(
        &'a self,
        holder: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<(TaskRecord, Lease)>, StoreError>> {
        let holder = holder.to_string();
        let changes = self.changes.clone();
        Box::pin(self.write(move |tx, now| {
            let ids: Vec<String> = {
                let mut stmt = tx
                    .prepare(
                        "SELECT task_id FROM snodo_tasks
                         WHERE status = 'working'
                           AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms <= ?1)
                           AND (expires_at_ms IS NULL OR expires_at_ms > ?1)
                         ORDER BY created_at_ms, task_id LIMIT ?2",
                    )
                    .map_err(backend)?;
                stmt.query_map(params![now as i64, (limit.max(1) * 4) as i64], |row| {
                    row.get(0)
                })
                .map_err(backend)?
                .collect::<Result<_, _>>()
                .map_err(backend)?
            };
            let mut out = Vec::new();
            for id in ids {
                if out.len() >= limit {
                    break;
                }
                let Some(mut record) = load(tx, &id)?.filter(|r| transition::claimable(r, now))
                else {
                    continue;
                };
                if transition::recover(&mut record, now) == Orphan::Run {
                    let lease = transition::lease(&mut record, &holder, lease, now)?;
                    save(tx, &record)?;
                    out.push((record, lease));
                } else {
                    save(tx, &record)?;
                    let _ = changes.send(record.task_id.clone());
                }
            }
            Ok(out)
        }))
    }

    fn renew<'a>(
        &'a self,
        lease: &'a Lease,
        extend: Duration,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>> {
        let lease = lease.clone();
        Box::pin(async move {
            let renewed = self
                .update(&lease.task_id.clone(), move |record, now| {
                    if !record.holds(&lease, now) {
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
        let lease = lease.clone();
        Box::pin(async move {
            let id = lease.task_id.clone();
            let task_id = id.clone();
            let settled = self
                .write(move |tx, now| {
                    let Some(mut record) = load(tx, &id)?.filter(|r| r.holds(&lease, now)) else {
                        return Ok(false);
                    };
                    transition::settle(&mut record, outcome, now);
                    save(tx, &record)?;
                    Ok(true)
                })
                .await?;
            if settled {
                self.changed(&task_id);
            }
            Ok(settled)
        })
    }

    fn note<'a>(
        &'a self,
        lease: &'a Lease,
        message: String,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let lease = lease.clone();
        Box::pin(async move {
            let id = lease.task_id.clone();
            let noted = self
                .update(&id, move |record, now| {
                    if !record.holds(&lease, now) {
                        return false;
                    }
                    transition::note(record, message, now);
                    true
                })
                .await?;
            if noted == Some(true) {
                self.changed(&id);
            }
            Ok(noted == Some(true))
        })
    }

    fn fail<'a>(
        &'a self,
        task_id: &'a str,
        error: Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let id = task_id.to_string();
        Box::pin(async move {
            let failed = self
                .write(move |tx, now| {
                    let Some(mut record) = load(tx, &id)?.filter(|r| !r.status.is_terminal())
                    else {
                        return Ok(false);
                    };
                    transition::settle(&mut record, Settle::Failed(error), now);
                    save(tx, &record)?;
                    Ok(true)
                })
                .await?;
            if failed {
                self.changed(task_id);
            }
            Ok(failed)
        })
    }

    fn answer<'a>(
        &'a self,
        task_id: &'a str,
        responses: Map<String, Value>,
    ) -> BoxFuture<'a, Result<Answered, StoreError>> {
        Box::pin(async move {
            let out = self
                .update(task_id, move |record, now| {
                    transition::answer(record, responses, now)
                })
                .await?;
            if out.is_some() {
                self.changed(task_id);
            }
            Ok(out.unwrap_or(Answered::NotFound))
        })
    }

    fn cancel<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Cancelled, StoreError>> {
        Box::pin(async move {
            let out = self.update(task_id, transition::cancel).await?;
            if matches!(out, Some(Cancelled::Now | Cancelled::Requested)) {
                self.changed(task_id);
            }
            Ok(out.unwrap_or(Cancelled::NotFound))
        })
    }

    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.changes.subscribe())
    }

    fn purge(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<usize, StoreError>> {
        let rows = self.rows.clone();
        Box::pin(self.write(move |tx, _| {
            let n = tx
                .execute(
                    "DELETE FROM snodo_tasks WHERE task_id IN (
                         SELECT task_id FROM snodo_tasks
                         WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ?1 LIMIT ?2)",
                    params![now_ms as i64, limit as i64],
                )
                .map_err(backend)?;
            let _ = rows.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                Some(r.saturating_sub(n))
            });
            Ok(n)
        }))
    }
}
