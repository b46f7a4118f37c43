//! The Skills extension (`io.modelcontextprotocol/skills`): Agent Skills
//! served over MCP.
//!
//! A skill is a directory of files with a `SKILL.md` at its root, whose YAML
//! frontmatter names and describes it. A server holding a [`Skills`] set
//! (given with [`ServerBuilder::skills`](crate::server::ServerBuilder::skills))
//! serves every file as a resource under `skill://<skill-path>/<file-path>`,
//! declares the extension with `directoryRead: true`, and answers
//! `skills/list` (every skill's [`Skill`] entry: frontmatter and a manifest
//! of its files with SHA-256 digests and sizes), `skills/get` (one entry by
//! its `SKILL.md` URI) and `resources/directory/read` (a directory's direct
//! children). Nothing is declared or served unless a set is given.
//!
//! With the `client` feature, the client lists and gets entries and loads a
//! skill only when asked, verifying every file it reads against the entry:
//! its size, its digest and, for `SKILL.md`, its frontmatter.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let skills = snodo::skills::Skills::from_dir("skills")?;
//! let server = snodo::Server::builder("docs", "1.0.0").skills(skills).build()?;
//! # let _ = server; Ok(()) }
//! ```

mod entry;
mod frontmatter;
mod tree;

pub use entry::{Skill, SkillFile, SkillFiles, digest};
pub use frontmatter::{
    FrontmatterError, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, MAX_FRONTMATTER_VALUES,
    frontmatter,
};
pub(crate) use tree::{Child, Content, Served};
pub use tree::{
    DIRECTORY_MIME, MAX_FILES_PER_SKILL, MAX_SKILL_BYTES, MAX_TREE_DEPTH, Skills, SkillsError,
};

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";
