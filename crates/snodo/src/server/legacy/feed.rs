//! Change notifications for initialize-era sessions, from the same events
//! that feed `subscriptions/listen`: `*/list_changed` when the server
//! declared `listChanged`, `notifications/resources/updated` only for URIs
//! the session subscribed to.

use serde_json::{Map, Value};

use super::Session;
use crate::server::Event;
use crate::wire::encode_notification;

/// The notification `event` becomes for `session`, given the server's
/// capabilities; `None` when the session should not hear of it. An update
/// of a resource is sent only when `hears` its URI (the server asks its
/// [`Policy`](crate::server::Policy) whether whoever listens may see it).
pub fn notification_for(
    event: &Event,
    session: &Session,
    capabilities: &Value,
    hears: &dyn Fn(&str) -> bool,
) -> Option<Vec<u8>> {
    let declared = |cap: &str| {
        capabilities
            .get(cap)
            .and_then(|c| c.get("listChanged"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let empty = Map::new();
    match event {
        Event::ToolsListChanged if declared("tools") => Some(encode_notification(
            "notifications/tools/list_changed",
            &empty,
        )),
        Event::PromptsListChanged if declared("prompts") => Some(encode_notification(
            "notifications/prompts/list_changed",
            &empty,
        )),
        Event::ResourcesListChanged if declared("resources") => Some(encode_notification(
            "notifications/resources/list_changed",
            &empty,
        )),
        Event::ResourceUpdated(uri) if session.is_subscribed(uri) && hears(uri) => {
            let mut params = Map::new();
            params.insert("uri".into(), Value::from(&**uri));
            Some(encode_notification(
                "notifications/resources/updated",
                &params,
            ))
        }
        _ => None,
    }
}

/// After events may have been missed (an overflow, a lost bus): one
/// `list_changed` of each list the server declares, and a
/// `resources/updated` for each URI the session subscribed to that it
/// `hears`.
pub fn resync_for(
    session: &Session,
    capabilities: &Value,
    hears: &dyn Fn(&str) -> bool,
) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> = [
        Event::ToolsListChanged,
        Event::PromptsListChanged,
        Event::ResourcesListChanged,
    ]
    .iter()
    .filter_map(|e| notification_for(e, session, capabilities, hears))
    .collect();
    for uri in session.subscriptions() {
        if !hears(&uri) {
            continue;
        }
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        frames.push(encode_notification(
            "notifications/resources/updated",
            &params,
        ));
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Revision;
    use serde_json::json;

    #[test]
    fn only_declared_lists_and_subscribed_uris_are_announced() {
        let s = Session::new("s".into(), Revision::V2025_06_18, json!({}), None, None);
        let caps = json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}});
        let text = |e: &Event| {
            notification_for(e, &s, &caps, &|uri| uri != "test://hidden")
                .map(|f| String::from_utf8(f).unwrap())
        };
        assert_eq!(
            text(&Event::ToolsListChanged).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}"#
        );
        assert!(text(&Event::PromptsListChanged).is_none());
        assert!(text(&Event::ResourcesListChanged).is_none());
        assert!(text(&Event::ResourceUpdated("test://a".into())).is_none());
        s.subscribe("test://a");
        assert!(
            text(&Event::ResourceUpdated("test://a".into()))
                .unwrap()
                .contains("\"uri\":\"test://a\"")
        );
        s.subscribe("test://hidden");
        assert!(text(&Event::ResourceUpdated("test://hidden".into())).is_none());
        let resync = resync_for(&s, &caps, &|uri| uri != "test://hidden");
        assert_eq!(resync.len(), 2, "tools/list_changed and test://a");
        assert!(text(&Event::Shutdown).is_none());
    }
}
