//! Property tests: the decoder returns a message or an error for any bytes,
//! and never panics.

use proptest::prelude::*;
use snodo::model::{Limits, Message, decode};

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number)),
        ".{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-z_]{0,8}|id|method|jsonrpc|params|result", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode(&bytes, &Limits::default());
    }

    #[test]
    fn arbitrary_json_never_panics(value in json_value()) {
        let bytes = serde_json::to_vec(&value).unwrap();
        let _ = decode(&bytes, &Limits::default());
    }

    #[test]
    fn truncated_requests_are_errors_not_panics(cut in 0usize..80) {
        let full = br#"{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}"#;
        let cut = cut.min(full.len());
        let result = decode(&full[..cut], &Limits::default());
        if cut < full.len() {
            prop_assert!(result.is_err());
        } else {
            prop_assert!(matches!(result, Ok(Message::Request(_))));
        }
    }

    #[test]
    fn deep_nesting_is_bounded(depth in 1usize..20_000) {
        let text = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"a\":{}{}}}}}", "[".repeat(depth), "]".repeat(depth));
        let limits = Limits::default();
        let result = decode(text.as_bytes(), &limits);
        if depth + 2 > limits.max_depth {
            prop_assert_eq!(result.unwrap_err().error.code(), -32700);
        } else {
            prop_assert!(result.is_ok());
        }
    }
}
