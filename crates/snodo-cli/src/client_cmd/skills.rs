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
        if matches!(skill.entry().resources, SkillFiles::Dynamic) {
            eprintln!(
                "the skill's files are generated (\"dynamic\"): only its SKILL.md is written"
            );
        }
        // Every path is checked and every file read and verified before
        // anything is written; SKILL.md last.
        let root = skill.entry().root().unwrap_or_default().to_owned();
        let mut verified = Vec::new();
        let mut seen = std::collections::HashSet::new();
        seen.insert("skill.md".to_owned());
        for uri in files.iter().filter(|u| **u != skill.entry().uri) {
            let relative = uri
                .strip_prefix(&root)
                .and_then(|r| r.strip_prefix('/'))
                .ok_or_else(|| {
                    Failure::from_message(format!("{} is outside the skill", escape::line(uri)))
                })?;
            let path = relative_path(relative)?;
            if !seen.insert(path.to_string_lossy().to_lowercase()) {
                return Err(Failure::from_message(format!(
                    "the skill names two files at {} (letter case aside)",
                    escape::line(&path.display().to_string())
                )));
            }
            verified.push((path, skill.read(client, uri).await?));
        }
        verified.push((PathBuf::from("SKILL.md"), skill.text().as_bytes().to_vec()));
        written = write_all(dir, &verified)?;
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

/// `relative` (a `/`-separated, percent-encoded path in the skill) as a
/// relative path: each segment decoded and checked (no empty, `.` or `..`
/// segment, no separator or NUL).
fn relative_path(relative: &str) -> Result<PathBuf, Failure> {
    let mut path = PathBuf::new();
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
    Ok(path)
}

/// Creates `dir` (which must not exist) and writes every file below it,
/// each new (never over or through something already there); on a failure
/// `dir` is removed again.
fn write_all(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<Vec<PathBuf>, Failure> {
    std::fs::create_dir(dir).map_err(|e| {
        Failure::from_message(format!(
            "--out {}: {e} (give a directory that does not exist yet)",
            dir.display()
        ))
    })?;
    let write = |relative: &Path, bytes: &[u8]| -> Result<PathBuf, Failure> {
        use std::io::Write as _;
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, &e))?;
        }
        let mut file = std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io(&path, &e))?;
        file.write_all(bytes).map_err(|e| io(&path, &e))?;
        Ok(path)
    };
    let mut written = Vec::new();
    for (relative, bytes) in files {
        match write(relative, bytes) {
            Ok(path) => written.push(path),
            Err(e) => {
                let _ = std::fs::remove_dir_all(dir);
                return Err(e);
            }
        }
    }
    Ok(written)
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
        let p =
            relative_path("references/FORMS%20v2.md").unwrap_or_else(|f| panic!("{}", f.message()));
        assert_eq!(p, Path::new("references").join("FORMS v2.md"));
        for bad in ["../x", "a/%2E%2E/x", "a//b", "a%2Fb", "a%00b", "./x"] {
            assert!(relative_path(bad).is_err(), "{bad}");
        }
        let dir = std::env::temp_dir().join(format!("snodo-skills-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = vec![
            (PathBuf::from("a/b"), b"1".to_vec()),
            (PathBuf::from("c"), b"2".to_vec()),
        ];
        let written = write_all(&dir, &files).unwrap_or_else(|f| panic!("{}", f.message()));
        assert_eq!(written, [dir.join("a/b"), dir.join("c")]);
        assert_eq!(std::fs::read(dir.join("a/b")).unwrap(), b"1");
        let e = write_all(&dir, &files).err().unwrap();
        assert!(
            e.message().contains("does not exist yet"),
            "{}",
            e.message()
        );
        std::fs::remove_dir_all(&dir).unwrap();
        // Two files at one path: nothing is left behind.
        let twice = vec![
            (PathBuf::from("x"), b"1".to_vec()),
            (PathBuf::from("x"), b"2".to_vec()),
        ];
        assert!(write_all(&dir, &twice).is_err());
        assert!(!dir.exists());
    }
}
