//! Listen streams that name a task get its status notifications.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::{Dispatched, Principal, TransportInfo};

use crate::requests::{DECLARED, UNDECLARED, request, send, send_as};
use crate::server::server;

#[tokio::test]
async fn listeners_of_a_task_get_its_status_notifications() {
    use futures_util::StreamExt;
    let server = server();
    let created = send_as(
        &server,
        &request(1, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
        Some("alice"),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();

    let undeclared = send(
        &server,
        &request(
            2,
            "subscriptions/listen",
            &format!(r#"{{"notifications":{{"taskIds":["{id}"]}}}}"#),
            UNDECLARED,
        ),
    )
    .await;
    assert_eq!(undeclared["error"]["code"], -32021, "{undeclared}");

    let listen = request(
        3,
        "subscriptions/listen",
        &format!(r#"{{"notifications":{{"taskIds":["{id}"]}}}}"#),
        DECLARED,
    );
    let open = |who: &'static str| {
        let server = server.clone();
        let listen = listen.clone();
        async move {
            let transport = TransportInfo {
                principal: Some(Principal::new(who)),
                ..TransportInfo::default()
            };
            match server.dispatch(listen.as_bytes(), transport).await {
                Dispatched::Stream(stream) => stream,
                other => panic!("expected a stream, got {other:?}"),
            }
        }
    };
    let mut mine = open("alice").await;
    let mut theirs = open("mallory").await;
    let frame = |bytes: bytes::Bytes| serde_json::from_slice::<Value>(&bytes).unwrap();
    let ack = frame(mine.next().await.unwrap());
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );
    let _ = theirs.next().await.unwrap();

    // The task asks for input: the listener sees input_required with the request.
    let waiting = tokio::time::timeout(Duration::from_secs(5), mine.next())
        .await
        .expect("a notification")
        .unwrap();
    let waiting = frame(waiting);
    assert_eq!(waiting["method"], "notifications/tasks", "{waiting}");
    assert_eq!(waiting["params"]["taskId"], id.as_str());
    assert_eq!(waiting["params"]["status"], "input_required");
    assert_eq!(
        waiting["params"]["inputRequests"]["ok"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        waiting["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );

    send_as(&server, &request(4, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED), Some("alice")).await;
    let mut last = Value::Null;
    while last["params"]["status"] != "completed" {
        let next = tokio::time::timeout(Duration::from_secs(5), mine.next())
            .await
            .expect("a notification")
            .unwrap();
        last = frame(next);
        assert_eq!(last["method"], "notifications/tasks", "{last}");
    }
    assert_eq!(
        last["params"]["result"]["content"][0]["text"],
        "confirmed: Some(true)"
    );
    // Another principal's listener hears nothing of it.
    let nothing = tokio::time::timeout(Duration::from_millis(200), theirs.next()).await;
    assert!(
        nothing.is_err(),
        "another principal's listener got {nothing:?}"
    );
}
