//! What snodo seals into a directory's records, over the memory directory
//! (any directory keeping the `snodo-test` crate's `session_directory`
//! rules stores the same bytes): records round trip and hold no session id,
//! a record whose parts were forged, changed or moved is absent and
//! counted, and records open across a key rotation.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Changed, Delta, Loaded, MemoryDirectory, SessionDirectory, StoredRecord};
use crate::keyring::Keyring;
use crate::protocol::{LogLevel, Revision};
use crate::server::legacy::Opened;
use crate::server::legacy::{SessionRecord, SessionRecords};

fn unique(name: &str) -> String {
    let tail = crate::random::hex(8).expect("the operating system's random source");
    format!("sealed-{name}-{tail}")
}

/// The whole record of `key`, read as a node with no copy reads it.
async fn whole(dir: &impl SessionDirectory, key: &str) -> Option<StoredRecord> {
    match dir.load(key, None).await.expect("load") {
        None => None,
        Some(Loaded::Whole(record)) => Some(record),
        Some(other) => panic!("a reader that knows no generation gets the whole record: {other:?}"),
    }
}

fn done(changed: Changed) -> bool {
    matches!(changed, Changed::Done(_))
}

fn directory() -> Arc<MemoryDirectory> {
    Arc::new(MemoryDirectory::new(100, Duration::from_secs(60)))
}

#[tokio::test]
async fn sealed_records_round_trip_and_hold_no_id() {
    sealed_round_trip(&directory()).await;
}

#[tokio::test]
async fn forged_changed_and_moved_records_are_absent() {
    forged_changed_and_moved(&directory()).await;
}

#[tokio::test]
async fn records_open_across_a_key_rotation() {
    key_rotation(&directory()).await;
}

/// A keyring of `(id, byte)` keys, each secret 32 times its byte (the last
/// seals).
fn keyring(lines: &[(&str, u8)]) -> Keyring {
    Keyring::parse(&keyring_text(lines)).expect("a keyring")
}

fn full_record(id: &str) -> SessionRecord {
    let mut record = SessionRecord::new(id, Revision::V2025_06_18);
    record.client_capabilities = json!({"roots": {"listChanged": true}});
    record.client_info = Some(json!({"name": "contract", "version": "1"}));
    record
}

async fn sealed_round_trip<D: SessionDirectory + Clone>(dir: &D) {
    let records = SessionRecords::new(dir.clone(), keyring(&[("k1", 1)]));
    let id = unique("sealed");
    let home = records.home_for_new(&id);
    assert!(!home.key.contains(&id));
    let mut record = full_record(&id);
    record.owner = records.owner_tag(&home, &id, "alice");
    assert!(
        record
            .owner
            .as_deref()
            .is_some_and(|o| !o.contains("alice"))
    );
    assert_eq!(
        records.create(&home, &record).await.unwrap(),
        Changed::Done(0)
    );
    records
        .set_state(&home, true, Some(LogLevel::Notice))
        .await
        .unwrap();
    for uri in ["demo://b/c", "demo://a"] {
        assert!(done(records.subscribe(&home, uri).await.unwrap()));
    }
    record.initialized = true;
    record.log_level = Some(LogLevel::Notice);
    record.subscriptions = vec!["demo://a".into(), "demo://b/c".into()];
    assert_eq!(
        records.find(&id).await.unwrap(),
        Some((home.clone(), record.clone(), 2))
    );
    records.unsubscribe(&home, "demo://b/c").await.unwrap();
    record.subscriptions.pop();
    let opened = Opened::Whole {
        record: Box::new(record.clone()),
        generation: 3,
    };
    assert_eq!(records.load(&home, &id, None).await.unwrap(), Some(opened));
    let state = Opened::Unchanged {
        initialized: true,
        log_level: Some(LogLevel::Notice),
    };
    assert_eq!(
        records.load(&home, &id, Some(3)).await.unwrap(),
        Some(state)
    );
    // Nothing stored names the session or its owner.
    let stored = whole(dir, &home.key).await.unwrap();
    let mut bytes = stored.head.clone();
    bytes.extend_from_slice(&stored.state);
    for (name, value) in &stored.members {
        bytes.extend_from_slice(name.as_bytes());
        bytes.extend_from_slice(value);
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains(&id) && !text.contains("alice"), "{text}");
    assert_eq!(records.refused(), 0);
    assert!(records.remove(&home).await.unwrap());
    assert_eq!(records.find(&id).await.unwrap(), None);
}

async fn forged_changed_and_moved<D: SessionDirectory + Clone>(dir: &D) {
    let records = SessionRecords::new(dir.clone(), keyring(&[("k1", 1)]));
    let (a, b) = (unique("a"), unique("b"));
    let (home_a, home_b) = (records.home_for_new(&a), records.home_for_new(&b));
    records.create(&home_a, &full_record(&a)).await.unwrap();
    records.create(&home_b, &full_record(&b)).await.unwrap();
    records.subscribe(&home_a, "demo://a").await.unwrap();
    let stored_a = whole(dir, &home_a.key).await.unwrap();
    let stored_b = whole(dir, &home_b.key).await.unwrap();
    let mut refused = 0;
    // A's head in B's place.
    dir.create(&home_b.key, &stored_a.head, &stored_b.state)
        .await
        .unwrap();
    absent(&records, &b, &mut refused, "a head moved").await;
    // B's head, changed.
    let mut changed = stored_b.head.clone();
    let at = changed.len() - 2;
    changed[at] ^= 1;
    dir.create(&home_b.key, &changed, &stored_b.state)
        .await
        .unwrap();
    absent(&records, &b, &mut refused, "a head changed").await;
    // A state sealed with another key of the same id.
    dir.create(&home_b.key, &stored_b.head, &stored_b.state)
        .await
        .unwrap();
    let other = SessionRecords::new(dir.clone(), keyring(&[("k1", 9)]));
    other.set_state(&home_b, true, None).await.unwrap();
    absent(&records, &b, &mut refused, "a state sealed elsewhere").await;
    // A's member in B's record; a member of nobody's.
    dir.create(&home_b.key, &stored_b.head, &stored_b.state)
        .await
        .unwrap();
    let (name, value) = &stored_a.members[0];
    dir.change(&home_b.key, Delta::Add { name, value })
        .await
        .unwrap();
    absent(&records, &b, &mut refused, "a member moved").await;
    dir.change(&home_b.key, Delta::Remove { name })
        .await
        .unwrap();
    dir.change(
        &home_b.key,
        Delta::Add {
            name: "demo://x",
            value: b"garbage",
        },
    )
    .await
    .unwrap();
    absent(&records, &b, &mut refused, "a member forged").await;
    dir.change(&home_b.key, Delta::Remove { name: "demo://x" })
        .await
        .unwrap();
    assert!(
        records.find(&b).await.unwrap().is_some(),
        "B restored opens"
    );
    assert!(
        records.find(&a).await.unwrap().is_some(),
        "A was never touched"
    );
    records.remove(&home_a).await.unwrap();
    records.remove(&home_b).await.unwrap();
}

/// Checks that the record of `id` is absent, and counted as refused.
async fn absent(records: &SessionRecords, id: &str, refused: &mut u64, what: &str) {
    assert_eq!(records.find(id).await.unwrap(), None, "{what}: absent");
    *refused += 1;
    assert_eq!(records.refused(), *refused, "{what}: counted");
}

async fn key_rotation<D: SessionDirectory + Clone>(dir: &D) {
    let keys = keyring(&[("k1", 1)]);
    let records = SessionRecords::new(dir.clone(), keys.clone());
    let id = unique("rotated");
    let home = records.home_for_new(&id);
    let mut record = full_record(&id);
    record.owner = records.owner_tag(&home, &id, "alice");
    records.create(&home, &record).await.unwrap();
    // The new key opens, then seals: the record keeps its name, its owner
    // digest, and parts sealed with either key open.
    keys.reload(&keyring_text(&[("k2", 2), ("k1", 1)])).unwrap();
    keys.reload(&keyring_text(&[("k1", 1), ("k2", 2)])).unwrap();
    records.set_state(&home, true, None).await.unwrap();
    records.subscribe(&home, "demo://a").await.unwrap();
    let (found, opened, _) = records.find(&id).await.unwrap().expect("found under k1");
    assert_eq!(found, home);
    assert_eq!(records.owner_tag(&found, &id, "alice"), record.owner);
    assert!(opened.initialized);
    assert_eq!(opened.subscriptions, ["demo://a"]);
    // A session opened now lives under k2.
    let newer = unique("newer");
    let newer_home = records.home_for_new(&newer);
    assert_eq!(newer_home.kid, "k2");
    records
        .create(&newer_home, &full_record(&newer))
        .await
        .unwrap();
    // Without k1, the old session is gone; the newer one stays.
    keys.reload(&keyring_text(&[("k2", 2)])).unwrap();
    assert_eq!(records.find(&id).await.unwrap(), None);
    assert!(records.find(&newer).await.unwrap().is_some());
    records.remove(&home).await.unwrap();
    records.remove(&newer_home).await.unwrap();
}

fn keyring_text(lines: &[(&str, u8)]) -> String {
    use base64::Engine;
    lines
        .iter()
        .map(|(id, byte)| {
            format!(
                "{id}={}\n",
                base64::engine::general_purpose::STANDARD.encode([*byte; 32])
            )
        })
        .collect()
}
