//! `snodo skills` against `snodo demo --skills DIR` over stdio: the skills
//! listed, one fetched by name and written below `--out` byte for byte, one
//! fetched by URI, and the refusals (no such skill, a server without skills).

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use tokio::process::Command;

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");
const TREE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../snodo/tests/skills_tree");

async fn snodo(args: &[&str]) -> Output {
    let config = std::env::temp_dir().join(format!("snodo-cli-skills-{}", std::process::id()));
    tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(SNODO)
            .args(args)
            .env("SNODO_CONFIG_DIR", &config)
            .env("COLUMNS", "1000")
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("the command ends within 60 s")
    .unwrap()
}

fn demo() -> String {
    format!("{SNODO} demo --stdio --skills {TREE}")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[tokio::test]
async fn skills_are_listed_with_their_files() {
    let out = snodo(&["skills", &demo()]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines[0].starts_with("NAME"), "{stdout}");
    assert!(
        lines[1].starts_with("refunds ")
            && lines[1].contains("skill://acme/billing/refunds/SKILL.md")
    );
    assert!(lines[1].contains("1 (130 bytes)"), "{stdout}");
    assert!(
        lines[2].starts_with("pdf-processing ") && lines[2].contains("4 (280 bytes)"),
        "{stdout}"
    );

    let out = snodo(&["skills", "--json", &demo()]).await;
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["skills"][1]["uri"], "skill://pdf-processing/SKILL.md");
    assert_eq!(
        v["skills"][1]["resources"][1]["digest"],
        "sha256:abe1484651268d31d285247fb6e48866a4a4c6654e5bf0008e3228f12ccd7195"
    );
}

#[tokio::test]
async fn a_skill_is_fetched_by_name_into_a_directory_byte_for_byte() {
    let dir = std::env::temp_dir().join(format!("snodo-cli-skills-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.display().to_string();
    let out = snodo(&["skills", &demo(), "pdf-processing", "--out", &dir_arg]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let source = Path::new(TREE).join("pdf-processing");
    for file in [
        "SKILL.md",
        "references/FORMS.md",
        "templates/invoice.md",
        "templates/regional/eu-invoice.md",
    ] {
        assert_eq!(
            std::fs::read(dir.join(file)).unwrap(),
            std::fs::read(source.join(file)).unwrap(),
            "{file}"
        );
        assert!(text(&out.stdout).contains(file), "{}", text(&out.stdout));
    }
    assert!(!dir.join(".hidden").exists());
    std::fs::remove_dir_all(&dir).unwrap();

    // Without --out: the SKILL.md text, and nothing else read.
    let out = snodo(&["skills", &demo(), "skill://acme/billing/refunds/SKILL.md"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{}\n",
            std::fs::read_to_string(Path::new(TREE).join("acme/billing/refunds/SKILL.md")).unwrap()
        )
    );
}

#[tokio::test]
async fn an_unknown_skill_or_a_server_without_skills_is_refused() {
    let out = snodo(&["skills", &demo(), "nope"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no skill named nope is listed"),
        "{}",
        text(&out.stderr)
    );
    let out = snodo(&["skills", &demo(), "skill://nope/SKILL.md"]).await;
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("No skill is served at skill://nope/SKILL.md"));
    let plain = format!("{SNODO} demo --stdio");
    let out = snodo(&["skills", &plain]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("does not serve skills"),
        "{}",
        text(&out.stderr)
    );
    let out = snodo(&["skills", &demo(), "--out", "x"]).await;
    assert_eq!(out.status.code(), Some(2), "--out needs a skill");
}
