//! `snodo proxy` as a gateway with a front door: tokens from a real OpenID
//! Connect provider (oidc-provider on 127.0.0.1), two roles granted by
//! scope, and a demo backend over stdio. What a role does not allow is
//! neither listed nor reachable: not called, read, got or completed.
//! Ignored by a plain `cargo test`: `interop/oauth/run.sh` installs the
//! provider and runs it with `--ignored`.

#[path = "../../snodo/tests/oauth_support/mod.rs"]
mod oauth_support;
mod support;

use std::time::Duration;

use oauth_support::Provider;
use serde_json::json;
use snodo::client::{Client, ClientError, CompletionRef};
use support::tool_names;

const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

async fn client(url: &str, token: &str) -> Client {
    Client::builder()
        .header("authorization", &format!("Bearer {token}"))
        .connect(url)
        .await
        .expect("the gateway takes the token")
}

/// Connecting to `url` with `token` is refused with 401.
async fn refused(url: &str, token: &str) {
    let e = Client::builder()
        .header("authorization", &format!("Bearer {token}"))
        .connect(url)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");
}

/// Tokens for `url` of two callers: `reader` (scope `demo:read`) and
/// `svc` (`demo:read files:write`).
async fn two_tokens(provider: &Provider, url: &str) -> (String, String) {
    let reader = provider
        .token("reader", "reader-secret", url, "demo:read")
        .await
        .unwrap();
    let svc = provider
        .token("svc", "svc-secret", url, "demo:read files:write")
        .await
        .unwrap();
    (reader, svc)
}

/// A refusal that says nothing is there: -32602.
fn not_there(e: ClientError, what: &str) {
    assert_eq!(e.code(), Some(-32602), "{what}: {e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn two_roles_see_different_tools_and_what_is_hidden_cannot_be_reached() {
    let provider = Provider::start(&[]).await;
    let dir = support::fresh_dir("gateway-auth");
    let config = dir.join("gateway.toml");
    // A backend that records the headers it is sent.
    let recorder = snodo::Server::builder("rec", "1")
        .tool(snodo::tool::from_fn("whoami", |_a, _c| async {
            Ok("someone".into())
        }))
        .build()
        .unwrap();
    let (rec_url, seen) = support::serve_recording(&recorder).await;
    std::fs::write(
        &config,
        format!(
            r#"
[audit]
path = "audit.jsonl"

[auth]
issuer = "{issuer}"
scopes = ["demo:read"]

[[auth.roles]]
name = "reader"
when = {{ scope = ["demo:read"] }}
tools = ["demo.greet", "demo.add"]
resources = ["demo+demo://readme"]

[[auth.roles]]
name = "writer"
when = {{ scope = ["files:write"] }}
tools = ["*"]
resources = ["*"]
prompts = ["*"]

[backends.demo]
command = ["{SNODO}", "demo", "--stdio"]
stderr = "quiet"

[backends.rec]
url = "{rec_url}"
forward_identity = true
"#,
            issuer = provider.issuer
        ),
    )
    .unwrap();
    let (_gateway, url) = support::spawn_proxy(&[], &config).await;

    // No token: 401 with the challenge.
    let e = Client::connect(url.as_str()).await.unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");

    let (reader_token, writer_token) = two_tokens(&provider, &url).await;
    let reader = client(&url, &reader_token).await;
    let writer = client(&url, &writer_token).await;

    // Two roles, two lists.
    assert_eq!(tool_names(&reader).await, ["demo.add", "demo.greet"]);
    let all = tool_names(&writer).await;
    assert!(
        all.len() > 2 && all.contains(&"demo.lookup".to_string()),
        "{all:?}"
    );

    // The caller's identity goes to a backend with forward_identity, and
    // its token never does.
    writer.call_tool("rec.whoami", json!({})).await.unwrap();
    let call = seen
        .lock()
        .unwrap()
        .iter()
        .rfind(|h| h.get("mcp-method").is_some_and(|m| m == "tools/call"))
        .cloned()
        .expect("the call reached the backend");
    assert_eq!(call["x-snodo-subject"], "svc");
    let scopes = call["x-snodo-scopes"].to_str().unwrap();
    assert!(scopes.split(' ').any(|s| s == "files:write"), "{scopes}");
    for headers in seen.lock().unwrap().iter() {
        for value in headers.values() {
            let value = value.to_str().unwrap_or_default();
            assert!(
                !value.contains(&writer_token),
                "the caller's token reached the backend"
            );
        }
    }
    let r = reader
        .call_tool("demo.add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(r.structured_content(), Some(&json!({"sum": 5})));
    // The audit line names the caller by its token's subject.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let line = loop {
        let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.contains("demo.add")) {
            break serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no audit line: {text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(line["principal"], "reader", "{line}");
    assert_eq!(line["outcome"], "ok", "{line}");

    // Hidden from the reader: no call, read, get or completion.
    not_there(
        reader
            .call_tool("demo.lookup", json!({"query": "x"}))
            .await
            .unwrap_err(),
        "call",
    );
    let read = json!({"uri": "demo+demo://greetings/ada"});
    not_there(
        reader
            .request("resources/read", read.clone())
            .await
            .unwrap_err(),
        "read",
    );
    let get = json!({"name": "demo.introduce", "arguments": {"name": "Ada"}});
    not_there(
        reader
            .request("prompts/get", get.clone())
            .await
            .unwrap_err(),
        "get",
    );
    let prompt = CompletionRef::Prompt("demo.introduce".into());
    not_there(
        reader
            .complete(prompt.clone(), "name", "a", None)
            .await
            .unwrap_err(),
        "complete a prompt",
    );
    let template = CompletionRef::Resource("demo+demo://greetings/{name}".into());
    not_there(
        reader
            .complete(template.clone(), "name", "a", None)
            .await
            .unwrap_err(),
        "complete a template",
    );
    let listed = reader.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(listed["prompts"], json!([]), "{listed}");
    let listed = reader
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["resourceTemplates"], json!([]), "{listed}");
    let readme = reader
        .request("resources/read", json!({"uri": "demo+demo://readme"}))
        .await
        .unwrap();
    assert!(
        readme["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("snodo demo")
    );

    // The writer reaches all of it.
    let r = writer.request("resources/read", read).await.unwrap();
    assert_eq!(r["contents"][0]["text"], "Hello, ada!");
    let r = writer.request("prompts/get", get).await.unwrap();
    assert!(
        r["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Ada")
    );
    let done = writer.complete(prompt, "name", "a", None).await.unwrap();
    assert!(!done.values.is_empty(), "{:?}", done.values);
    let done = writer.complete(template, "name", "a", None).await.unwrap();
    assert!(!done.values.is_empty(), "{:?}", done.values);

    // A token for another resource is refused.
    let other = provider
        .token("svc", "svc-secret", "http://127.0.0.1:9/mcp", "demo:read")
        .await
        .unwrap();
    refused(&url, &other).await;

    // Roles change while the gateway runs.
    let text = std::fs::read_to_string(&config).unwrap();
    let wider = text.replace(
        r#"tools = ["demo.greet", "demo.add"]"#,
        r#"tools = ["demo.*"]"#,
    );
    assert_ne!(text, wider);
    std::fs::write(&config, wider).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let demo: Vec<String> = all
        .iter()
        .filter(|n| n.starts_with("demo."))
        .cloned()
        .collect();
    while tool_names(&reader).await.len() < demo.len() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(tool_names(&reader).await, demo);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts the Python SDK's HTTP+SSE (2024-11-05) server
/// (`interop/python/server.py --sse`, with `SNODO_PYTHON`); its stream URL.
async fn python_sse_backend() -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let python = std::env::var("SNODO_PYTHON").expect(
        "SNODO_PYTHON is not set: run these tests through interop/oauth/run.sh, which installs the Python SDK",
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../interop/python/server.py"
    );
    let mut child = tokio::process::Command::new(python)
        .args([script, "--sse", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    tokio::time::timeout(
        Duration::from_secs(60),
        tokio::io::BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .expect("the server starts in time")
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).expect("its first line");
    (child, v["url"].as_str().unwrap().to_owned())
}

/// Runs `interop/node/gateway_ts.mjs` with `args`; panics unless every
/// check passed.
async fn ts_client(label: &str, args: &[&str]) {
    let node = std::env::var("SNODO_NODE").unwrap_or_else(|_| "node".into());
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(node)
            .arg("gateway_ts.mjs")
            .args(args)
            .args(["--label", label])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../interop/node"))
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the client finishes")
    .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains(&format!("{label}: ")) && said.contains(" 0 failed"),
        "{label}: {said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider, the TypeScript SDKs and the Python SDK: run interop/oauth/run.sh"]
async fn typescript_clients_through_a_gateway_with_roles_a_virtual_server_and_an_sse_backend() {
    let provider = Provider::start(&[]).await;
    let (_python, sse_url) = python_sse_backend().await;
    let dir = support::fresh_dir("gateway-ts");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[auth]
issuer = "{issuer}"
scopes = ["demo:read"]

[[auth.roles]]
name = "reader"
when = {{ scope = ["demo:read"] }}
tools = ["demo.greet", "demo.add", "py.echo"]

[[auth.roles]]
name = "writer"
when = {{ scope = ["files:write"] }}
tools = ["*"]

[backends.demo]
command = ["{SNODO}", "demo", "--stdio"]
stderr = "quiet"

[backends.py]
url = "{sse_url}"
transport = "sse"

[servers.python]
backends = ["py"]
tools = ["py.add", "py.echo", "py.count"]

[[servers.python.roles]]
name = "counter"
when = {{ scope = ["demo:read"] }}
tools = ["py.add", "py.count"]
"#,
            issuer = provider.issuer
        ),
    )
    .unwrap();
    let (_gateway, url) = support::spawn_proxy(&[], &config).await;
    let view = url.replace("/mcp", "/servers/python/mcp");

    // The virtual server is a protected resource of its own.
    let e = Client::connect(view.as_str()).await.unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");
    let metadata_url = url.replace(
        "/mcp",
        "/.well-known/oauth-protected-resource/servers/python/mcp",
    );
    let (status, _, body) =
        oauth_support::send(http::Method::GET, &metadata_url, &[], Default::default()).await;
    assert_eq!(status, http::StatusCode::OK);
    let metadata: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(metadata["resource"], view.as_str(), "{metadata}");
    assert_eq!(
        metadata["authorization_servers"][0],
        provider.issuer.as_str()
    );

    let reader = provider
        .token("reader", "reader-secret", &url, "demo:read")
        .await
        .unwrap();
    let reader_at_view = provider
        .token("reader", "reader-secret", &view, "demo:read")
        .await
        .unwrap();
    let writer = provider
        .token("svc", "svc-secret", &url, "demo:read files:write")
        .await
        .unwrap();
    // A token for /mcp is not one for the virtual server.
    refused(&view, &reader).await;

    for sdk in ["v1", "v2"] {
        // The reader at /mcp: its role's tools, across both backends (the
        // HTTP+SSE one included).
        ts_client(
            &format!("gateway-ts-{sdk}-reader"),
            &[
                "--sdk",
                sdk,
                "--http",
                &url,
                "--token",
                &reader,
                "--tools",
                "demo.add,demo.greet,py.echo",
                "--call",
                "py.echo",
                "--args",
                r#"{"message":"through the gateway"}"#,
                "--text",
                "through the gateway",
                "--hidden",
                "demo.lookup,py.add,py.count",
            ],
        )
        .await;
        // The writer sees everything; its call reaches the SSE backend.
        ts_client(
            &format!("gateway-ts-{sdk}-writer"),
            &[
                "--sdk", sdk, "--http", &url, "--token", &writer,
                "--tools", "demo.add,demo.announce,demo.confirm_delete,demo.count,demo.greet,demo.lookup,demo.report,py.add,py.confirm_delete,py.count,py.echo",
                "--call", "py.add", "--args", r#"{"a":20,"b":22}"#, "--text", "42",
            ],
        )
        .await;
        // The reader at the virtual server: its own roles over its names.
        ts_client(
            &format!("gateway-ts-{sdk}-virtual-server"),
            &[
                "--sdk",
                sdk,
                "--http",
                &view,
                "--token",
                &reader_at_view,
                "--tools",
                "py.add,py.count",
                "--call",
                "py.add",
                "--args",
                r#"{"a":1,"b":2}"#,
                "--text",
                "3",
                "--hidden",
                "py.echo,demo.greet,py.confirm_delete",
            ],
        )
        .await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One 2026-07-28 `tools/list` with `token`: the status, `Retry-After` and
/// the JSON body.
async fn list_with(
    url: &str,
    token: &str,
    id: u64,
) -> (http::StatusCode, Option<String>, serde_json::Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
        "params": {"_meta": oauth_support::meta()}});
    let bearer = format!("Bearer {token}");
    let (status, headers, body) = oauth_support::send(
        http::Method::POST,
        url,
        &[
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        body.to_string().into(),
    )
    .await;
    let after = headers
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (
        status,
        after,
        serde_json::from_slice(&body).unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn each_token_subject_has_its_own_rate_at_the_front_door() {
    let provider = Provider::start(&[]).await;
    let dir = support::fresh_dir("gateway-rate");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[limits]\nper_principal = \"3/60s\"\n\n[auth]\nissuer = \"{}\"\n\n\
             [backends.demo]\ncommand = [\"{SNODO}\", \"demo\", \"--stdio\"]\nstderr = \"quiet\"\n",
            provider.issuer
        ),
    )
    .unwrap();
    let (_gateway, url) = support::spawn_proxy(&[], &config).await;
    let reader = provider
        .token("reader", "reader-secret", &url, "demo:read")
        .await
        .unwrap();
    let svc = provider
        .token("svc", "svc-secret", &url, "demo:read")
        .await
        .unwrap();
    // The reader's three requests go through; the fourth is refused with
    // the time to wait, in the header and in the error's data.
    for id in 1..=3 {
        let (status, _, body) = list_with(&url, &reader, id).await;
        assert_eq!(status, http::StatusCode::OK, "{body}");
    }
    let (status, after, body) = list_with(&url, &reader, 4).await;
    assert_eq!(status, http::StatusCode::TOO_MANY_REQUESTS, "{body}");
    let after: u64 = after.expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&after), "{after}");
    assert_eq!(body["id"], 4, "{body}");
    assert_eq!(body["error"]["code"], -31429, "{body}");
    assert!(
        body["error"]["data"]["retryAfter"].as_f64().unwrap() > 0.0,
        "{body}"
    );
    // Another subject, from the same address, has a rate of its own.
    let (status, _, body) = list_with(&url, &svc, 5).await;
    assert_eq!(status, http::StatusCode::OK, "{body}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn each_caller_gets_a_server_of_its_own_with_its_claims_in_the_environment() {
    let provider = Provider::start(&[]).await;
    let dir = support::fresh_dir("gateway-per-caller");
    let config = dir.join("gateway.toml");
    let script = dir.join("whoami_server.py");
    std::fs::write(
        &script,
        include_str!("../../snodo/tests/proxy/whoami_server.py"),
    )
    .unwrap();
    let admin = "an-admin-token-of-some-length";
    std::fs::write(
        &config,
        format!(
            r#"
[auth]
issuer = "{issuer}"
admin_token = "{admin}"

[backends.who]
command = ["python3", "{script}"]
env_from_claims = {{ WHO = "sub", TEAMS = "scope" }}
max_callers = 4
"#,
            issuer = provider.issuer,
            script = script.display()
        ),
    )
    .unwrap();
    let (_gateway, url) = support::spawn_proxy(&[], &config).await;
    let (reader_token, svc_token) = two_tokens(&provider, &url).await;
    let reader = client(&url, &reader_token).await;
    let svc = client(&url, &svc_token).await;
    assert_eq!(
        tool_names(&reader).await,
        ["who.ask", "who.quit", "who.whoami"]
    );

    /// `who.whoami` as `caller`: WHO, TEAMS and the pid.
    async fn whoami(caller: &Client) -> (String, String, String) {
        let r = caller.call_tool("who.whoami", json!({})).await.unwrap();
        let text = r.text_content();
        let mut parts = text.split('|').map(str::to_owned);
        (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        )
    }
    let (who, scopes, reader_pid) = whoami(&reader).await;
    assert_eq!((who.as_str(), scopes.as_str()), ("reader", "demo:read"));
    assert_eq!(whoami(&reader).await.2, reader_pid, "one server per caller");
    let (who, scopes, svc_pid) = whoami(&svc).await;
    assert_eq!(who, "svc");
    let mut scopes: Vec<&str> = scopes.split(' ').collect();
    scopes.sort_unstable();
    assert_eq!(scopes, ["demo:read", "files:write"]);
    assert_ne!(svc_pid, reader_pid);

    // The admin surface and the metrics count them.
    let base = url.trim_end_matches("/mcp");
    let bearer = format!("Bearer {admin}");
    let get = |path: &str| {
        let url = format!("{base}{path}");
        let bearer = bearer.clone();
        async move {
            let (status, _, body) = oauth_support::send(
                http::Method::GET,
                &url,
                &[("authorization", bearer.as_str())],
                bytes::Bytes::new(),
            )
            .await;
            assert_eq!(status, http::StatusCode::OK, "{url}");
            String::from_utf8(body.to_vec()).unwrap()
        }
    };
    let body: serde_json::Value = serde_json::from_str(&get("/admin/backends").await).unwrap();
    assert_eq!(body["backends"][0]["callers"], 2, "{body}");
    let metrics = get("/metrics").await;
    assert!(
        metrics.contains("snodo_proxy_caller_servers{backend=\"who\"} 2"),
        "{metrics}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
