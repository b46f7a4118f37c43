//! Session records, as a node opens what a directory returns: parts nobody
//! sealed never open, and sealed parts of any JSON open to a record or are
//! refused, never a panic; a record opens only as the session it belongs
//! to. Input: a mode byte, then the head and the state (and for the sealed
//! mode, member names) separated by `\n`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::fuzzing::{open_record, seal_record_member, seal_record_part};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut pieces = rest.split(|b| *b == b'\n');
    let head = pieces.next().unwrap_or_default();
    let state = pieces.next().unwrap_or_default();
    // A directory holds each member name once.
    let mut names: Vec<String> = pieces
        .take(64)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    names.sort();
    names.dedup();
    if mode % 2 == 0 {
        let members: Vec<(String, Vec<u8>)> = names
            .iter()
            .map(|n| (n.clone(), n.as_bytes().to_vec()))
            .collect();
        assert!(
            open_record("fuzz", head, state, &members).is_none(),
            "a record nobody sealed opened"
        );
        return;
    }
    let (head, state) = (
        seal_record_part("fuzz", "h", head),
        seal_record_part("fuzz", "s", state),
    );
    let members: Vec<(String, Vec<u8>)> = names
        .iter()
        .map(|n| (n.clone(), seal_record_member("fuzz", n)))
        .collect();
    if let Some(record) = open_record("fuzz", &head, &state, &members) {
        assert_eq!(record.id, "fuzz");
        assert!(record.revision.is_legacy());
        assert_eq!(record.subscriptions, names);
        assert!(open_record("other", &head, &state, &members).is_none());
        // Swapped parts never open.
        assert!(open_record("fuzz", &state, &head, &members).is_none());
    }
});
