//! `snodo skills`: a server's skills listed, or one fetched, every file it
//! reads checked against the skill's entry.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use snodo::client::Client;
use snodo::skills::{Skill, SkillFiles};

use super::args::SkillsArgs;
use super::failure::Failure;
use super::output::print_json;
use super::render::{self, Style};
use crate::escape;

/// Runs `snodo skills` on a connected client.
pub(super) async fn run(client: &Client, c: &SkillsArgs, style: &Style) -> Result<u8, Failure> {
    if !client.serves_skills() {
        return Err(Failure::usage(format!(
            "{} does not serve skills (it does not declare {})",
            escape::line(&c.target),
            snodo::skills::EXTENSION
        )));
    }
    let Some(wanted) = &c.skill else {
        let skills = client.list_skills().await?;
        if c.opts.json {
            let skills: Vec<Value> = skills.iter().map(to_value).collect();
            print_json(&json!({ "skills": skills }));
        } else {
            render::skills(style, &skills);
        }
        return Ok(0);
    };
    let entry = find(client, wanted).await?;
    let files: Vec<String> = match &entry.resources {
        SkillFiles::Listed(files) => files.iter().map(|f| f.uri.clone()).collect(),
        _ => Vec::new(),
    };
    let skill = client.load_skill(entry).await?;
    let mut written = Vec::new();
    if let Some(dir) = &c.out {
        // Every file is read and verified before any is written.
        let root = skill.entry().root().unwrap_or_default().to_owned();
        let mut verified = vec![("SKILL.md".to_owned(), skill.text().as_bytes().to_vec())];
        for uri in files.iter().filter(|u| **u != skill.entry().uri) {
            let relative = uri
                .strip_prefix(&root)
                .and_then(|r| r.strip_prefix('/'))
                .ok_or_else(|| {
                    Failure::from_message(format!("{} is outside the skill", escape::line(uri)))
                })?;
            verified.push((relative.to_owned(), skill.read(client, uri).await?));
        }
        for (relative, bytes) in verified {
            written.push(write(dir, &relative, &bytes)?);
        }
    }
    if c.opts.json {
        let written: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        print_json(&json!({
            "skill": to_value(skill.entry()),
            "text": skill.text(),
            "written": written,
        }));
    } else if c.out.is_some() {
        for path in &written {
            outln!("{}", escape::line(&path.display().to_string()));
        }
    } else {
        outln!("{}", escape::block(skill.text()));
    }
    Ok(0)
}

fn to_value(skill: &Skill) -> Value {
    serde_json::to_value(skill).unwrap_or_default()
}

/// The entry of `wanted`: a `SKILL.md` URI (`skills/get`), or a name among
/// the listed skills.
async fn find(client: &Client, wanted: &str) -> Result<Skill, Failure> {
    if wanted.contains("://") {
        return Ok(client.get_skill(wanted).await?);
    }
    let mut skills: Vec<Skill> = client
        .list_skills()
        .await?
        .into_iter()
        .filter(|s| s.name() == wanted)
        .collect();
    match skills.len() {
        1 => Ok(skills.remove(0)),
        0 => Err(Failure::usage(format!(
            "no skill named {} is listed (snodo skills TARGET lists them; a URI reaches an unlisted one)",
            escape::line(wanted)
        ))),
        _ => {
            let uris: Vec<String> = skills
                .iter()
                .map(|s| escape::line(&s.uri).into_owned())
                .collect();
            Err(Failure::usage(format!(
                "several skills are named {}: give the URI of one ({})",
                escape::line(wanted),
                uris.join(", ")
            )))
        }
    }
}

/// Writes `bytes` at `relative` (a `/`-separated, percent-encoded path in
/// the skill) below `dir`: each segment decoded and checked (no empty, `.`
/// or `..` segment, no separator or NUL), never through a symbolic link.
fn write(dir: &Path, relative: &str, bytes: &[u8]) -> Result<PathBuf, Failure> {
    let mut path = dir.to_path_buf();
    for raw in relative.split('/') {
        let segment = decode(raw)
            .filter(|s| !matches!(s.as_str(), "" | "." | ".."))
            .filter(|s| !s.contains(['/', '\\', '\0']))
            .ok_or_else(|| {
                Failure::from_message(format!(
                    "the skill names a file {} that cannot be written safely",
                    escape::line(relative)
                ))
            })?;
        path.push(segment);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, &e))?;
    }
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(Failure::from_message(format!(
            "{} is a symbolic link: not written through",
            path.display()
        )));
    }
    std::fs::write(&path, bytes).map_err(|e| io(&path, &e))?;
    Ok(path)
}

fn io(path: &Path, e: &std::io::Error) -> Failure {
    Failure::from_message(format!("{}: {e}", path.display()))
}

/// A percent-encoded segment decoded, when it is UTF-8.
fn decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_decoded_and_never_leave_the_directory() {
        assert_eq!(decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(decode("%2e%2E").as_deref(), Some(".."));
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%f0"), None);
        let dir = std::env::temp_dir().join(format!("snodo-skills-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let p = write(&dir, "references/FORMS%20v2.md", b"x")
            .unwrap_or_else(|f| panic!("{}", f.message()));
        assert_eq!(p, dir.join("references").join("FORMS v2.md"));
        for bad in ["../x", "a/%2E%2E/x", "a//b", "a%2Fb", "a%00b", "./x"] {
            assert!(write(&dir, bad, b"x").is_err(), "{bad}");
        }
        std::os::unix::fs::symlink("/etc/hostname", dir.join("link")).unwrap();
        assert!(write(&dir, "link", b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
