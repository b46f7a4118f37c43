//! Tasks belong to their principal, principals are told apart, and one
//! principal's flood leaves the others their share.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::task::TaskOptions;
use snodo::{Dispatched, Principal, TransportInfo};

use crate::requests::{DECLARED, request, send_as};
use crate::server::{server, server_with};

#[tokio::test]
async fn a_task_belongs_to_its_principal() {
    let server = server();
    let created = send_as(
        &server,
        &request(
            1,
            "tools/call",
            r#"{"name":"sleep","arguments":{"seconds":30}}"#,
            DECLARED,
        ),
        Some("alice"),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let get = request(2, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED);
    let cancel = request(
        3,
        "tasks/cancel",
        &format!(r#"{{"taskId":"{id}"}}"#),
        DECLARED,
    );
    let update = request(
        4,
        "tasks/update",
        &format!(r#"{{"taskId":"{id}","inputResponses":{{}}}}"#),
        DECLARED,
    );
    for (who, text) in [
        (Some("mallory"), &get),
        (None, &get),
        (Some("mallory"), &cancel),
        (Some("mallory"), &update),
    ] {
        let r = send_as(&server, text, who).await;
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Task not found"}),
            "{who:?}: {r}"
        );
    }
    let mine = send_as(&server, &get, Some("alice")).await;
    assert_eq!(mine["result"]["status"], "working", "{mine}");
    let ack = send_as(&server, &cancel, Some("alice")).await;
    assert_eq!(ack["result"]["resultType"], "complete");
}

#[tokio::test]
async fn principals_are_told_apart_by_issuer_and_by_client_or_user() {
    let server = server();
    let principal = |issuer: &str, subject: &str, client: &str| {
        let mut p = Principal::new(subject);
        p.issuer = Some(issuer.to_string());
        p.client_id = Some(client.to_string());
        p
    };
    let as_ = async |p: &Principal, text: &str| {
        let transport = TransportInfo {
            principal: Some(p.clone()),
            ..TransportInfo::default()
        };
        match server.dispatch(text.as_bytes(), transport).await {
            Dispatched::Reply(reply) => serde_json::from_slice::<Value>(&reply.body).unwrap(),
            other => panic!("expected one reply, got {other:?}"),
        }
    };
    // A user whose subject is "svc", signed in through the client "web".
    let user = principal("https://idp.example", "svc", "web");
    let call = request(
        1,
        "tools/call",
        r#"{"name":"sleep","arguments":{"seconds":0}}"#,
        DECLARED,
    );
    let created = as_(&user, &call).await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let get = request(2, "tasks/get", &format!(r#"{{"taskId":"{id}"}}"#), DECLARED);
    assert!(as_(&user, &get).await["result"]["taskId"] == id.as_str());
    // The client "svc" acting for itself, and "svc" of another issuer, are
    // other principals.
    for other in [
        principal("https://idp.example", "svc", "svc"),
        principal("https://other.example", "svc", "web"),
    ] {
        let got = as_(&other, &get).await;
        assert_eq!(
            got["error"]["message"], "Task not found",
            "{other:?}: {got}"
        );
    }
}

/// `tools/call` of a finished-at-once task as `who`; the reply.
async fn quick_task_as(server: &Server, who: &str) -> Value {
    let call = request(
        1,
        "tools/call",
        r#"{"name":"sleep","arguments":{"seconds":0}}"#,
        DECLARED,
    );
    send_as(server, &call, Some(who)).await
}

#[tokio::test]
async fn a_flood_of_ten_thousand_tasks_from_one_principal_leaves_the_others_their_results_and_room()
{
    let server = server_with(TaskOptions::memory());
    let bob = quick_task_as(&server, "bob").await;
    let bob = bob["result"]["taskId"].as_str().unwrap().to_string();
    let get = request(
        2,
        "tasks/get",
        &format!(r#"{{"taskId":"{bob}"}}"#),
        DECLARED,
    );
    let done = async |server: &Server| send_as(server, &get, Some("bob")).await;
    for _ in 0..100 {
        if done(&server).await["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut created = 0;
    for _ in 0..10_000 {
        let r = quick_task_as(&server, "mallory").await;
        if r["result"]["resultType"] == "task" {
            created += 1;
            continue;
        }
        assert_eq!(r["error"]["code"], -32603, "{r}");
        let data = &r["error"]["data"];
        assert_eq!(
            (&data["retryable"], &data["limit"]),
            (&json!(true), &json!(1_000))
        );
        // The oldest of the principal's tasks expires an hour after it began.
        let after = data["retryAfterMs"].as_u64().unwrap();
        assert!((3_000_000..=3_600_000).contains(&after), "{after}");
    }
    assert_eq!(created, snodo::task::DEFAULT_MAX_TASKS_PER_SHARE);
    let kept = done(&server).await;
    assert_eq!(
        kept["result"]["status"], "completed",
        "bob's result stays: {kept}"
    );
    let again = quick_task_as(&server, "bob").await;
    assert_eq!(
        again["result"]["resultType"], "task",
        "bob has room: {again}"
    );
}
