//! Property tests: what the nodes of a service share (bus envelopes, session
//! records) opens only when sealed with a key of the ring, and opening never
//! panics, whatever the bytes.
#![cfg(feature = "fuzzing")]

use proptest::prelude::*;
use snodo::fuzzing::{
    open_envelope, open_record, seal_envelope, seal_record_member, seal_record_part,
};

fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        "[a-z0-9:/._-]{0,12}".prop_map(serde_json::Value::from),
        prop_oneof![
            Just("2025-11-25"),
            Just("2025-06-18"),
            Just("tools"),
            Just("updated"),
            Just("answer"),
            Just("info"),
        ]
        .prop_map(serde_json::Value::from),
    ];
    let value = leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map(
                "o|s|t|e|k|uri|sid|w|c|response|id|r|i|n|l|[a-z]{0,3}",
                inner,
                0..7
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    });
    value.prop_map(|v| v.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn bytes_nobody_sealed_never_open(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        prop_assert!(open_envelope(&bytes).is_none());
        let mut prefixed = b"b1.fuzz.".to_vec();
        prefixed.extend_from_slice(&bytes);
        prop_assert!(open_envelope(&prefixed).is_none());
        prop_assert!(open_record("s", &bytes, &bytes, &[]).is_none());
    }

    #[test]
    fn sealed_envelopes_open_to_themselves(json in json_text()) {
        let sealed = seal_envelope(json.as_bytes());
        if let Some(again) = open_envelope(&sealed) {
            prop_assert_eq!(open_envelope(&again), Some(again.clone()));
            let mut changed = again.clone();
            let last = changed.len() - 1;
            changed[last] ^= 1;
            prop_assert!(open_envelope(&changed).is_none());
        }
    }

    #[test]
    fn sealed_records_open_as_their_own_session_only(
        head in json_text(),
        state in json_text(),
        names in prop::collection::vec("[a-z:/]{0,8}", 0..4),
    ) {
        let (head, state) = (
            seal_record_part("s", "h", head.as_bytes()),
            seal_record_part("s", "s", state.as_bytes()),
        );
        let members: Vec<(String, Vec<u8>)> =
            names.iter().map(|n| (n.clone(), seal_record_member("s", n))).collect();
        if let Some(record) = open_record("s", &head, &state, &members) {
            prop_assert!(record.revision.is_legacy());
            prop_assert!(open_record("t", &head, &state, &members).is_none());
            prop_assert!(open_record("s", &state, &head, &members).is_none());
        }
    }
}

#[test]
fn well_formed_sealed_parts_open() {
    let sealed = seal_envelope(br#"{"o":"n","s":1,"t":5,"sid":"k","c":{"k":"ended"}}"#);
    assert!(open_envelope(&sealed).is_some());
    let head = seal_record_part("s", "h", br#"{"r":"2025-06-18","c":{},"w":"o"}"#);
    let state = seal_record_part("s", "s", br#"{"n":false,"l":"debug"}"#);
    let members = vec![("demo://a".to_string(), seal_record_member("s", "demo://a"))];
    let record = open_record("s", &head, &state, &members).expect("a record");
    assert_eq!(record.subscriptions, ["demo://a"]);
    assert_eq!(record.owner.as_deref(), Some("o"));
}
