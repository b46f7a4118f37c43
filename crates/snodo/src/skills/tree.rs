//! A set of skills held in memory: read from a directory, or added file by
//! file, each checked against the extension's rules and limits when added.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::entry::{Skill, SkillFile, SkillFiles};
use super::frontmatter::frontmatter;

/// The most files one skill may hold, its `SKILL.md` included.
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes one skill's files may hold together (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;
/// The deepest a skills directory is walked, in levels below its root.
pub const MAX_TREE_DEPTH: usize = 32;

/// The MIME type of a directory resource.
pub const DIRECTORY_MIME: &str = "inode/directory";

/// Why a skill could not be added.
#[derive(Debug)]
pub struct SkillsError {
    message: String,
    source: Option<std::io::Error>,
}

impl SkillsError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    fn io(path: &Path, source: std::io::Error) -> Self {
        Self {
            message: format!("{}: {source}", path.display()),
            source: Some(source),
        }
    }
}

impl fmt::Display for SkillsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SkillsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// What a served file holds.
#[derive(Debug)]
pub(crate) enum Content {
    Text(String),
    /// Base64.
    Blob(String),
}

/// One file served as a resource.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) uri: String,
    /// Its resource name (unique in the set).
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) mime: &'static str,
    pub(crate) size: u64,
    /// Its digest, as manifests write it.
    pub(crate) digest: String,
    pub(crate) content: Content,
}

/// A child in a directory listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Child {
    Directory(String),
    /// A served file's URI.
    File(String),
}

/// Skills held in memory, ready to serve with
/// [`ServerBuilder::skills`](crate::server::ServerBuilder::skills): their
/// files become resources under `skill://`, and the server answers
/// `skills/list`, `skills/get` and `resources/directory/read`.
///
/// Every skill is checked as it is added: its `SKILL.md` starts with YAML
/// frontmatter naming it (`name`, `description`), the last segment of its
/// path is that name and follows the Agent Skills naming rules, and it holds
/// at most [`MAX_FILES_PER_SKILL`] files and [`MAX_SKILL_BYTES`] bytes.
///
/// ```
/// use snodo::skills::Skills;
///
/// let skills = Skills::new()
///     .with_skill(
///         "git-workflow",
///         [("SKILL.md", b"---\nname: git-workflow\ndescription: Branch and commit\n---\nUse feature branches.\n".to_vec())],
///     )
///     .unwrap();
/// assert_eq!(skills.entries()[0].uri, "skill://git-workflow/SKILL.md");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Skills {
    inner: Arc<Inner>,
}

#[derive(Debug, Default, Clone)]
struct Inner {
    /// By `SKILL.md` URI.
    skills: BTreeMap<String, Skill>,
    /// By URI.
    files: BTreeMap<String, Arc<Served>>,
    /// By URI: the direct children of each directory.
    directories: BTreeMap<String, Vec<Child>>,
}

impl Skills {
    /// No skills.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every skill below `root`: each directory holding a `SKILL.md` is a
    /// skill whose path is the directory's below `root` (`root/acme/refunds`
    /// is `skill://acme/refunds/SKILL.md`), with every file below it
    /// (nested skills' files included). Names starting with `.` are left
    /// out; a symbolic link, a name that is not UTF-8, or a tree deeper than
    /// [`MAX_TREE_DEPTH`] is refused.
    pub fn from_dir(root: impl AsRef<Path>) -> Result<Self, SkillsError> {
        let root = root.as_ref();
        let mut files = Vec::new();
        walk(root, root, 0, &mut files)?;
        files.sort();
        let mut skill_dirs: Vec<String> = files
            .iter()
            .filter_map(|(rel, _)| rel.strip_suffix("/SKILL.md").map(str::to_owned))
            .collect();
        if files.iter().any(|(rel, _)| rel == "SKILL.md") {
            return Err(SkillsError::new(format!(
                "{}: a SKILL.md at the root: each skill is a directory below it",
                root.display()
            )));
        }
        skill_dirs.sort();
        let mut skills = Self::new();
        for dir in skill_dirs {
            let prefix = format!("{dir}/");
            let mut own = Vec::new();
            for (rel, path) in &files {
                if let Some(inside) = rel.strip_prefix(&prefix) {
                    let len = std::fs::metadata(path)
                        .map_err(|e| SkillsError::io(path, e))?
                        .len();
                    if len > MAX_SKILL_BYTES {
                        return Err(SkillsError::new(format!(
                            "{}: larger than the {MAX_SKILL_BYTES} bytes a skill may hold",
                            path.display()
                        )));
                    }
                    let bytes = std::fs::read(path).map_err(|e| SkillsError::io(path, e))?;
                    own.push((inside.to_owned(), bytes));
                }
            }
            skills = skills.with_skill(&dir, own)?;
        }
        if skills.inner.skills.is_empty() {
            return Err(SkillsError::new(format!(
                "{}: no skill found (a skill is a directory holding a SKILL.md)",
                root.display()
            )));
        }
        Ok(skills)
    }

    /// Adds the skill at `path` (`/`-separated, e.g. `acme/billing/refunds`)
    /// made of `files`: paths relative to the skill's directory, `SKILL.md`
    /// among them, with their bytes.
    pub fn with_skill<P, B>(
        self,
        path: &str,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<Self, SkillsError>
    where
        P: AsRef<str>,
        B: Into<Vec<u8>>,
    {
        let mut inner = Arc::unwrap_or_clone(self.inner);
        add(&mut inner, path, files)?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// Every skill's entry, in URI order.
    pub fn entries(&self) -> Vec<&Skill> {
        self.inner.skills.values().collect()
    }

    /// The entry of the skill whose `SKILL.md` is at `uri`.
    pub fn get(&self, uri: &str) -> Option<&Skill> {
        self.inner.skills.get(uri)
    }

    /// Whether no skill is held.
    pub fn is_empty(&self) -> bool {
        self.inner.skills.is_empty()
    }

    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<Served>> {
        self.inner.files.values()
    }

    /// The files below directory `dir`.
    pub(crate) fn files_below(&self, dir: &str) -> impl Iterator<Item = &Arc<Served>> {
        let start = format!("{dir}/");
        self.inner
            .files
            .range(start.clone()..)
            .take_while(move |(uri, _)| uri.starts_with(&start))
            .map(|(_, f)| f)
    }

    pub(crate) fn file(&self, uri: &str) -> Option<&Arc<Served>> {
        self.inner.files.get(uri)
    }

    pub(crate) fn directory(&self, uri: &str) -> Option<&[Child]> {
        self.inner.directories.get(uri).map(Vec::as_slice)
    }
}

/// Collects every file below `dir` as (path relative to `root` with `/`, path).
fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), SkillsError> {
    if depth > MAX_TREE_DEPTH {
        return Err(SkillsError::new(format!(
            "{}: deeper than {MAX_TREE_DEPTH} levels",
            dir.display()
        )));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| SkillsError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| SkillsError::io(dir, e))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(SkillsError::new(format!(
                "{}: a name that is not UTF-8",
                path.display()
            )));
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| SkillsError::io(&path, e))?;
        if kind.is_symlink() {
            return Err(SkillsError::new(format!(
                "{}: a symbolic link (skills are served from plain files only)",
                path.display()
            )));
        }
        if kind.is_dir() {
            walk(root, &path, depth + 1, out)?;
        } else if kind.is_file() {
            let rel = path
                .strip_prefix(root)
                .map_err(|_| SkillsError::new(format!("{}: outside the root", path.display())))?;
            let rel: Vec<&str> = rel.iter().filter_map(|s| s.to_str()).collect();
            out.push((rel.join("/"), path));
        }
    }
    Ok(())
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 lowercase
/// letters, digits and hyphens, no hyphen first, last or twice in a row.
pub(crate) fn is_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A path segment as written in a URI: characters outside RFC 3986's
/// `pchar` percent-encoded.
fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `/`-separated path `path` as URI segments; empty, `.` and `..`
/// segments are refused. The first of a skill path is the URI's authority:
/// `:` and `@` are encoded there too.
fn segments(path: &str, what: &str) -> Result<Vec<String>, SkillsError> {
    path.split('/')
        .enumerate()
        .map(|(i, s)| match s {
            "" | "." | ".." => Err(SkillsError::new(format!(
                "{what} {path:?}: empty, . and .. segments are not allowed"
            ))),
            s if i == 0 && what == "skill path" => {
                Ok(segment(s).replace(':', "%3A").replace('@', "%40"))
            }
            s => Ok(segment(s)),
        })
        .collect()
}

/// The MIME type served for a file name.
fn mime_of(name: &str, text: bool) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("xml") => "application/xml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("pdf") => "application/pdf",
        _ if text => "text/plain",
        _ => "application/octet-stream",
    }
}

fn add<P, B>(
    inner: &mut Inner,
    path: &str,
    files: impl IntoIterator<Item = (P, B)>,
) -> Result<(), SkillsError>
where
    P: AsRef<str>,
    B: Into<Vec<u8>>,
{
    let path_segments = segments(path, "skill path")?;
    let root = format!("skill://{}", path_segments.join("/"));
    let uri = format!("{root}/SKILL.md");
    if inner.skills.contains_key(&uri) {
        return Err(SkillsError::new(format!("skill {path:?} is added twice")));
    }
    let last = path.rsplit('/').next().unwrap_or_default();
    let mut listed = Vec::new();
    let mut total: u64 = 0;
    let mut fm = None;
    let mut new_files = Vec::new();
    for (file, bytes) in files {
        let file = file.as_ref();
        let bytes: Vec<u8> = bytes.into();
        let file_uri = format!("{root}/{}", segments(file, "file path")?.join("/"));
        if listed.iter().any(|f: &SkillFile| f.uri == file_uri) {
            return Err(SkillsError::new(format!(
                "skill {path:?}: file {file:?} is given twice"
            )));
        }
        let entry = SkillFile::of(&file_uri, &bytes);
        let digest = entry.digest.clone();
        listed.push(entry);
        if listed.len() > MAX_FILES_PER_SKILL {
            return Err(SkillsError::new(format!(
                "skill {path:?} holds more than {MAX_FILES_PER_SKILL} files"
            )));
        }
        total += bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            return Err(SkillsError::new(format!(
                "skill {path:?} holds more than {MAX_SKILL_BYTES} bytes"
            )));
        }
        let size = bytes.len() as u64;
        let (content, text) = match String::from_utf8(bytes) {
            Ok(text) => (Content::Text(text), true),
            Err(e) => {
                use base64::Engine;
                let b64 = base64::engine::general_purpose::STANDARD.encode(e.as_bytes());
                (Content::Blob(b64), false)
            }
        };
        if file == "SKILL.md" {
            let Content::Text(text) = &content else {
                return Err(SkillsError::new(format!(
                    "skill {path:?}: SKILL.md is not UTF-8 text"
                )));
            };
            fm = Some(
                frontmatter(text).map_err(|e| SkillsError::new(format!("skill {path:?}: {e}")))?,
            );
        }
        let name = file.rsplit('/').next().unwrap_or(file);
        new_files.push(Served {
            uri: file_uri,
            name: format!("{path}/{file}"),
            description: None,
            mime: mime_of(name, text),
            size,
            digest,
            content,
        });
    }
    let fm = fm.ok_or_else(|| SkillsError::new(format!("skill {path:?} has no SKILL.md")))?;
    let field = |key: &str| {
        fm.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let (Some(name), Some(description)) = (field("name"), field("description")) else {
        return Err(SkillsError::new(format!(
            "skill {path:?}: the frontmatter needs a name and a description"
        )));
    };
    if name != last {
        return Err(SkillsError::new(format!(
            "skill {path:?}: the frontmatter names it {name:?}, not {last:?} (the last segment of its path)"
        )));
    }
    if !is_skill_name(name) {
        return Err(SkillsError::new(format!(
            "skill {path:?}: {name:?} is not a skill name (1-64 lowercase letters, digits and single hyphens, no hyphen first or last)"
        )));
    }
    let resource_name = if inner.skills.values().any(|s| s.name() == name) {
        path.to_owned()
    } else {
        name.to_owned()
    };
    let description = description.to_owned();
    for mut served in new_files {
        if served.uri == uri {
            served.name = resource_name.clone();
            served.description = Some(description.clone());
        }
        match inner.files.get(&served.uri) {
            // A nested skill's files belong to its enclosing skill too: the
            // same bytes, or the skills would disagree on its digest.
            Some(existing) if existing.digest == served.digest => {
                if served.uri == uri {
                    inner.files.insert(served.uri.clone(), Arc::new(served));
                }
            }
            Some(_) => {
                return Err(SkillsError::new(format!(
                    "skill {path:?}: {} is served with other bytes already",
                    served.uri
                )));
            }
            None => {
                place(&mut inner.directories, &served.uri);
                inner.files.insert(served.uri.clone(), Arc::new(served));
            }
        }
    }
    let fm: Map<String, Value> = fm;
    inner
        .skills
        .insert(uri.clone(), Skill::new(uri, fm, SkillFiles::Listed(listed)));
    Ok(())
}

/// Enters `uri` in its directory's children, and each directory in its
/// parent's, up to the authority.
fn place(directories: &mut BTreeMap<String, Vec<Child>>, uri: &str) {
    let mut child = Child::File(uri.to_owned());
    let mut current = uri.to_owned();
    while let Some((parent, _)) = current.rsplit_once('/') {
        if parent.len() <= "skill:/".len() {
            break;
        }
        let children = directories.entry(parent.to_owned()).or_default();
        let known = children.contains(&child);
        if !known {
            children.push(child);
            children.sort();
        }
        current = parent.to_owned();
        child = Child::Directory(current.clone());
        if known {
            break;
        }
    }
}
