//! Task records as a store returns them (the JSON the SQLite and Postgres
//! stores keep): a record that decodes encodes and decodes to the same
//! record, and its status names itself. Input: the stored JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::task::{TaskRecord, TaskStatus};

fuzz_target!(|data: &[u8]| {
    let Ok(record) = serde_json::from_slice::<TaskRecord>(data) else {
        return;
    };
    let stored = serde_json::to_string(&record).expect("a record encodes");
    let again: TaskRecord = serde_json::from_str(&stored).expect("an encoded record decodes");
    assert_eq!(again, record, "{stored}");
    assert_eq!(
        TaskStatus::parse(record.status.as_str()),
        Some(record.status)
    );
});
