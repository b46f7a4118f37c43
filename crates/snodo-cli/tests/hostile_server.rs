//! Every client command against a server whose every string carries
//! terminal escape sequences: what the commands print holds none of them
//! raw (no control character but the line feed and the tab, no bidi or
//! invisible formatting character), and shows them escaped; `--json`
//! prints the server's strings exactly, as JSON escapes.

mod hostile_support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use hostile_support::{Hostile, assert_inert, evil, shown, shown_start, unsafe_char};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

/// A fresh configuration folder for one test.
fn config_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snodo-cli-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a command printed.
struct Run {
    code: i32,
    out: String,
    err: String,
}

/// Runs a client command (stdin empty, not a terminal), checks that
/// nothing it printed is raw, and returns what it printed.
async fn snodo(config: &Path, args: &[&str]) -> Run {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(SNODO)
            .args(args)
            .env("SNODO_CONFIG_DIR", config)
            .env("COLUMNS", "1000")
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the command ends within 60 s")
    .unwrap();
    assert_inert(&format!("stdout of {args:?}"), &out.stdout);
    assert_inert(&format!("stderr of {args:?}"), &out.stderr);
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8(out.stdout).unwrap(),
        err: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Panics unless `text` holds every one of `parts`.
fn assert_holds(what: &str, text: &str, parts: &[String]) {
    for part in parts {
        assert!(
            text.contains(part.as_str()),
            "{what} lacks {part:?}:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discover_shows_the_server_identity_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("discover");
    let run = snodo(&dir, &["discover", &server.url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "discover",
        &run.out,
        &[
            shown("T-server-name"),
            shown("T-server-version"),
            shown("T-revision"),
            shown("T-capability"),
            shown("T-flag"),
            // Instructions are text: their lines stay lines.
            format!("The first line.\n{}", shown("T-instructions")),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listings_show_names_and_descriptions_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("listings");
    let url = server.url.as_str();

    let run = snodo(&dir, &["tools", url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "tools",
        &run.out,
        &[
            // A name is one line: its line breaks are escaped too.
            r"T-tool\x0d\x0aT-second-line\x1b]0;title\x07".into(),
            shown_start("T-arg"),
            format!("{}: {}", shown("T-title"), shown("T-description")),
        ],
    );
    assert!(
        !run.out.lines().any(|l| l.starts_with("T-second-line")),
        "{}",
        run.out
    );

    let run = snodo(&dir, &["resources", url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "resources",
        &run.out,
        &[
            shown_start("T-uri"),
            shown_start("T-resource-name"),
            shown("T-resource-description"),
            shown_start("T-template"),
            shown_start("T-template-name"),
            shown("T-template-description"),
        ],
    );

    let run = snodo(&dir, &["prompts", url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "prompts",
        &run.out,
        &[
            shown_start("T-prompt"),
            shown_start("T-required-arg"),
            shown("T-prompt-description"),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_shows_its_log_progress_and_result_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("call");
    let url = server.url.as_str();

    let run = snodo(&dir, &["call", url, "show", "--log-level", "debug"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "call show",
        &run.out,
        &[
            // A text block keeps its line breaks and tabs.
            format!("The first line.\n{}\tafter a tab", shown("T-text")),
            shown("T-image-mime"),
            shown("T-link-uri"),
            shown("T-link-name"),
            shown("T-embedded-uri"),
            shown("T-embedded-text"),
            shown("T-embedded-blob"),
            shown("T-embedded-mime"),
            shown("T-kind"),
            r"T-other\u001b]52;c;SGVsbG8=\u0007".into(),
        ],
    );
    assert_holds(
        "call show (stderr)",
        &run.err,
        &[
            format!(
                "[{}] {}: {}",
                shown("T-level"),
                shown("T-logger"),
                shown("T-log")
            ),
            r"T-log-key\u001b]52;c;SGVsbG8=\u0007".into(),
            format!("progress: 1/2 {}", shown("T-progress")),
        ],
    );

    let run = snodo(&dir, &["call", url, "structured"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "call structured",
        &run.out,
        &[r"T-structured-key\u001b]52;c;SGVsbG8=\u0007".into()],
    );

    let run = snodo(&dir, &["call", url, "broken"]).await;
    assert_eq!(run.code, 1, "{}", run.err);
    assert_holds("call broken", &run.out, &[shown("T-tool-error")]);

    // The form's default is accepted without asking, and echoed.
    let run = snodo(&dir, &["call", url, "ask", "--accept-defaults"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "call ask",
        &run.out,
        &[r"T-default\u001b]52;c;SGVsbG8=\u0007".into()],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_escaped_and_one_that_fails_its_entry_is_not_written() {
    let server = Hostile::start().await;
    let dir = config_dir("skills");
    let url = server.url.as_str();
    let run = snodo(&dir, &["skills", url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "skills",
        &run.out,
        &[
            shown_start("T-skill-name"),
            shown_start("skill://T-skill"),
            shown_start("T-skill-description"),
        ],
    );
    let out = dir.join("fetched");
    let uri = hostile_support::skill()["uri"].as_str().unwrap().to_owned();
    let out_arg = out.display().to_string();
    let run = snodo(&dir, &["skills", url, &uri, "--out", &out_arg]).await;
    assert_eq!(run.code, 6, "{}", run.err);
    assert_holds(
        "skills fetch",
        &run.err,
        &[
            shown_start("skill://T-skill"),
            "where the entry lists 3".into(),
        ],
    );
    assert!(
        !out.exists(),
        "nothing is written from a skill that fails its entry"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_from_the_server_are_shown_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("errors");
    let url = server.url.as_str();

    let run = snodo(&dir, &["call", url, "fail"]).await;
    assert_eq!(run.code, 3, "{}", run.err);
    assert_holds("call fail", &run.err, &[shown("T-error")]);

    let run = snodo(&dir, &["call", url, "crash"]).await;
    assert_eq!(run.code, 4, "{}", run.err);
    assert_holds("call crash", &run.err, &[shown("T-http-error")]);

    let run = snodo(&dir, &["read", url, "x"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "read",
        &run.out,
        &[
            shown("T-read-uri"),
            shown("T-read-text"),
            shown("T-blob-uri"),
            shown("T-blob-mime"),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_completions_and_notifications_are_shown_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("prompt");
    let url = server.url.as_str();

    let run = snodo(&dir, &["prompt", url, "any"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "prompt",
        &run.out,
        &[
            shown("T-prompt-result"),
            format!("{}: {}", shown("T-role"), shown("T-message")),
        ],
    );

    let run = snodo(&dir, &["complete", url, "prompt:any", "a=b"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds("complete", &run.out, &[shown("T-value"), "plain".into()]);
    assert_holds(
        "complete (stderr)",
        &run.err,
        &[r"T-total\u001b]52;c;SGVsbG8=\u0007".into()],
    );

    let run = snodo(
        &dir,
        &[
            "listen",
            url,
            "--tools",
            "--uri",
            "hostile:",
            "--count",
            "2",
            "--timeout",
            "20",
        ],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "listen",
        &run.out,
        &[
            format!("resources/updated hostile:{}", shown("T-updated")),
            "tools/list_changed".into(),
        ],
    );
    assert_holds(
        "listen (stderr)",
        &run.err,
        &[r"T-ack\u001b]52;c;SGVsbG8=\u0007".into()],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_shown_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("tasks");
    let url = server.url.as_str();

    let run = snodo(&dir, &["call", url, "slow", "--task"]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds("call --task", &run.out, &[shown("T-task-result")]);
    assert_holds(
        "call --task (stderr)",
        &run.err,
        &[
            format!("task {} started", shown("done-task")),
            format!("{} completed  {}", shown("done-task"), shown("T-status")),
        ],
    );

    let run = snodo(&dir, &["tasks", url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "tasks",
        &run.out,
        &[format!(
            "{} completed  {}  slow  {}",
            shown("done-task"),
            shown("T-status"),
            shown("T-created")
        )],
    );

    let waiting = evil("waiting-task");
    let run = snodo(&dir, &["task", url, &waiting]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "task (waiting)",
        &run.out,
        &[
            format!(
                "{} input_required  {}",
                shown("waiting-task"),
                shown("T-status")
            ),
            format!(
                "created {}, updated {}",
                shown("T-created"),
                shown("T-updated")
            ),
            format!(
                "waits on {}: {} {}",
                shown("T-input-key"),
                shown("T-input-method"),
                shown("T-input-message")
            ),
        ],
    );

    let failed = evil("failed-task");
    let run = snodo(&dir, &["task", url, &failed]).await;
    assert_eq!(run.code, 3, "{}", run.err);
    assert_holds(
        "task (failed)",
        &run.out,
        &[
            r#"error "T-code\u001b]52;c;SGVsbG8=\u0007"#.into(),
            shown("T-task-error"),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_view_shows_frames_escaped() {
    let server = Hostile::start().await;
    let dir = config_dir("wire");
    let run = snodo(&dir, &["-vv", "tools", &server.url]).await;
    assert_eq!(run.code, 0, "{}", run.err);
    assert_holds(
        "-vv tools (stderr)",
        &run.err,
        &[r"T-server-name\u001b]52;c;SGVsbG8=\u0007".into()],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captured_server_stderr_is_shown_escaped() {
    let dir = config_dir("stderr");
    // A stdio server (the demo) that first writes escape sequences on its
    // stderr: a clipboard write, a C1 CSI, a right-to-left override.
    let script = dir.join("server.sh");
    std::fs::write(
        &script,
        format!(
            "printf 'T-stderr\\033]52;c;SGVsbG8=\\007\\302\\23331m\\342\\200\\256\\n' >&2\nexec '{SNODO}' demo --stdio\n"
        ),
    )
    .unwrap();
    let target = format!("sh '{}'", script.display());
    let run = snodo(
        &dir,
        &[
            "call",
            &target,
            "no-such-tool",
            "--server-stderr",
            "capture",
        ],
    )
    .await;
    assert_eq!(run.code, 3, "{}", run.err);
    assert_holds(
        "captured stderr",
        &run.err,
        &[r"T-stderr\x1b]52;c;SGVsbG8=\x07\u{9b}31m\u{202e}".into()],
    );
}

/// The `--json` form of a command: its stdout parsed (each line, for
/// `listen`), after checking that nothing it printed is raw.
async fn json_of(config: &Path, args: &[&str]) -> (Run, Value) {
    let mut args = args.to_vec();
    args.push("--json");
    let run = snodo(config, &args).await;
    let value = if args[0] == "listen" {
        Value::Array(
            run.out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        )
    } else {
        serde_json::from_str(&run.out)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}):\n{}", run.out))
    };
    (run, value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_carries_the_server_strings_exactly() {
    let server = Hostile::start().await;
    let dir = config_dir("json");
    let url = server.url.as_str();

    let (_, v) = json_of(&dir, &["discover", url]).await;
    assert_eq!(
        v["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        evil("T-server-name")
    );
    assert_eq!(
        v["instructions"],
        format!("The first line.\n{}", evil("T-instructions"))
    );

    let (_, v) = json_of(&dir, &["tools", url]).await;
    assert_eq!(
        v["tools"][0]["name"],
        "T-tool\r\nT-second-line\x1b]0;title\x07"
    );
    assert_eq!(v["tools"][0]["title"], evil("T-title"));
    assert!(v["tools"][0]["inputSchema"]["properties"][evil("T-arg")].is_object());

    let (run, v) = json_of(&dir, &["call", url, "show"]).await;
    assert_eq!(
        v["content"][0]["text"],
        format!("The first line.\n{}\tafter a tab", evil("T-text"))
    );
    assert_eq!(v["content"][5]["type"], evil("T-kind"));
    let progress: Vec<Value> = run
        .err
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(progress.len(), 1, "{}", run.err);
    assert_eq!(progress[0]["message"], evil("T-progress"));

    let (_, v) = json_of(&dir, &["call", url, "structured"]).await;
    assert_eq!(
        v["structuredContent"][evil("T-structured-key")],
        evil("T-structured-value")
    );

    let (_, v) = json_of(&dir, &["resources", url]).await;
    assert_eq!(v["resources"][0]["uri"], evil("T-uri"));
    assert_eq!(v["resourceTemplates"][0]["uriTemplate"], evil("T-template"));

    let (_, v) = json_of(&dir, &["read", url, "x"]).await;
    assert_eq!(v["contents"][0]["text"], evil("T-read-text"));

    let (_, v) = json_of(&dir, &["prompts", url]).await;
    assert_eq!(v["prompts"][0]["name"], evil("T-prompt"));

    let (_, v) = json_of(&dir, &["prompt", url, "any"]).await;
    assert_eq!(v["messages"][0]["role"], evil("T-role"));

    let (_, v) = json_of(&dir, &["complete", url, "prompt:any", "a=b"]).await;
    assert_eq!(v["completion"]["values"][0], evil("T-value"));

    let (_, v) = json_of(
        &dir,
        &[
            "listen",
            url,
            "--uri",
            "hostile:",
            "--count",
            "1",
            "--timeout",
            "20",
        ],
    )
    .await;
    assert_eq!(
        v[0]["params"]["uri"],
        format!("hostile:{}", evil("T-updated"))
    );

    let (_, v) = json_of(&dir, &["task", url, &evil("failed-task")]).await;
    assert_eq!(v["taskId"], evil("failed-task"));
    assert_eq!(v["error"]["message"], evil("T-task-error"));
}

/// Where `script` (util-linux, Debian's essential `bsdutils`) runs a
/// command on a terminal of its own. Its absence fails the test: a skipped
/// check would pass for nothing.
fn script_program() -> &'static str {
    ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("util-linux `script` runs the CLI on a terminal (install bsdutils)")
}

/// Panics when terminal output holds anything but text and the CLI's own
/// sequences: SGR colours and erase-line (`ESC [ digits m|K`), and
/// carriage returns before a line feed (the terminal's) or an erase-line.
fn assert_only_own_sequences(text: &str) {
    let mut rest = text;
    while let Some(at) = rest.find(['\x1b', '\r']) {
        let tail = &rest[at..];
        let own = if let Some(csi) = tail.strip_prefix("\x1b[") {
            let end = csi
                .find(|c: char| !c.is_ascii_digit() && c != ';')
                .unwrap_or(csi.len());
            matches!(csi[end..].chars().next(), Some('m' | 'K'))
        } else {
            tail.starts_with("\r\n") || tail.starts_with("\r\x1b[2K")
        };
        assert!(own, "a sequence the CLI did not write: {tail:?}");
        rest = &tail[1..];
    }
    let others: String = text
        .chars()
        .filter(|c| *c != '\x1b' && *c != '\r')
        .collect();
    if let Some(c) = others.chars().find(|c| unsafe_char(*c)) {
        panic!("terminal output holds {c:?} raw:\n{text:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_on_a_terminal_show_server_text_escaped() {
    let script = script_program();
    let server = Hostile::start().await;
    let dir = config_dir("terminal");
    let command = format!(
        "'{SNODO}' call '{}' ask --timeout 20 --log-level debug",
        server.url
    );
    let mut child = Command::new(script)
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("SNODO_CONFIG_DIR", &dir)
        .env("SHELL", "/bin/sh")
        .env("COLUMNS", "1000")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("script starts");
    // A wrong answer (the question is asked again), the first choice,
    // submit, and no to the URL.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"nope\n1\ny\nn\n").await.unwrap();
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the command ends within 60 s")
        .unwrap();
    drop(stdin);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert_only_own_sequences(&text);
    // The CLI's own colours still work.
    assert!(text.contains("\x1b[33mThe server asks:\x1b[0m"), "{text:?}");
    assert_holds(
        "the questions",
        &text,
        &[
            shown("T-question"),
            shown("T-field-title"),
            shown("T-field-description"),
            r"T-default\u001b]52;c;SGVsbG8=\u0007".into(),
            format!("expected one of: {}, plain", shown("T-choice")),
            shown("T-consent"),
            format!("https://example.invalid/{}", shown("T-url")),
            r"T-choice\u001b]52;c;SGVsbG8=\u0007".into(),
        ],
    );
}
