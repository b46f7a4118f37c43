//! The client commands' exit codes, as README and `snodo --help` list them:
//! a bad command line is 2, an answer of the wrong shape is 6, an HTTP answer
//! that is not JSON-RPC is 4, and a stdio line that is not JSON-RPC is skipped
//! (a server that writes nothing else leaves the request to time out: 5).

use std::process::Output;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::process::Command;

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

/// Runs `snodo args` with stdin empty, within 60 s.
async fn snodo(args: &[&str]) -> Output {
    let config = std::env::temp_dir().join(format!("snodo-cli-exit-codes-{}", std::process::id()));
    tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(SNODO)
            .args(args)
            .env("SNODO_CONFIG_DIR", &config)
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("the command ends within 60 s")
    .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn a_bad_flag_or_option_value_exits_2_without_reaching_the_server() {
    // Port 1 refuses connections: reaching it would exit 4.
    let out = snodo(&["tools", "--no-such-flag", "http://127.0.0.1:1/mcp"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unexpected argument '--no-such-flag'"),
        "{}",
        stderr(&out)
    );
    let out = snodo(&["tools", "--timeout", "0", "http://127.0.0.1:1/mcp"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: --timeout must be a positive number of seconds\n"
    );
}

#[tokio::test]
async fn help_lists_every_exit_code_readme_lists() {
    let out = snodo(&["--help"]).await;
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    // README: 0 ok, 1 isError, 2 bad command line, 3 a JSON-RPC error, 4
    // connection failure, 5 timeout, 6 protocol violation, 7 not authorized.
    let listed = "\
Exit codes (client commands):
  0  success
  1  the tool returned a result with isError: true
  2  bad command line
  3  the server answered with a JSON-RPC error
  4  connection failure (cannot start or reach the server, connection lost,
     an HTTP answer that is not JSON-RPC)
  5  a request timed out
  6  the server broke the protocol, or asked for input the CLI cannot give
  7  not authorized: the server refused the credentials (snodo login TARGET)
";
    assert!(help.contains(listed), "{help}");
}

#[tokio::test]
async fn a_json_rpc_answer_of_the_wrong_shape_exits_6() {
    // Answers every request with a result that is not an object.
    let server =
        r#"sed -u 's/.*"id":\([0-9]*\).*/{"jsonrpc":"2.0","id":\1,"result":"not an object"}/'"#;
    let out = snodo(&["tools", "--timeout", "5", server]).await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("protocol violation"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_stdio_line_that_is_not_json_rpc_is_skipped() {
    // A line of text, then the demo: the listing succeeds.
    let server = format!("sh -c 'echo this is not JSON-RPC; exec \"{SNODO}\" demo --stdio'");
    let out = snodo(&["tools", "--timeout", "10", &server]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("greet"));

    // Nothing but such lines: nothing is heard, and the request times out.
    let server = "sh -c 'while read line; do echo this is not JSON-RPC; done'";
    let started = Instant::now();
    let out = snodo(&["tools", "--timeout", "1", server]).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn an_http_answer_that_is_not_json_rpc_exits_4() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                // One request per connection: read its head and body, answer
                // 200 with JSON that is not JSON-RPC, and close.
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (name, value) = l.split_once(':')?;
                                name.eq_ignore_ascii_case("content-length")
                                    .then(|| value.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if seen.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let body = r#"{"hello":"world"}"#;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    let out = snodo(&["tools", "--timeout", "5", &url]).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("not JSON-RPC"), "{}", stderr(&out));
}
