//! The session directory on Redis: one hash per session record, with an
//! idle expiry that every read and change renews.
//!
//! The hash of a record holds its head (`h`), its state (`s`), each member
//! (`m:` and its name), the count of members (`n`) and of the record's
//! bytes (`b`) that bound it, and the generation of its members (`g`). Each change is one Lua script, so that it is
//! checked against the bounds and applied at once (`HSET`/`HDEL` of one
//! field: a change writes its own bytes, never the whole record).

use std::time::Duration;

use snodo::handler::BoxFuture;
use snodo::server::legacy::{
    Changed, Delta, DirectoryError, Loaded, MAX_RECORD_BYTES, MAX_RECORD_MEMBERS, SessionDirectory,
    StoredRecord,
};

use crate::connection::{Link, RedisError, client};
use crate::script::Script;

/// The key prefix a directory uses unless told otherwise.
pub const DEFAULT_PREFIX: &str = "snodo:session:";

/// Reads a record and renews its expiry: nil when there is none; `u`, the
/// generation and the state when the generation is ARGV[2]; else `w` and
/// the hash's fields and values. ARGV: idle milliseconds, the generation
/// the reader knows (or empty).
const LOAD: &str = r"
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 0 then return false end
local state = redis.call('HMGET', KEYS[1], 'g', 's')
if ARGV[2] ~= '' and state[1] == ARGV[2] then return {'u', state[1], state[2]} end
local all = redis.call('HGETALL', KEYS[1])
table.insert(all, 1, 'w')
return all
";

/// Creates or changes a record within its bounds. ARGV: idle milliseconds,
/// the operation (`c` create, `s` state, `a` add, `r` remove), then for
/// `c` the head and the state, for `s` the state, for `a` the name and the
/// value, for `r` the name; then the most members and bytes. Returns the
/// generation once done; -3 gone, -1 too many members, -2 too large.
const CHANGE: &str = r"
local k, op = KEYS[1], ARGV[2]
local max_members, max_bytes = tonumber(ARGV[5]), tonumber(ARGV[6])
if op == 'c' then
  local size = #ARGV[3] + #ARGV[4]
  if size > max_bytes then return -2 end
  redis.call('DEL', k)
  redis.call('HSET', k, 'h', ARGV[3], 's', ARGV[4], 'b', size, 'n', 0, 'g', 0)
  redis.call('PEXPIRE', k, ARGV[1])
  return 0
end
if redis.call('EXISTS', k) == 0 then return -3 end
local bytes = tonumber(redis.call('HGET', k, 'b')) or 0
if op == 's' then
  local size = bytes - redis.call('HSTRLEN', k, 's') + #ARGV[3]
  if size > max_bytes then return -2 end
  redis.call('HSET', k, 's', ARGV[3], 'b', size)
elseif op == 'a' then
  local field = 'm:' .. ARGV[3]
  local count = tonumber(redis.call('HGET', k, 'n')) or 0
  local size = bytes + #ARGV[3] + #ARGV[4]
  if redis.call('HEXISTS', k, field) == 1 then
    size = size - #ARGV[3] - redis.call('HSTRLEN', k, field)
  else
    if count >= max_members then return -1 end
    count = count + 1
  end
  if size > max_bytes then return -2 end
  redis.call('HSET', k, field, ARGV[4], 'b', size, 'n', count)
  redis.call('HINCRBY', k, 'g', 1)
elseif op == 'r' then
  local field = 'm:' .. ARGV[3]
  local len = redis.call('HSTRLEN', k, field)
  if redis.call('HDEL', k, field) == 1 then
    local count = tonumber(redis.call('HGET', k, 'n')) or 1
    redis.call('HSET', k, 'b', bytes - #ARGV[3] - len, 'n', count - 1)
    redis.call('HINCRBY', k, 'g', 1)
  end
else
  return redis.error_reply('unknown operation')
end
redis.call('PEXPIRE', k, ARGV[1])
return tonumber(redis.call('HGET', k, 'g')) or 0
";

/// A [`SessionDirectory`] in Redis.
#[derive(Debug, Clone)]
pub struct RedisSessions {
    link: Link,
    prefix: String,
    idle_ms: u64,
    load: Script,
    change: Script,
}

fn failed(e: RedisError) -> DirectoryError {
    DirectoryError::with_source(e.to_string(), e)
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
            load: Script::new(LOAD),
            change: Script::new(CHANGE),
        })
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    async fn run_change(&self, key: &str, args: [&[u8]; 3]) -> Result<Changed, DirectoryError> {
        let idle = self.idle_ms.to_string();
        let (members, bytes) = (MAX_RECORD_MEMBERS.to_string(), MAX_RECORD_BYTES.to_string());
        let [op, first, second] = args;
        let outcome: i64 = self
            .change
            .run(
                &self.link,
                &[&self.key(key)],
                &[
                    idle.as_bytes(),
                    op,
                    first,
                    second,
                    members.as_bytes(),
                    bytes.as_bytes(),
                ],
            )
            .await
            .map_err(failed)?;
        Ok(match outcome {
            -1 => Changed::TooManyMembers,
            -2 => Changed::TooLarge,
            n if n < 0 => Changed::Gone,
            n => Changed::Done(n as u64),
        })
    }
}

/// A generation as the script returns it.
fn generation(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// What the load script returned; `None` when a part is missing.
fn loaded(reply: Vec<Vec<u8>>) -> Option<Loaded> {
    let (marker, rest) = reply.split_first()?;
    if marker == b"u" {
        let [g, state] = rest else { return None };
        generation(g)?;
        return Some(Loaded::Unchanged(state.clone()));
    }
    let (mut head, mut state, mut g, mut members) = (None, None, None, Vec::new());
    for pair in rest.chunks(2) {
        let [field, value] = pair else { return None };
        match field.as_slice() {
            b"h" => head = Some(value.clone()),
            b"s" => state = Some(value.clone()),
            b"g" => g = generation(value),
            other => {
                // A name that is not UTF-8 was never written here: kept
                // (lossily) so that the record fails its check.
                if let Some(name) = other.strip_prefix(b"m:") {
                    let name = String::from_utf8_lossy(name).into_owned();
                    members.push((name, value.clone()));
                }
            }
        }
    }
    Some(Loaded::Whole(StoredRecord::new(head?, state?, members, g?)))
}

impl SessionDirectory for RedisSessions {
    fn create<'a>(
        &'a self,
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        Box::pin(async move {
            if head.len() + state.len() > MAX_RECORD_BYTES {
                return Ok(Changed::TooLarge);
            }
            self.run_change(key, [b"c", head, state]).await
        })
    }

    fn load<'a>(
        &'a self,
        key: &'a str,
        known: Option<u64>,
    ) -> BoxFuture<'a, Result<Option<Loaded>, DirectoryError>> {
        Box::pin(async move {
            let idle = self.idle_ms.to_string();
            let known = known.map(|g| g.to_string()).unwrap_or_default();
            let reply: Option<Vec<Vec<u8>>> = self
                .load
                .run(
                    &self.link,
                    &[&self.key(key)],
                    &[idle.as_bytes(), known.as_bytes()],
                )
                .await
                .map_err(failed)?;
            Ok(reply.and_then(loaded))
        })
    }

    fn change<'a>(
        &'a self,
        key: &'a str,
        delta: Delta<'a>,
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        Box::pin(async move {
            match delta {
                Delta::SetState(state) => self.run_change(key, [b"s", state, b""]).await,
                Delta::Add { name, value } => {
                    self.run_change(key, [b"a", name.as_bytes(), value]).await
                }
                Delta::Remove { name } => self.run_change(key, [b"r", name.as_bytes(), b""]).await,
                _ => Err(DirectoryError::new("a change this directory does not know")),
            }
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        Box::pin(async move {
            let cmd = redis::cmd("DEL").arg(self.key(key)).clone();
            let n: i64 = self.link.run(&cmd).await.map_err(failed)?;
            Ok(n > 0)
        })
    }
}
