//! `snodo demo --issuer`, `snodo login`, the client commands' stored tokens
//! and `snodo logout`, against a real OpenID Connect provider (oidc-provider
//! on 127.0.0.1). Ignored by a plain `cargo test`: `interop/oauth/run.sh`
//! installs the provider and runs them with `--ignored`.

#[path = "../../snodo/tests/oauth_support/mod.rs"]
mod oauth_support;
mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use oauth_support::{Provider, browse};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

/// `snodo demo --http 127.0.0.1:0 --issuer ISSUER` and its URL.
async fn demo(issuer: &str) -> (Child, String) {
    support::spawn_demo(&["--issuer", issuer]).await
}

/// Runs a client command with the config folder `config`: exit code,
/// stdout, stderr.
async fn snodo(config: &Path, args: &[&str]) -> (i32, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(SNODO)
            .args(args)
            .env("SNODO_CONFIG_DIR", config)
            .env_remove("SNODO_TOKEN")
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the command ends")
    .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `snodo login URL --no-browser`, with [`browse`] as the person.
async fn login(config: &Path, url: &str, user: &'static str) -> (i32, String) {
    let mut child = Command::new(SNODO)
        .args(["login", url, "--no-browser"])
        .env("SNODO_CONFIG_DIR", config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut authorize = None;
    let mut line = String::new();
    while authorize.is_none() {
        line.clear();
        let n = tokio::time::timeout(Duration::from_secs(30), stderr.read_line(&mut line))
            .await
            .expect("the login prints its URL")
            .unwrap();
        assert!(n > 0, "the login ended before printing its URL");
        if line.trim_start().starts_with("http") {
            authorize = Some(line.trim().to_string());
        }
    }
    browse(&authorize.unwrap(), user).await;
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the login ends")
        .unwrap();
    (status.code().unwrap_or(-1), out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn login_stores_tokens_that_the_commands_use_refresh_and_logout_forgets() {
    let p = Provider::start(&[]).await;
    let (_demo, url) = demo(&p.issuer).await;
    let config = std::env::temp_dir().join(format!("snodo-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&config);

    // Not logged in: exit 7, and the hint.
    let (code, _, err) = snodo(&config, &["tools", &url, "--no-input"]).await;
    assert_eq!(code, 7, "{err}");
    assert!(err.contains(&format!("snodo login {url}")), "{err}");

    // Log in as grace through the provider's own pages.
    let (code, out) = login(&config, &url, "grace").await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("Logged in to {url} (issuer {}", p.issuer)),
        "{out}"
    );
    assert!(out.contains("demo:read"), "{out}");
    let files: Vec<_> = std::fs::read_dir(config.join("oauth"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(files.len(), 1, "one file for the one issuer");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    // The commands use the stored token.
    let (code, out, err) = snodo(&config, &["call", &url, "greet", "name=Ada", "--no-input"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Ada"), "{out}");

    // An access token that no longer works is refreshed with the stored
    // refresh token (and the new tokens kept).
    let path = files[0].path();
    let mut state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let before = state["tokens"]["refresh_token"].clone();
    assert!(before.is_string(), "a refresh token was issued: {state}");
    state["tokens"]["access_token"] = "revoked-or-expired".into();
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    let (code, out, err) = snodo(&config, &["call", &url, "greet", "name=Bo", "--no-input"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Bo"), "{out}");
    let after: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_ne!(after["tokens"]["access_token"], "revoked-or-expired");

    // confirm_delete needs files:write, which the login did not ask for: a
    // command without a terminal does not start a login, it says so.
    let (code, _, err) = snodo(
        &config,
        &["call", &url, "confirm_delete", "path=/tmp/x", "--no-input"],
    )
    .await;
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains("insufficient") || err.contains("snodo login"),
        "{err}"
    );

    // --token and client credentials.
    let token = p
        .token("svc", "svc-secret", &url, "demo:read files:write")
        .await
        .unwrap();
    let (code, out, err) = snodo(&config, &["tools", &url, "--no-input", "--token", &token]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("confirm_delete"), "{out}");
    let (code, _, err) = snodo(
        &config,
        &[
            "call",
            &url,
            "greet",
            "name=Cy",
            "--no-input",
            "--client-id",
            "svc",
            "--client-secret",
            "svc-secret",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = snodo(&config, &["tools", &url, "--no-input", "--token", "forged"]).await;
    assert_eq!(code, 7, "{err}");
    assert!(!err.contains(&token));

    // Logout forgets the issuer's file.
    let (code, out, _) = snodo(&config, &["logout", &url]).await;
    assert_eq!(
        (code, out.trim()),
        (0, format!("Logged out of {url}").as_str())
    );
    let (code, _, _) = snodo(&config, &["tools", &url, "--no-input"]).await;
    assert_eq!(code, 7);
    let _ = std::fs::remove_dir_all(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn serve_stdio_reaches_a_protected_server_with_the_stored_login() {
    use tokio::io::AsyncWriteExt;
    let p = Provider::start(&[]).await;
    let (_demo, url) = demo(&p.issuer).await;
    let config = std::env::temp_dir().join(format!("snodo-serve-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&config);
    // Without a login the bridge cannot start, and says how to log in.
    let (code, _, err) = snodo(&config, &["serve", "--stdio", &url]).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("snodo login {url}")), "{err}");

    let (code, out) = login(&config, &url, "grace").await;
    assert_eq!(code, 0, "{out}");
    // A host spawns `snodo serve --stdio URL` and speaks the initialize era
    // over its pipes: the bridge calls the protected server with the token.
    let mut bridge = Command::new(SNODO)
        .args(["serve", "--stdio", &url])
        .env("SNODO_CONFIG_DIR", &config)
        .env_remove("SNODO_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = bridge.stdin.take().unwrap();
    stdin
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Serve"}}}"#,
                "\n",
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut lines = BufReader::new(bridge.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the bridge answers")
            .unwrap()
            .expect("the bridge keeps running");
        answers.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
    }
    assert_eq!(
        answers[0]["result"]["serverInfo"]["name"], "snodo-demo",
        "{answers:?}"
    );
    assert_eq!(
        answers[1]["result"]["content"][0]["text"], "Hello, Serve!",
        "{answers:?}"
    );
    let _ = std::fs::remove_dir_all(&config);
}
