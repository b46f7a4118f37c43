//! What anyone who can reach the bus's server sees and can do: read every
//! message on the channel, publish raw messages on it, and read every key or
//! row the nodes keep there. Redis through a plain client, PostgreSQL
//! through `LISTEN`/`NOTIFY` and plain queries.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;

use super::Bus;

/// A tap on one service's channel.
pub struct Tap {
    bus: Bus,
    url: String,
    channel: String,
    heard: Arc<Mutex<Vec<Vec<u8>>>>,
    published: Mutex<Vec<Vec<u8>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn pg_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {url}: {e}"));
    tokio::spawn(connection);
    client
}

async fn redis_connection(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("Redis at {url}: {e}"))
}

impl Tap {
    /// Starts reading every message of `channel`; returns once listening.
    pub async fn open(bus: Bus, url: &str, channel: &str) -> Tap {
        let heard: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let sink = heard.clone();
        let task = match bus {
            Bus::Redis => {
                let client = redis::Client::open(url).unwrap();
                let mut pubsub = client.get_async_pubsub().await.unwrap();
                pubsub.subscribe(channel).await.unwrap();
                tokio::spawn(async move {
                    let mut messages = pubsub.into_on_message();
                    while let Some(m) = messages.next().await {
                        sink.lock().unwrap().push(m.get_payload_bytes().to_vec());
                    }
                })
            }
            Bus::Postgres => {
                let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                let reader = pg_client(url).await;
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
                tokio::spawn(async move {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(Ok(message)) = messages.next().await {
                        if let tokio_postgres::AsyncMessage::Notification(n) = message {
                            let _ = tx.send(n.payload().to_string());
                        }
                    }
                });
                client
                    .batch_execute(&format!("LISTEN \"{channel}\""))
                    .await
                    .unwrap();
                tokio::spawn(async move {
                    let _listening = client;
                    while let Some(payload) = rx.recv().await {
                        // Inline (`i` + payload) or by reference (`r` + row id).
                        let body = match payload.split_at_checked(1) {
                            Some(("r", id)) => {
                                let id: i64 = id.parse().unwrap_or_default();
                                match reader
                                    .query_opt(
                                        "SELECT body FROM snodo_bus_payloads WHERE id = $1",
                                        &[&id],
                                    )
                                    .await
                                {
                                    Ok(Some(row)) => row.get::<_, Vec<u8>>(0),
                                    _ => payload.into_bytes(),
                                }
                            }
                            Some(("i", text)) => text.as_bytes().to_vec(),
                            _ => payload.into_bytes(),
                        };
                        sink.lock().unwrap().push(body);
                    }
                })
            }
        };
        Tap {
            bus,
            url: url.to_string(),
            channel: channel.to_string(),
            heard,
            published: Mutex::default(),
            task,
        }
    }

    /// Every message heard so far.
    pub fn heard(&self) -> Vec<Vec<u8>> {
        self.heard.lock().unwrap().clone()
    }

    /// Every message this tap published, as text.
    pub fn published(&self) -> Vec<String> {
        let published = self.published.lock().unwrap();
        published
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    }

    /// Every message heard so far that this tap did not publish itself.
    pub fn heard_from_nodes(&self) -> Vec<Vec<u8>> {
        let published = self.published.lock().unwrap();
        self.heard()
            .into_iter()
            .filter(|m| !published.contains(m))
            .collect()
    }

    /// Waits until `n` messages were heard (at most 10 s).
    pub async fn wait_for(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.heard.lock().unwrap().len() < n && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Publishes `payload` on the channel as any client of the server can
    /// (on PostgreSQL twice: in the notification, and by reference through
    /// the payload table, as the bus sends large payloads).
    pub async fn publish(&self, payload: &[u8]) {
        self.published.lock().unwrap().push(payload.to_vec());
        match self.bus {
            Bus::Redis => {
                let mut conn = redis_connection(&self.url).await;
                let _: i64 = redis::cmd("PUBLISH")
                    .arg(&self.channel)
                    .arg(payload)
                    .query_async(&mut conn)
                    .await
                    .unwrap();
            }
            Bus::Postgres => {
                let client = pg_client(&self.url).await;
                let text = format!("i{}", String::from_utf8_lossy(payload));
                client
                    .execute("SELECT pg_notify($1, $2)", &[&self.channel, &text])
                    .await
                    .unwrap();
                let row = client
                    .query_one(
                        "INSERT INTO snodo_bus_payloads (body) VALUES ($1) RETURNING id",
                        &[&payload],
                    )
                    .await
                    .unwrap();
                let reference = format!("r{}", row.get::<_, i64>(0));
                client
                    .execute("SELECT pg_notify($1, $2)", &[&self.channel, &reference])
                    .await
                    .unwrap();
            }
        }
    }

    /// Every key and value the server holds that the nodes may have written
    /// (Redis: every key, and the values of this service's keys;
    /// PostgreSQL: every row of the session and bus tables), as text.
    pub async fn stored(&self) -> Vec<String> {
        match self.bus {
            Bus::Redis => redis_dump(&self.url, &format!("{}:", self.channel)).await,
            Bus::Postgres => postgres_dump(&self.url).await,
        }
    }

    /// Replaces `from` with `to` in every stored value of this service's
    /// session records, in place, as someone with write access could.
    pub async fn tamper_records(&self, from: &str, to: &str) -> usize {
        match self.bus {
            Bus::Redis => {
                let mut conn = redis_connection(&self.url).await;
                let keys = redis_keys(&mut conn, &format!("{}:*", self.channel)).await;
                let mut changed = 0;
                for key in keys {
                    let kind: String = redis::cmd("TYPE")
                        .arg(&key)
                        .query_async(&mut conn)
                        .await
                        .unwrap();
                    let fields: Vec<(String, Vec<u8>)> = match kind.as_str() {
                        "string" => {
                            let v: Vec<u8> = redis::cmd("GET")
                                .arg(&key)
                                .query_async(&mut conn)
                                .await
                                .unwrap();
                            vec![(String::new(), v)]
                        }
                        "hash" => redis::cmd("HGETALL")
                            .arg(&key)
                            .query_async(&mut conn)
                            .await
                            .unwrap(),
                        _ => continue,
                    };
                    for (field, value) in fields {
                        let text = String::from_utf8_lossy(&value);
                        if !text.contains(from) {
                            continue;
                        }
                        let new = text.replace(from, to);
                        let cmd = if field.is_empty() {
                            redis::cmd("SET")
                                .arg(&key)
                                .arg(new.as_bytes())
                                .arg("KEEPTTL")
                                .clone()
                        } else {
                            redis::cmd("HSET")
                                .arg(&key)
                                .arg(&field)
                                .arg(new.as_bytes())
                                .clone()
                        };
                        let _: redis::Value = cmd.query_async(&mut conn).await.unwrap();
                        changed += 1;
                    }
                }
                changed
            }
            Bus::Postgres => {
                let client = pg_client(&self.url).await;
                let mut changed = 0;
                for (table, columns) in postgres_tables(&client, "snodo_session%").await {
                    for (column, kind) in columns {
                        if kind != "bytea" {
                            continue;
                        }
                        let update = format!(
                            "UPDATE \"{table}\" SET \"{column}\" = convert_to(replace(\
                             convert_from(\"{column}\", 'UTF8'), $1, $2), 'UTF8') \
                             WHERE position(convert_to($1, 'UTF8') in \"{column}\") > 0"
                        );
                        changed += client.execute(&update, &[&from, &to]).await.unwrap();
                    }
                }
                changed as usize
            }
        }
    }

    /// The bytes this service's session records take in the server:
    /// Redis: every value (and hash field) under its keys; PostgreSQL: every
    /// byte column of the session tables.
    pub async fn record_bytes(&self) -> usize {
        match self.bus {
            Bus::Redis => {
                let mut conn = redis_connection(&self.url).await;
                let keys = redis_keys(&mut conn, &format!("{}:*", self.channel)).await;
                let mut total = 0;
                for key in keys {
                    for value in redis_values(&mut conn, &key).await {
                        total += value.len();
                    }
                }
                total
            }
            Bus::Postgres => {
                let client = pg_client(&self.url).await;
                let mut total = 0;
                for (table, columns) in postgres_tables(&client, "snodo_session%").await {
                    let sizes: Vec<String> = columns
                        .iter()
                        .filter(|(_, kind)| kind == "bytea" || kind == "text")
                        .map(|(name, _)| format!("coalesce(octet_length(\"{name}\"), 0)"))
                        .collect();
                    let query = format!(
                        "SELECT coalesce(sum({}), 0)::bigint FROM \"{table}\"",
                        sizes.join(" + ")
                    );
                    let n: i64 = client.query_one(&query, &[]).await.unwrap().get(0);
                    total += n as usize;
                }
                total
            }
        }
    }
}

async fn redis_keys(conn: &mut redis::aio::MultiplexedConnection, pattern: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(conn)
            .await
            .unwrap();
        keys.extend(batch);
        if next == 0 {
            return keys;
        }
        cursor = next;
    }
}

/// Every value of `key` (hash fields included), whatever its type.
async fn redis_values(conn: &mut redis::aio::MultiplexedConnection, key: &str) -> Vec<Vec<u8>> {
    let kind: String = redis::cmd("TYPE").arg(key).query_async(conn).await.unwrap();
    let read = |name: &str| redis::cmd(name).arg(key).clone();
    let values: Vec<Vec<u8>> = match kind.as_str() {
        "string" => vec![read("GET").query_async(conn).await.unwrap_or_default()],
        "hash" => read("HGETALL").query_async(conn).await.unwrap_or_default(),
        "set" => read("SMEMBERS").query_async(conn).await.unwrap_or_default(),
        "list" => read("LRANGE")
            .arg(0)
            .arg(-1)
            .query_async(conn)
            .await
            .unwrap_or_default(),
        "zset" => read("ZRANGE")
            .arg(0)
            .arg(-1)
            .query_async(conn)
            .await
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    values
}

async fn redis_dump(url: &str, prefix: &str) -> Vec<String> {
    let mut conn = redis_connection(url).await;
    let mut out = Vec::new();
    for key in redis_keys(&mut conn, "*").await {
        if key.starts_with(prefix) {
            for value in redis_values(&mut conn, &key).await {
                out.push(format!("{key} = {}", String::from_utf8_lossy(&value)));
            }
        }
        out.push(key);
    }
    out
}

/// The tables of the current schema whose names are `LIKE pattern`, with
/// their columns' names and types.
async fn postgres_tables(
    client: &tokio_postgres::Client,
    pattern: &str,
) -> Vec<(String, Vec<(String, String)>)> {
    let tables = client
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name LIKE $1",
            &[&pattern],
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    for table in tables {
        let table: String = table.get(0);
        let columns = client
            .query(
                "SELECT column_name::text, data_type::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
                &[&table],
            )
            .await
            .unwrap()
            .iter()
            .map(|c| (c.get(0), c.get(1)))
            .collect();
        out.push((table, columns));
    }
    out
}

/// Every row of the tables the session directory and the bus write, one
/// string a row: `table: column=value ...`, byte columns as their bytes.
async fn postgres_dump(url: &str) -> Vec<String> {
    let client = pg_client(url).await;
    let mut out = Vec::new();
    for pattern in ["snodo_session%", "snodo_bus_payloads"] {
        for (table, columns) in postgres_tables(&client, pattern).await {
            let parts: Vec<String> = columns
                .iter()
                .map(|(name, kind)| {
                    if kind == "bytea" {
                        format!("'{name}=' || coalesce(encode(\"{name}\", 'escape'), '')")
                    } else {
                        format!("'{name}=' || coalesce(\"{name}\"::text, '')")
                    }
                })
                .collect();
            let query = format!(
                "SELECT '{table}: ' || {} FROM \"{table}\"",
                parts.join(" || ' ' || ")
            );
            for row in client.query(&query, &[]).await.unwrap() {
                out.push(row.get::<_, String>(0));
            }
        }
    }
    out
}

/// `base` with a fresh schema of its own on its search path, so that a
/// test reads only the rows its nodes write.
pub async fn schema_url(base: &str, name: &str) -> String {
    let schema = format!("snodo_test_{name}_{}", std::process::id());
    let client = pg_client(base).await;
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
        ))
        .await
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options=-csearch_path%3D{schema}")
}
