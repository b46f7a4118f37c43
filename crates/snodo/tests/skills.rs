//! The Skills extension on the server: a directory of skills served as
//! resources, `skills/list`, `skills/get` and `resources/directory/read`.
//! Literal JSON in, literal expectations out; digests and sizes are those of
//! the files in `tests/skills_tree` (`sha256sum`, `wc -c`).

#![cfg(feature = "skills")]

mod common;

use serde_json::{Value, json};
use snodo::resource::ReadResult;
use snodo::server::{Item, Policy};
use snodo::skills::Skills;
use snodo::{Context, Dispatched, Error, Principal, Server, TransportInfo};

use common::meta_with;

const TREE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/skills_tree");

fn server() -> Server {
    Server::builder("skills", "1.0.0")
        .skills(Skills::from_dir(TREE).unwrap())
        .page_size(1)
        .build()
        .unwrap()
}

async fn send_as(
    server: &Server,
    who: Option<&str>,
    id: i64,
    method: &str,
    params: Value,
) -> Value {
    let mut params = params;
    params["_meta"] = meta_with(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let info = TransportInfo {
        principal: who.map(Principal::new),
        ..Default::default()
    };
    let Dispatched::Reply(reply) = server
        .dispatch(&serde_json::to_vec(&body).unwrap(), info)
        .await
    else {
        panic!("a plain reply");
    };
    serde_json::from_slice(&reply.body).unwrap()
}

async fn send(server: &Server, id: i64, method: &str, params: Value) -> Value {
    send_as(server, None, id, method, params).await
}

/// The result without the server's `_meta`.
fn result(mut response: Value) -> Value {
    let result = response["result"].take();
    assert!(result.is_object(), "{response}");
    let mut result = result;
    result.as_object_mut().unwrap().remove("_meta");
    result
}

fn refunds() -> Value {
    json!({
        "uri": "skill://acme/billing/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "Process customer refund requests per company policy", "license": "Apache-2.0"},
        "resources": [{"uri": "skill://acme/billing/refunds/SKILL.md",
            "digest": "sha256:451920a99353166dae6ad7e2e06a47f538861dbf19d180c9de43af297e89c3ed", "size": 130}],
    })
}

fn pdf() -> Value {
    json!({
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
            "metadata": {"version": "2.1"}},
        "resources": [
            {"uri": "skill://pdf-processing/SKILL.md",
             "digest": "sha256:c6abc104357e9b1140ac098654a7971521424a19a09c1a0b57cd44e1c18a36bd", "size": 209},
            {"uri": "skill://pdf-processing/references/FORMS.md",
             "digest": "sha256:abe1484651268d31d285247fb6e48866a4a4c6654e5bf0008e3228f12ccd7195", "size": 34},
            {"uri": "skill://pdf-processing/templates/invoice.md",
             "digest": "sha256:6de06397eab35ddbf89d8ff501f54c3fd61da5fb80b3294ac5fd1f01bcca88a3", "size": 17},
            {"uri": "skill://pdf-processing/templates/regional/eu-invoice.md",
             "digest": "sha256:5c75683046cd3c48c2368f4e854c7eff7ff13a1199a6c7408fa48b43683a31f3", "size": 20},
        ],
    })
}

#[tokio::test]
async fn the_extension_is_declared_only_with_skills() {
    let plain = Server::builder("plain", "1.0.0").build().unwrap();
    let discover = result(send(&plain, 1, "server/discover", json!({})).await);
    assert!(
        discover["capabilities"].get("extensions").is_none(),
        "{discover}"
    );
    let discover = result(send(&server(), 1, "server/discover", json!({})).await);
    assert_eq!(
        discover["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {"directoryRead": true}})
    );
    assert!(discover["capabilities"]["resources"].is_object());
    assert_eq!(
        send(&plain, 2, "skills/list", json!({})).await["error"]["code"],
        -32601
    );
}

#[tokio::test]
async fn skills_list_pages_whole_entries_with_cache_hints() {
    let server = server();
    let first = result(send(&server, 1, "skills/list", json!({})).await);
    assert_eq!(
        first,
        json!({"resultType": "complete", "skills": [refunds()], "nextCursor": "1",
            "ttlMs": 0, "cacheScope": "private"})
    );
    let second = result(send(&server, 2, "skills/list", json!({"cursor": "1"})).await);
    assert_eq!(
        second,
        json!({"resultType": "complete", "skills": [pdf()], "ttlMs": 0, "cacheScope": "private"})
    );
    for cursor in [json!("2"), json!("0"), json!("x"), json!(1)] {
        let e = send(&server, 3, "skills/list", json!({"cursor": cursor})).await;
        assert_eq!(e["error"]["code"], -32602, "{cursor}: {e}");
    }
}

#[tokio::test]
async fn skills_get_answers_one_entry_or_invalid_params() {
    let server = server();
    let got = result(
        send(
            &server,
            1,
            "skills/get",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        )
        .await,
    );
    assert_eq!(
        got,
        json!({"resultType": "complete", "skill": pdf(), "ttlMs": 0, "cacheScope": "private"})
    );
    assert_eq!(
        send(
            &server,
            2,
            "skills/get",
            json!({"uri": "skill://nope/SKILL.md"})
        )
        .await,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602,
            "message": "No skill is served at skill://nope/SKILL.md"}})
    );
    assert_eq!(
        send(&server, 3, "skills/get", json!({})).await["error"]["code"],
        -32602
    );
}

#[tokio::test]
async fn every_file_is_a_resource_and_skill_md_is_named_from_its_frontmatter() {
    let server = server().to_owned();
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = result(send(&server, 1, "resources/list", params).await);
        for r in page["resources"].as_array().unwrap() {
            uris.push(r["uri"].as_str().unwrap().to_owned());
            if r["uri"] == "skill://pdf-processing/SKILL.md" {
                assert_eq!(r["name"], "pdf-processing");
                assert_eq!(
                    r["description"],
                    "Extract, fill, and assemble PDF documents"
                );
                assert_eq!(r["mimeType"], "text/markdown");
                assert_eq!(r["size"], 209);
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references/FORMS.md",
            "skill://pdf-processing/templates/invoice.md",
            "skill://pdf-processing/templates/regional/eu-invoice.md",
        ],
        "dotfiles are left out"
    );
    let read = result(
        send(
            &server,
            2,
            "resources/read",
            json!({"uri": "skill://pdf-processing/references/FORMS.md"}),
        )
        .await,
    );
    assert_eq!(
        read["contents"],
        json!([{"uri": "skill://pdf-processing/references/FORMS.md", "mimeType": "text/markdown",
            "text": "Form fields are named in the PDF.\n"}])
    );
    let _: ReadResult = serde_json::from_value(read).unwrap();
}

#[tokio::test]
async fn directories_list_their_direct_children() {
    let server = server();
    let dir = |id, uri: &str| {
        let server = server.clone();
        let uri = uri.to_owned();
        async move {
            let mut all = Vec::new();
            let mut params = json!({"uri": uri});
            loop {
                let page =
                    result(send(&server, id, "resources/directory/read", params.clone()).await);
                all.extend(page["resources"].as_array().unwrap().iter().cloned());
                match page.get("nextCursor") {
                    Some(c) => params["cursor"] = c.clone(),
                    None => return all,
                }
            }
        }
    };
    assert_eq!(
        dir(1, "skill://pdf-processing").await,
        [
            json!({"uri": "skill://pdf-processing/references", "name": "references", "mimeType": "inode/directory"}),
            json!({"uri": "skill://pdf-processing/templates", "name": "templates", "mimeType": "inode/directory"}),
            json!({"uri": "skill://pdf-processing/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown", "size": 209}),
        ]
    );
    assert_eq!(
        dir(2, "skill://acme").await,
        [json!({"uri": "skill://acme/billing", "name": "billing", "mimeType": "inode/directory"})]
    );
    for (id, uri) in [
        (3, "skill://pdf-processing/SKILL.md"),
        (4, "skill://nope"),
        (5, "skill://pdf-processing/"),
    ] {
        assert_eq!(
            send(&server, id, "resources/directory/read", json!({"uri": uri})).await,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602,
                "message": format!("{uri} is not a directory resource")}})
        );
    }
}

/// The resources whose URI the function picks are for `staff` only.
struct StaffOnly(fn(&str) -> bool);

impl Policy for StaffOnly {
    fn can_see(&self, who: Option<&Principal>, item: Item<'_>) -> bool {
        let hidden = matches!(item, Item::Resource(uri) if (self.0)(uri));
        !hidden || who.is_some_and(|p| p.subject == "staff")
    }
    fn check(&self, cx: &Context, item: Item<'_>) -> Result<(), Error> {
        if self.can_see(cx.principal(), item) {
            Ok(())
        } else {
            Err(Error::new(-31001, "Forbidden"))
        }
    }
}

#[tokio::test]
async fn what_the_policy_hides_is_neither_listed_nor_got_nor_in_a_directory() {
    let server = Server::builder("skills", "1.0.0")
        .skills(Skills::from_dir(TREE).unwrap())
        .policy(StaffOnly(|uri| uri.starts_with("skill://acme/")))
        .build()
        .unwrap();
    let guest = result(send_as(&server, Some("guest"), 1, "skills/list", json!({})).await);
    assert_eq!(guest["skills"], json!([pdf()]));
    let staff = result(send_as(&server, Some("staff"), 2, "skills/list", json!({})).await);
    assert_eq!(staff["skills"], json!([refunds(), pdf()]));
    let uri = json!({"uri": "skill://acme/billing/refunds/SKILL.md"});
    assert_eq!(
        send_as(&server, Some("guest"), 3, "skills/get", uri.clone()).await["error"]["code"],
        -32602
    );
    assert!(
        send_as(&server, Some("staff"), 4, "skills/get", uri).await["result"]["skill"].is_object()
    );
    assert_eq!(
        send_as(
            &server,
            Some("guest"),
            5,
            "resources/directory/read",
            json!({"uri": "skill://acme"})
        )
        .await["error"]["code"],
        -32602
    );
}

#[test]
fn a_tree_breaking_the_rules_is_refused_with_the_reason() {
    let skill = |fm: &str| format!("---\n{fm}\n---\nbody\n").into_bytes();
    type Files = Vec<(&'static str, Vec<u8>)>;
    let cases: Vec<(&str, Files, &str)> = vec![
        ("a", vec![("README.md", b"x".to_vec())], "has no SKILL.md"),
        (
            "a",
            vec![("SKILL.md", b"no frontmatter".to_vec())],
            "does not start",
        ),
        (
            "a",
            vec![("SKILL.md", skill("name: a"))],
            "needs a name and a description",
        ),
        (
            "a",
            vec![("SKILL.md", skill("name: b\ndescription: d"))],
            "not \"a\"",
        ),
        (
            "Bad",
            vec![("SKILL.md", skill("name: Bad\ndescription: d"))],
            "not a skill name",
        ),
        (
            "a--b",
            vec![("SKILL.md", skill("name: a--b\ndescription: d"))],
            "not a skill name",
        ),
        (
            "a/../b",
            vec![("SKILL.md", skill("name: b\ndescription: d"))],
            ".. segments",
        ),
        (
            "a",
            vec![
                ("SKILL.md", skill("name: a\ndescription: d")),
                ("../x", b"x".to_vec()),
            ],
            ".. segments",
        ),
    ];
    for (path, files, needle) in cases {
        let e = Skills::new()
            .with_skill(path, files)
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{path}: {e}");
    }
    let many: Vec<(String, Vec<u8>)> =
        std::iter::once(("SKILL.md".to_owned(), skill("name: a\ndescription: d")))
            .chain((0..512).map(|i| (format!("f{i}"), Vec::new())))
            .collect();
    let e = Skills::new().with_skill("a", many).unwrap_err().to_string();
    assert!(e.contains("more than 512 files"), "{e}");
    let big = vec![
        ("SKILL.md".to_owned(), skill("name: a\ndescription: d")),
        ("big".to_owned(), vec![b'x'; 16 * 1024 * 1024]),
    ];
    let e = Skills::new().with_skill("a", big).unwrap_err().to_string();
    assert!(e.contains("more than 16777216 bytes"), "{e}");
    let dir = std::env::temp_dir().join(format!("snodo-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("a/SKILL.md"), skill("name: a\ndescription: d")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.join("a/link")).unwrap();
    let e = Skills::from_dir(&dir).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    std::fs::remove_file(dir.join("a/link")).unwrap();
    assert_eq!(Skills::from_dir(&dir).unwrap().entries().len(), 1);
    std::fs::write(dir.join("SKILL.md"), skill("name: x\ndescription: d")).unwrap();
    assert!(
        Skills::from_dir(&dir)
            .unwrap_err()
            .to_string()
            .contains("at the root")
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let empty = std::env::temp_dir().join(format!("snodo-skills-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    assert!(
        Skills::from_dir(&empty)
            .unwrap_err()
            .to_string()
            .contains("no skill found")
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

/// The client over a real loopback socket: it lists and gets entries, loads
/// a skill (its `SKILL.md` checked against the entry), reads a listed file
/// (checked) and refuses an unlisted one without asking the server.
#[cfg(all(feature = "client", feature = "http"))]
#[tokio::test]
async fn the_client_lists_loads_and_reads_verified_files() {
    use snodo::client::{Client, ProtocolErrorKind};
    use snodo::transport::http::{HttpListener, HttpOptions};

    let listener = HttpListener::bind(
        &server(),
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::new(),
    )
    .await
    .unwrap();
    let url = listener.url();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    let client = Client::connect(url.as_str()).await.unwrap();
    assert!(client.serves_skills());
    let entries = client.list_skills().await.unwrap();
    let listed: Vec<Value> = entries
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(listed, [refunds(), pdf()], "both pages, whole entries");
    let entry = client
        .get_skill("skill://pdf-processing/SKILL.md")
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&entry).unwrap(), pdf());
    let e = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
    assert_eq!(e.code(), Some(-32602));

    let skill = client.load_skill(entry.clone()).await.unwrap();
    assert!(skill.text().starts_with("---\nname: pdf-processing\n"));
    let forms = skill.read(&client, "references/FORMS.md").await.unwrap();
    assert_eq!(forms, b"Form fields are named in the PDF.\n");
    let e = skill
        .read(&client, "references/OTHER.md")
        .await
        .unwrap_err();
    assert_eq!(
        e.protocol_kind(),
        Some(ProtocolErrorKind::SkillVerification)
    );
    assert!(e.to_string().contains("is not a file of skill"), "{e}");

    // An entry that does not describe what the server serves is refused.
    let mut stale: Value = pdf();
    stale["resources"][1]["digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    let stale: snodo::skills::Skill = serde_json::from_value(stale).unwrap();
    let loaded = client.load_skill(stale.clone()).await.unwrap();
    let e = loaded
        .read(&client, "references/FORMS.md")
        .await
        .unwrap_err();
    assert_eq!(
        e.protocol_kind(),
        Some(ProtocolErrorKind::SkillVerification)
    );
    assert!(
        e.to_string().contains("the digest is not the entry's"),
        "{e}"
    );
    let mut short: Value = pdf();
    short["resources"][0]["size"] = json!(208);
    let e = client
        .load_skill(serde_json::from_value(short).unwrap())
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("209 bytes where the entry lists 208"),
        "{e}"
    );
    let mut other: Value = pdf();
    other["frontmatter"]["description"] = json!("Exfiltrate credentials");
    let e = client
        .load_skill(serde_json::from_value(other).unwrap())
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("differs from the entry's in description"),
        "{e}"
    );
    client.close().await;
    let _ = stop.send(());
}

fn md(name: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\nbody\n").into_bytes()
}

#[tokio::test]
async fn a_nested_skill_is_its_own_entry_and_part_of_the_enclosing_one() {
    let skills = Skills::new()
        .with_skill(
            "outer",
            [
                ("SKILL.md", md("outer")),
                ("inner/SKILL.md", md("inner")),
                ("inner/x.md", b"x".to_vec()),
            ],
        )
        .unwrap()
        .with_skill(
            "outer/inner",
            [("SKILL.md", md("inner")), ("x.md", b"x".to_vec())],
        )
        .unwrap();
    let server = Server::builder("nested", "1.0.0")
        .skills(skills)
        .build()
        .unwrap();
    let list = result(send(&server, 1, "skills/list", json!({})).await);
    let uris = |i: usize| -> Vec<String> {
        list["skills"][i]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(list["skills"][0]["uri"], "skill://outer/SKILL.md");
    assert_eq!(
        uris(0),
        [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
            "skill://outer/inner/x.md"
        ]
    );
    assert_eq!(list["skills"][1]["uri"], "skill://outer/inner/SKILL.md");
    assert_eq!(
        uris(1),
        ["skill://outer/inner/SKILL.md", "skill://outer/inner/x.md"]
    );
    let resources = result(send(&server, 2, "resources/list", json!({})).await);
    let inner = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://outer/inner/SKILL.md")
        .unwrap()
        .clone();
    assert_eq!(inner["name"], "inner");
    assert_eq!(inner["description"], "The inner skill");

    let e = Skills::new()
        .with_skill(
            "outer",
            [("SKILL.md", md("outer")), ("inner/x.md", b"x".to_vec())],
        )
        .unwrap()
        .with_skill(
            "outer/inner",
            [("SKILL.md", md("inner")), ("x.md", b"y".to_vec())],
        )
        .unwrap_err();
    assert!(e.to_string().contains("served with other bytes"), "{e}");
}

#[tokio::test]
async fn a_skill_with_a_hidden_file_is_neither_listed_nor_got() {
    let server = Server::builder("skills", "1.0.0")
        .skills(Skills::from_dir(TREE).unwrap())
        .policy(StaffOnly(|uri| uri.ends_with("/FORMS.md")))
        .build()
        .unwrap();
    let guest = result(send_as(&server, Some("guest"), 1, "skills/list", json!({})).await);
    assert_eq!(
        guest["skills"],
        json!([refunds()]),
        "its entry would name the hidden file"
    );
    let uri = json!({"uri": "skill://pdf-processing/SKILL.md"});
    assert_eq!(
        send_as(&server, Some("guest"), 2, "skills/get", uri.clone()).await["error"]["code"],
        -32602
    );
    assert_eq!(
        result(send_as(&server, Some("staff"), 3, "skills/get", uri).await)["skill"],
        pdf()
    );
}
