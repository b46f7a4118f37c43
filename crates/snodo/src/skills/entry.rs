//! The skill entry of `skills/list` and `skills/get`: a skill's `SKILL.md`
//! URI, its frontmatter and the manifest of its files.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

/// One skill, as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Skill {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as a JSON object (`name` and `description`
    /// always, every other field as the author wrote it).
    pub frontmatter: Map<String, Value>,
    /// The skill's files, or that its content is generated.
    pub resources: SkillFiles,
}

impl Skill {
    /// A skill entry.
    pub fn new(
        uri: impl Into<String>,
        frontmatter: Map<String, Value>,
        resources: SkillFiles,
    ) -> Self {
        Self {
            uri: uri.into(),
            frontmatter,
            resources,
        }
    }

    /// The frontmatter's `name` (empty when missing).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The frontmatter's `description` (empty when missing).
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The skill's root directory: its `SKILL.md` URI without `/SKILL.md`.
    pub fn root(&self) -> Option<&str> {
        self.uri.strip_suffix("/SKILL.md")
    }

    /// The manifest entry of `uri`, when the skill lists its files.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillFiles::Listed(files) => files.iter().find(|f| f.uri == uri),
            SkillFiles::Dynamic => None,
        }
    }
}

/// A skill's files: the complete manifest, or `"dynamic"`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SkillFiles {
    /// Every file of the skill (its `SKILL.md` included), each once.
    Listed(Vec<SkillFile>),
    /// Generated content: no stable digests are published.
    Dynamic,
}

impl Serialize for SkillFiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Listed(files) => files.serialize(s),
            Self::Dynamic => s.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillFiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Listed(Vec<SkillFile>),
            Word(String),
        }
        match Wire::deserialize(d)? {
            Wire::Listed(files) => Ok(Self::Listed(files)),
            Wire::Word(w) if w == "dynamic" => Ok(Self::Dynamic),
            Wire::Word(w) => Err(de::Error::custom(format!(
                "resources is {w:?}: neither a list of files nor \"dynamic\""
            ))),
        }
    }
}

/// One file of a skill, with the digest and size of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hexadecimal digits.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

impl SkillFile {
    /// The entry of a file holding `bytes`.
    pub fn of(uri: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            uri: uri.into(),
            digest: digest(bytes),
            size: bytes.len() as u64,
        }
    }
}

/// The digest of `bytes` as skill manifests write it: `sha256:` and 64
/// lowercase hexadecimal digits.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_reads_and_writes_both_forms_of_resources() {
        let listed = json!({
            "uri": "skill://git-workflow/SKILL.md",
            "frontmatter": {"name": "git-workflow", "description": "Branch and commit"},
            "resources": [{"uri": "skill://git-workflow/SKILL.md", "digest": digest(b"x"), "size": 1}],
        });
        let skill: Skill = serde_json::from_value(listed.clone()).unwrap();
        assert_eq!(skill.name(), "git-workflow");
        assert_eq!(skill.root(), Some("skill://git-workflow"));
        assert_eq!(skill.file("skill://git-workflow/SKILL.md").unwrap().size, 1);
        assert_eq!(serde_json::to_value(&skill).unwrap(), listed);
        let dynamic = json!({"uri": "skill://d/SKILL.md", "frontmatter": {"name": "d"}, "resources": "dynamic"});
        let skill: Skill = serde_json::from_value(dynamic.clone()).unwrap();
        assert_eq!(skill.resources, SkillFiles::Dynamic);
        assert_eq!(serde_json::to_value(&skill).unwrap(), dynamic);
        for bad in [json!("static"), json!(null), json!({})] {
            let v = json!({"uri": "skill://d/SKILL.md", "frontmatter": {}, "resources": bad});
            assert!(serde_json::from_value::<Skill>(v).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_digest_is_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
