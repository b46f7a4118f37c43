//! Input inside a task: waiting for `tasks/update`, its time limit, and keys
//! used once.

use std::time::Duration;

use snodo::task::TaskOptions;

use crate::requests::{DECLARED, poll_until, request, send, terminal};
use crate::server::{server, server_with};

#[tokio::test]
async fn a_task_waiting_for_input_fails_after_its_input_wait() {
    let server = server_with(TaskOptions::memory().input_wait(Duration::from_millis(300)));
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = poll_until(&server, &id, |r| r["status"] != "working").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let failed = poll_until(&server, &id, terminal).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["statusMessage"],
        "No answer to the task's input requests within 0 s"
    );
    // An answer that comes too late finds nothing to answer.
    let late = send(
        &server,
        &request(
            2,
            "tasks/update",
            &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(late["result"]["resultType"], "complete", "{late}");
    assert_eq!(poll_until(&server, &id, |_| true).await["status"], "failed");
}

#[tokio::test]
async fn input_requests_wait_for_tasks_update() {
    let server = server();
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"confirm"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let waiting = poll_until(&server, &id, |r| r["status"] != "working").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(
        waiting["inputRequests"]["ok"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        waiting["inputRequests"]["ok"]["params"]["message"],
        "Go on?"
    );
    assert!(waiting.get("requestState").is_none());

    // Keys not outstanding are ignored, values unchecked.
    let ignored = send(
        &server,
        &request(
            2,
            "tasks/update",
            &format!(
                r#"{{"taskId":"{id}","inputResponses":{{"unknown-key":{{"ignored":true}}}}}}"#
            ),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(ignored["result"]["resultType"], "complete", "{ignored}");
    let still = poll_until(&server, &id, |_| true).await;
    assert_eq!(still["status"], "input_required");

    let bad = send(
        &server,
        &request(
            3,
            "tasks/update",
            &format!(r#"{{"taskId":"{id}","inputResponses":[]}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    // A malformed answer to an outstanding request is refused whole and the
    // question stays open (it used to be taken, and the handler's asking
    // again failed the task as a reused key).
    for malformed in [
        r#""yes""#,
        r#"{"action":"maybe"}"#,
        r#"{"action":"accept","content":{"ok":{"deep":1}}}"#,
    ] {
        let refused = send(
            &server,
            &request(
                3,
                "tasks/update",
                &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{malformed}}}}}"#),
                DECLARED,
            ),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("inputResponses.ok is not an answer to \"elicitation/create\""),
            "{refused}"
        );
    }
    let still = poll_until(&server, &id, |_| true).await;
    assert_eq!(still["status"], "input_required");

    let answered = send(&server, &request(4, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED)).await;
    assert_eq!(answered["result"]["resultType"], "complete", "{answered}");
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "confirmed: Some(true)"
    );

    // An update once the task waits on nothing is acked and changes nothing.
    let late = send(
        &server,
        &request(
            5,
            "tasks/update",
            &format!(r#"{{"taskId":"{id}","inputResponses":{{"ok":{{"action":"decline"}}}}}}"#),
            DECLARED,
        ),
    )
    .await;
    assert_eq!(late["result"]["resultType"], "complete", "{late}");
    assert_eq!(poll_until(&server, &id, |_| true).await, done);
}

#[tokio::test]
async fn a_handler_that_asks_for_a_used_key_again_fails_its_task() {
    let server = server();
    let created = send(
        &server,
        &request(1, "tools/call", r#"{"name":"reuse_key"}"#, DECLARED),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    poll_until(&server, &id, |r| r["status"] == "input_required").await;
    send(&server, &request(2, "tasks/update", &format!(r#"{{"taskId":"{id}","inputResponses":{{"same":{{"action":"accept","content":{{"ok":true}}}}}}}}"#), DECLARED)).await;
    let done = poll_until(&server, &id, terminal).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], -32603);
    assert_eq!(done["error"]["message"], "Input request key reused");
    assert_eq!(done["statusMessage"], "Input request key reused");
}
