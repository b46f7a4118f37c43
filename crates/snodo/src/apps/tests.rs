use super::*;
use serde_json::{Value, json};

#[test]
fn tool_meta_keeps_other_members() {
    let ui = ToolUi::new("ui://a/b.html").visibility([Visibility::Model, Visibility::App]);
    assert_eq!(
        ui.into_meta(Some(json!({"k": 1, "ui": {"old": true}}))),
        json!({"k": 1, "ui": {"resourceUri": "ui://a/b.html", "visibility": ["model", "app"]}})
    );
    assert_eq!(
        ToolUi::new("ui://a").into_meta(None),
        json!({"ui": {"resourceUri": "ui://a"}})
    );
}

#[test]
fn bindings_are_read_from_either_key() {
    let read = |v: Value| tool_binding(Some(&v));
    assert_eq!(
        read(json!({"ui": {"resourceUri": "ui://x"}})),
        Some(("ui://x".into(), false))
    );
    assert_eq!(
        read(json!({"ui/resourceUri": "ui://y"})),
        Some(("ui://y".into(), false))
    );
    assert_eq!(
        read(json!({"ui": {"resourceUri": "ui://x", "visibility": ["app"]}})),
        Some(("ui://x".into(), true))
    );
    assert_eq!(
        read(json!({"ui": {"resourceUri": "ui://x", "visibility": ["app", "model"]}})),
        Some(("ui://x".into(), false))
    );
    assert_eq!(read(json!({"ui": {}})), None);
    assert_eq!(tool_binding(None), None);
    assert_eq!(
        without_ui(&json!({"ui": {}, "ui/resourceUri": "u", "k": 1})),
        Some(json!({"k": 1}))
    );
    assert_eq!(without_ui(&json!({"ui": {}})), None);
}

#[test]
fn a_host_declares_apps_with_the_mime_type() {
    assert!(declared_by(
        &json!({"extensions": {EXTENSION: client_settings()}})
    ));
    assert!(!declared_by(&json!({"extensions": {EXTENSION: {}}})));
    assert!(!declared_by(&json!({})));
}
