//! A backend started once per caller: each caller's requests reach a child
//! process of its own whose environment comes from the caller's claims;
//! the listing child serves no caller; the cap, an idle timeout and a
//! failed child are handled.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::{Client, StdioCommand};
use snodo::proxy::{PerCaller, Proxy};
use snodo::{Dispatched, Principal, TransportInfo};

use crate::host::{META, gateway, served};

/// A stdio MCP server (initialize-era) whose `whoami` tool answers
/// `WHO`, `TEAMS` and its process id, and whose `quit` tool exits.
const SERVER: &str = include_str!("whoami_server.py");

fn per_caller() -> PerCaller {
    PerCaller::new(
        StdioCommand::new("python3", ["-c", SERVER]),
        Client::builder(),
    )
    .env_from_claim("WHO", "sub")
    .env_from_claim("TEAMS", "groups")
}

/// Calls `who.<tool>` as `caller` (none: no principal); the response.
async fn call(proxy: &Proxy, caller: Option<Principal>, tool: &str) -> Value {
    call_with(proxy, caller, tool, json!({})).await
}

/// [`call`] with more `params` members (`inputResponses`, `requestState`).
async fn call_with(proxy: &Proxy, caller: Option<Principal>, tool: &str, more: Value) -> Value {
    let mut params = json!({"name": format!("who.{tool}"), "arguments": {},
        "_meta": serde_json::from_str::<Value>(META).unwrap()});
    for (k, v) in more.as_object().unwrap() {
        params[k] = v.clone();
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let info = TransportInfo {
        principal: caller,
        ..Default::default()
    };
    let Dispatched::Reply(reply) = proxy
        .server()
        .dispatch(&serde_json::to_vec(&request).unwrap(), info)
        .await
    else {
        panic!("a plain reply");
    };
    serde_json::from_slice(&reply.body).unwrap()
}

/// `whoami` as `caller`: (WHO, TEAMS, pid).
async fn whoami(proxy: &Proxy, caller: Principal) -> (String, String, u32) {
    let r = call(proxy, Some(caller), "whoami").await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    let mut parts = text.split('|');
    let (who, teams, pid) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    (who.into(), teams.into(), pid.parse().unwrap())
}

fn ada() -> Principal {
    Principal::new("ada").with_claims(json!({"sub": "ada", "groups": ["ops", "dev"]}))
}

fn bob() -> Principal {
    Principal::new("bob").with_claims(json!({"sub": "bob"}))
}

fn running(proxy: &Proxy) -> Option<usize> {
    proxy.status()[0].callers
}

#[tokio::test]
async fn each_caller_gets_a_server_of_its_own_with_its_claims() {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy.connect_per_caller("who", per_caller()).await.unwrap();
    assert_eq!(served(&proxy).await, ["who.ask", "who.quit", "who.whoami"]);
    assert_eq!(running(&proxy), Some(0), "none started before a call");

    let (who, teams, ada_pid) = whoami(&proxy, ada()).await;
    assert_eq!((who.as_str(), teams.as_str()), ("ada", "ops dev"));
    // The same caller, the same server.
    assert_eq!(whoami(&proxy, ada()).await.2, ada_pid);
    // Another caller: another server; a claim it lacks is empty.
    let (who, teams, bob_pid) = whoami(&proxy, bob()).await;
    assert_eq!((who.as_str(), teams.as_str()), ("bob", ""));
    assert_ne!(bob_pid, ada_pid);
    assert_eq!(running(&proxy), Some(2));
    // The same subject with other claims is served apart.
    let ops_only = Principal::new("ada").with_claims(json!({"sub": "ada", "groups": ["ops"]}));
    let (_, teams, pid) = whoami(&proxy, ops_only).await;
    assert_eq!(teams, "ops");
    assert!(pid != ada_pid && pid != bob_pid);

    // No caller: refused, nothing started.
    let r = call(&proxy, None, "whoami").await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs a caller's token"),
        "{r}"
    );
    assert_eq!(running(&proxy), Some(3));
    assert!(
        proxy
            .metrics()
            .contains("snodo_proxy_caller_servers{backend=\"who\"} 3")
    );

    // A server that exits fails its call; the caller's next call starts
    // another.
    let r = call(&proxy, Some(bob()), "quit").await;
    assert!(r.get("error").is_some(), "{r}");
    let (who, _, again) = whoami(&proxy, bob()).await;
    assert_eq!(who, "bob");
    assert_ne!(again, bob_pid);

    // Removing the backend stops every caller's server.
    assert!(proxy.remove_backend("who"));
    assert!(proxy.status().is_empty());
}

#[tokio::test]
async fn past_the_cap_the_idlest_makes_room_and_idle_servers_stop() {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .connect_per_caller("who", per_caller().max_callers(2))
        .await
        .unwrap();
    let ada_pid = whoami(&proxy, ada()).await.2;
    let bob_pid = whoami(&proxy, bob()).await.2;
    // A third caller: ada's server, idle longest, is stopped for it.
    let carol = Principal::new("carol");
    let (who, _, _) = whoami(&proxy, carol).await;
    assert_eq!(who, "carol");
    assert_eq!(running(&proxy), Some(2));
    assert_eq!(whoami(&proxy, bob()).await.2, bob_pid, "bob's was kept");
    assert_ne!(whoami(&proxy, ada()).await.2, ada_pid, "ada's was stopped");

    // Idle past the setting: stopped without a request.
    proxy
        .per_caller("who", Some(per_caller().idle(Duration::from_millis(200))))
        .unwrap();
    assert_eq!(running(&proxy), Some(0), "a new setting starts afresh");
    whoami(&proxy, bob()).await;
    assert_eq!(running(&proxy), Some(1));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while running(&proxy) != Some(0) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(running(&proxy), Some(0), "the idle server was stopped");

    // Back to one server for every caller.
    proxy.per_caller("who", None).unwrap();
    assert_eq!(running(&proxy), None);
    let r = call(&proxy, None, "whoami").await;
    assert_eq!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .split('|')
            .next(),
        Some("")
    );
}

/// Waits (at most 5 s) until `running` is `want`.
async fn until_running(proxy: &Proxy, want: usize) -> Option<usize> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while running(proxy) != Some(want) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    running(proxy)
}

#[tokio::test]
async fn a_server_that_waits_for_its_callers_input_is_not_idle_and_resumes_there() {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .connect_per_caller("who", per_caller().idle(Duration::from_millis(100)))
        .await
        .unwrap();
    // The caller's server asks for a name: the caller gets input_required.
    let r = call(&proxy, Some(ada()), "ask").await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    let (key, request) = result["inputRequests"]
        .as_object()
        .and_then(|m| m.iter().next())
        .expect("one input request");
    assert_eq!(request["params"]["message"], "Your name?");
    let state = result["requestState"].clone();
    // Well past the idle time: kept, since a request waits on it.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        running(&proxy),
        Some(1),
        "a server with a parked request was stopped"
    );
    // Another caller cannot resume it.
    let stolen = call_with(&proxy, Some(bob()), "ask", json!({"requestState": state})).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    // Its caller's answer goes to the same server, which finishes.
    let more = json!({"requestState": state,
        "inputResponses": {key.clone(): {"action": "accept", "content": {"name": "Ada"}}}});
    let done = call_with(&proxy, Some(ada()), "ask", more).await;
    assert_eq!(done["result"]["content"][0]["text"], "hello Ada", "{done}");
    // Then idle: stopped.
    assert_eq!(until_running(&proxy, 0).await, Some(0));
}

#[tokio::test]
async fn a_callers_server_starts_only_once_the_request_passed_the_backends_limits() {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy.connect_per_caller("who", per_caller()).await.unwrap();
    let rate = snodo::server::Rate::parse("1/60s").unwrap();
    proxy
        .limit("who", snodo::proxy::BackendLimits::new().rate(rate))
        .unwrap();
    assert_eq!(whoami(&proxy, ada()).await.0, "ada");
    // Over the rate: refused before anything is started for bob.
    let r = call(&proxy, Some(bob()), "whoami").await;
    assert_eq!(r["error"]["code"], -31429, "{r}");
    assert_eq!(running(&proxy), Some(1));
}
