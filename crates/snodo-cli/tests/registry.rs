//! `snodo registry init`: server.json from a running server's own answer,
//! over stdio and over HTTP, valid against the registry's published schema
//! (vendored unmodified in tests/schemas/, its SHA-256 checked); and the
//! refusals (a name that is not reverse-DNS, a description over 100
//! characters, a file already there, an mcpb package without its digest).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;

mod support;

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");
const SCHEMA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/schemas/server.schema.json"
);
const SCHEMA_SHA256: &str = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0";

async fn snodo(args: &[&str]) -> Output {
    tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(SNODO)
            .args(args)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the command ends within 60 s")
    .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    support::fresh_dir(&format!("registry-{name}"))
}

/// Panics unless `path` holds a server.json valid against the schema.
fn valid(path: &Path) -> Value {
    let bytes = std::fs::read(SCHEMA).unwrap();
    assert_eq!(
        snodo::skills::digest(&bytes),
        format!("sha256:{SCHEMA_SHA256}"),
        "the vendored schema is the published one"
    );
    let schema: Value = serde_json::from_slice(&bytes).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let entry: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&entry)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{entry:#}");
    entry
}

#[tokio::test]
async fn a_stdio_server_is_described_with_its_packages() {
    let dir = scratch("stdio");
    let out = dir.join("server.json").display().to_string();
    let run = snodo(&[
        "registry",
        "init",
        "-o",
        &out,
        "--name",
        "io.github.snodo/demo",
        "--description",
        "The snodo demo server",
        "--repository",
        "https://github.com/snodo/snodo",
        "--package",
        "npm:@snodo/demo@0.1.0",
        "--package",
        "mcpb:https://github.com/snodo/snodo/releases/download/v0.1.0/demo.mcpb@0.1.0",
        "--sha256",
        "9897b279ff66ace402a51bfd6d499daabbf5064868aae5bd281619de85080bff",
        "--package",
        "oci:ghcr.io/snodo/demo:0.1.0@sha256:9897b279ff66ace402a51bfd6d499daabbf5064868aae5bd281619de85080bff",
        "--package-arg",
        "demo",
        "--package-arg",
        "--stdio",
        "--stdio",
        SNODO,
        "demo",
        "--stdio",
    ])
    .await;
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let entry = valid(Path::new(&out));
    let args = json!([{"type": "positional", "value": "demo"}, {"type": "positional", "value": "--stdio"}]);
    assert_eq!(
        entry,
        json!({
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": "io.github.snodo/demo",
            "description": "The snodo demo server",
            "version": env!("CARGO_PKG_VERSION"),
            "repository": {"url": "https://github.com/snodo/snodo", "source": "github"},
            "packages": [
                {"registryType": "npm", "identifier": "@snodo/demo", "version": "0.1.0",
                 "transport": {"type": "stdio"}, "packageArguments": args},
                {"registryType": "mcpb",
                 "identifier": "https://github.com/snodo/snodo/releases/download/v0.1.0/demo.mcpb",
                 "version": "0.1.0",
                 "fileSha256": "9897b279ff66ace402a51bfd6d499daabbf5064868aae5bd281619de85080bff",
                 "transport": {"type": "stdio"}},
                {"registryType": "oci",
                 "identifier": "ghcr.io/snodo/demo:0.1.0@sha256:9897b279ff66ace402a51bfd6d499daabbf5064868aae5bd281619de85080bff",
                 "transport": {"type": "stdio"}, "packageArguments": args},
            ],
        })
    );

    // The file is not replaced without --force.
    let again = snodo(&[
        "registry",
        "init",
        "-o",
        &out,
        "--name",
        "io.github.snodo/demo",
        "--description",
        "d",
        "--stdio",
        SNODO,
        "demo",
        "--stdio",
    ])
    .await;
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists (--force replaces it)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn an_http_server_is_a_remote() {
    let (_demo, url) = support::spawn_demo(&[]).await;
    let dir = scratch("http");
    let out = dir.join("entry.json").display().to_string();
    let run = snodo(&[
        "registry",
        "init",
        "-o",
        &out,
        "--name",
        "io.github.snodo/demo",
        "--description",
        "The snodo demo server",
        "--http",
        &url,
    ])
    .await;
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let entry = valid(Path::new(&out));
    assert_eq!(
        entry["remotes"],
        json!([{"type": "streamable-http", "url": url}])
    );
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
    assert!(entry.get("packages").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn what_the_registry_would_refuse_is_refused_with_the_reason() {
    let dir = scratch("refusals");
    let out = dir.join("server.json").display().to_string();
    let cases: [(&[&str], &str); 4] = [
        (&["--description", "d"], "is not a registry name"),
        (
            &["--name", "io.github.snodo/demo"],
            "over the registry's 100",
        ),
        (
            &[
                "--name",
                "io.github.snodo/demo",
                "--description",
                "d",
                "--package",
                "mcpb:https://x/y.mcpb",
            ],
            "needs --sha256",
        ),
        (
            &[
                "--name",
                "io.github.snodo/demo",
                "--description",
                "d",
                "--package",
                "npm",
            ],
            "expected TYPE:IDENTIFIER",
        ),
    ];
    for (options, reason) in cases {
        let mut args = vec!["registry", "init", "-o", &out];
        args.extend_from_slice(options);
        args.extend_from_slice(&["--stdio", SNODO, "demo", "--stdio"]);
        let run = snodo(&args).await;
        assert_eq!(run.status.code(), Some(1), "{options:?}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains(reason), "{options:?}: {err}");
        assert!(!Path::new(&out).exists(), "{options:?}: nothing written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_schema_check_can_fail() {
    let schema: Value = serde_json::from_slice(&std::fs::read(SCHEMA).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good = json!({"name": "io.github.a/b", "description": "d", "version": "1.0.0"});
    assert!(validator.is_valid(&good));
    for bad in [
        json!({"name": "no-slash", "description": "d", "version": "1.0.0"}),
        json!({"name": "io.github.a/b", "description": "d".repeat(101), "version": "1.0.0"}),
        json!({"name": "io.github.a/b", "description": "d", "version": "1.0.0",
            "packages": [{"registryType": "npm", "identifier": "x", "version": "latest",
                "transport": {"type": "stdio"}}]}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}
