//! The Skills extension from the client's side: listing and getting skill
//! entries, and loading a skill lazily, every file it reads checked against
//! the entry it was loaded from.

use base64::Engine;
use serde_json::{Map, Value};

use super::handle::typed;
use super::{Client, ClientError, Pending, ProtocolErrorKind};
use crate::skills::{MAX_FILES_PER_SKILL, MAX_SKILL_BYTES, Skill, SkillFiles, digest, frontmatter};

fn mismatch(message: String) -> ClientError {
    ClientError::protocol(ProtocolErrorKind::SkillVerification, message)
}

impl Client {
    /// Whether the server declared the Skills extension.
    pub fn serves_skills(&self) -> bool {
        self.server_capabilities()
            .get("extensions")
            .and_then(|e| e.get(crate::skills::EXTENSION))
            .is_some()
    }

    /// Every skill the server lists (`skills/list`, all pages, within the
    /// client's listing bounds); an entry that does not decode is dropped,
    /// with a warning logged. No skill file is read.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, ClientError> {
        self.require_skills("skills/list")?;
        let items = self.list_all("skills/list").await?;
        Ok(items
            .into_iter()
            .filter_map(|i| typed("skill", i))
            .collect())
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`).
    pub fn get_skill(&self, uri: &str) -> Pending<'_, Skill> {
        let uri = uri.to_owned();
        Pending::new(move |opts| async move {
            self.require_skills("skills/get")?;
            let mut params = Map::new();
            params.insert("uri".into(), uri.as_str().into());
            let mut result: Value = self
                .shared
                .call("skills/get", &params, &opts, Vec::new())
                .await?;
            let skill = result.get_mut("skill").map(Value::take).unwrap_or_default();
            serde_json::from_value(skill)
                .map_err(|source| ClientError::decode(format!("skill {uri:?}"), source))
        })
    }

    /// Loads the skill `entry` describes: reads its `SKILL.md` and checks it
    /// against the entry (size and digest when the entry lists its files, then
    /// the frontmatter field by field). Nothing else is read; the skill's
    /// other files are read with [`LoadedSkill::read`].
    pub async fn load_skill(&self, entry: Skill) -> Result<LoadedSkill, ClientError> {
        if let SkillFiles::Listed(files) = &entry.resources {
            let total = files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size));
            if files.len() > MAX_FILES_PER_SKILL || total > MAX_SKILL_BYTES {
                return Err(mismatch(format!(
                    "{}: {} files, {total} bytes: past the {MAX_FILES_PER_SKILL} files or {MAX_SKILL_BYTES} bytes a skill may hold",
                    entry.uri,
                    files.len()
                )));
            }
        }
        let bytes = self.fetch(&entry, &entry.uri).await?;
        let text = String::from_utf8(bytes)
            .map_err(|_| mismatch(format!("{}: SKILL.md is not UTF-8 text", entry.uri)))?;
        let found = frontmatter(&text).map_err(|e| mismatch(format!("{}: {e}", entry.uri)))?;
        let mut keys: Vec<&String> = found.keys().chain(entry.frontmatter.keys()).collect();
        keys.sort();
        keys.dedup();
        let differ: Vec<&str> = keys
            .into_iter()
            .filter(|k| !same(found.get(*k), entry.frontmatter.get(*k)))
            .map(String::as_str)
            .collect();
        if !differ.is_empty() {
            return Err(mismatch(format!(
                "{}: the frontmatter differs from the entry's in {}",
                entry.uri,
                differ.join(", ")
            )));
        }
        Ok(LoadedSkill { entry, text })
    }

    fn require_skills(&self, method: &str) -> Result<(), ClientError> {
        if self.serves_skills() {
            Ok(())
        } else {
            Err(ClientError::invalid_argument(format!(
                "{method}: the server does not declare {}",
                crate::skills::EXTENSION
            )))
        }
    }

    /// Reads the file at `uri` of the skill `entry` describes, checked
    /// against the entry when it lists its files.
    async fn fetch(&self, entry: &Skill, uri: &str) -> Result<Vec<u8>, ClientError> {
        let listed =
            match &entry.resources {
                SkillFiles::Listed(_) => Some(entry.file(uri).ok_or_else(|| {
                    mismatch(format!("{uri} is not a file of skill {}", entry.uri))
                })?),
                _ => {
                    let inside = entry.root().is_some_and(|root| {
                        uri.strip_prefix(root).is_some_and(|rest| {
                            rest.starts_with('/') && !rest.split('/').any(|s| s == ".." || s == ".")
                        })
                    });
                    if !inside {
                        return Err(mismatch(format!("{uri} is outside skill {}", entry.uri)));
                    }
                    None
                }
            };
        let read = self.read_resource(uri).await?;
        let item = read
            .items()
            .iter()
            .find(|c| c.uri() == uri)
            .or_else(|| read.items().first())
            .ok_or_else(|| mismatch(format!("{uri}: the read returned no contents")))?;
        let bytes = match (item.as_text(), item.as_blob()) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|_| mismatch(format!("{uri}: the blob is not base64")))?,
            (None, None) => return Err(mismatch(format!("{uri}: neither text nor blob"))),
        };
        if let Some(file) = listed {
            if bytes.len() as u64 != file.size {
                return Err(mismatch(format!(
                    "{uri}: {} bytes where the entry lists {}",
                    bytes.len(),
                    file.size
                )));
            }
            if digest(&bytes) != file.digest {
                return Err(mismatch(format!(
                    "{uri}: the digest is not the entry's {}",
                    file.digest
                )));
            }
        }
        Ok(bytes)
    }
}

/// Whether two frontmatter values are the same: numbers by value (a YAML
/// `1.0` is the `1` another reader writes), everything else exactly.
fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => same_value(a, b),
        _ => false,
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // Two integers exactly; a float and a number by value.
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            x.as_f64() == y.as_f64()
        }
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// A skill the client loaded: its entry and its verified `SKILL.md`.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    entry: Skill,
    text: String,
}

impl LoadedSkill {
    /// The entry the skill was loaded from.
    pub fn entry(&self) -> &Skill {
        &self.entry
    }

    /// The `SKILL.md` text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The URI of `path` in the skill: a path relative to its root
    /// (`references/FORMS.md`), or a URI as it is.
    pub fn uri_of(&self, path: &str) -> String {
        if path.contains("://") {
            return path.to_owned();
        }
        let root = self.entry.root().unwrap_or(&self.entry.uri);
        format!("{root}/{}", path.trim_start_matches('/'))
    }

    /// Reads one of the skill's files (`path` relative to its root, or its
    /// URI): a file the entry does not list is refused without a read, and
    /// what is read must have the entry's size and digest.
    pub async fn read(&self, client: &Client, path: &str) -> Result<Vec<u8>, ClientError> {
        let uri = self.uri_of(path);
        client.fetch(&self.entry, &uri).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_nothing_else_loosely() {
        assert!(same_value(
            &json!({"v": 1.0, "l": [2.0]}),
            &json!({"v": 1, "l": [2]})
        ));
        assert!(!same_value(&json!({"v": 1.5}), &json!({"v": 1})));
        assert!(!same_value(&json!("1"), &json!(1)));
        assert!(!same_value(
            &json!(9007199254740993u64),
            &json!(9007199254740992u64)
        ));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!same(Some(&json!(null)), None));
    }
}
