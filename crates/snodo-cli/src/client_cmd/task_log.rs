//! The tasks `snodo call --task` started, kept per target so that
//! `snodo tasks TARGET` can list them (MCP has no method that lists tasks).
//!
//! One JSON file, `tasks.json` in the snodo configuration folder
//! (`$SNODO_CONFIG_DIR`, else `$XDG_CONFIG_HOME/snodo`, else
//! `~/.config/snodo`), mode 0600, at most [`MAX_PER_TARGET`] tasks per
//! target (the oldest are dropped).

use std::path::PathBuf;

use serde_json::{Map, Value, json};

/// Most tasks remembered per target.
pub(crate) const MAX_PER_TARGET: usize = 100;

fn path() -> Option<PathBuf> {
    let oauth = snodo::client::oauth::FileStore::default_dir()?;
    Some(oauth.parent()?.join("tasks.json"))
}

fn load() -> Map<String, Value> {
    path()
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn store(all: &Map<String, Value>) {
    let Some(path) = path() else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = path.with_extension("json.tmp");
    let Ok(bytes) = serde_json::to_vec_pretty(all) else {
        return;
    };
    let written = {
        #[cfg(unix)]
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)
                .and_then(|mut f| f.write_all(&bytes))
        }
        #[cfg(not(unix))]
        {
            std::fs::write(&tmp, &bytes)
        }
    };
    if written.is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
}

/// The tasks remembered for `target`, oldest first: `(id, tool)`.
pub(crate) fn list(target: &str) -> Vec<(String, String)> {
    let all = load();
    all.get(target)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|t| {
                    Some((
                        t.get("taskId")?.as_str()?.to_string(),
                        t.get("tool")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Remembers a task started on `target`.
pub(crate) fn remember(target: &str, task_id: &str, tool: &str) {
    let mut all = load();
    let list = all
        .entry(target.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = list {
        list.push(json!({"taskId": task_id, "tool": tool}));
        let excess = list.len().saturating_sub(MAX_PER_TARGET);
        list.drain(..excess);
    }
    store(&all);
}

/// Forgets tasks the server no longer knows.
pub(crate) fn forget(target: &str, gone: &[String]) {
    if gone.is_empty() {
        return;
    }
    let mut all = load();
    if let Some(Value::Array(list)) = all.get_mut(target) {
        list.retain(|t| {
            t.get("taskId")
                .and_then(Value::as_str)
                .is_none_or(|id| !gone.iter().any(|g| g == id))
        });
    }
    store(&all);
}
