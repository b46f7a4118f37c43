//! The contract every [`SessionDirectory`] keeps, as a test suite: [`run`]
//! panics on the first broken rule. `idle` is the idle time the directory
//! was made with (keep it short: the suite waits it out).
//!
//! The rules: records are created, read and changed by delta; unknown keys
//! are gone; a record holds at most [`MAX_RECORD_MEMBERS`] members and
//! [`MAX_RECORD_BYTES`] bytes, and a change past either is refused whole;
//! each change of the members counts a generation, and a reader that knows
//! the generation reads the state only; reading or changing a record
//! refreshes its idle expiry, and a record nobody used expires; and through
//! [`SessionRecords`], records round trip,
//! hold no session id, open across a key rotation, and a record whose parts
//! were forged, changed or moved is absent, and counted.

use std::time::Duration;

use serde_json::json;

use super::{
    Changed, Delta, Loaded, MAX_RECORD_BYTES, MAX_RECORD_MEMBERS, SessionDirectory, StoredRecord,
};
use crate::keyring::Keyring;
use crate::protocol::{LogLevel, Revision};
use crate::server::legacy::Opened;
use crate::server::legacy::{SessionRecord, SessionRecords};

fn unique(name: &str) -> String {
    let tail = crate::random::hex(8).expect("the operating system's random source");
    format!("contract-{name}-{tail}")
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

/// Runs every rule against `directory`.
pub async fn run(directory: impl SessionDirectory + Clone, idle: Duration) {
    records_change_by_delta(&directory).await;
    unknown_keys_are_gone(&directory).await;
    records_stay_within_their_bounds(&directory).await;
    idle_records_expire(&directory, idle).await;
    sealed_records_round_trip_and_hold_no_id(&directory).await;
    forged_changed_and_moved_records_are_absent(&directory).await;
    records_open_across_a_key_rotation(&directory).await;
}

async fn records_change_by_delta(dir: &impl SessionDirectory) {
    let key = unique("delta");
    let created = dir.create(&key, b"head", b"s1").await.unwrap();
    assert_eq!(created, Changed::Done(0));
    let fresh = StoredRecord::new(b"head".to_vec(), b"s1".to_vec(), Vec::new(), 0);
    assert_eq!(whole(dir, &key).await, Some(fresh));
    // A state change counts no generation.
    let state = dir.change(&key, Delta::SetState(b"s2")).await.unwrap();
    assert_eq!(state, Changed::Done(0));
    let mut generation = 0;
    for (name, value) in [
        ("demo://b", &b"2"[..]),
        ("demo://a", b"1"),
        ("demo://c", b"3"),
    ] {
        generation += 1;
        let added = dir.change(&key, Delta::Add { name, value }).await.unwrap();
        assert_eq!(added, Changed::Done(generation));
    }
    // Adding a member again replaces its value; removing one that is not
    // there changes nothing (and counts no generation).
    let again = Delta::Add {
        name: "demo://c",
        value: b"33",
    };
    assert_eq!(dir.change(&key, again).await.unwrap(), Changed::Done(4));
    let removed = Delta::Remove { name: "demo://b" };
    assert_eq!(dir.change(&key, removed).await.unwrap(), Changed::Done(5));
    let never = Delta::Remove {
        name: "demo://never",
    };
    assert_eq!(dir.change(&key, never).await.unwrap(), Changed::Done(5));
    let members = vec![
        ("demo://a".to_string(), b"1".to_vec()),
        ("demo://c".to_string(), b"33".to_vec()),
    ];
    let expected = StoredRecord::new(b"head".to_vec(), b"s2".to_vec(), members, 5);
    assert_eq!(
        whole(dir, &key).await,
        Some(expected.clone()),
        "members sorted by name, the state replaced, the head as created"
    );
    // A reader that knows the generation reads the state only; one that
    // knows another reads the whole record.
    assert_eq!(
        dir.load(&key, Some(5)).await.unwrap(),
        Some(Loaded::Unchanged(b"s2".to_vec()))
    );
    assert_eq!(
        dir.load(&key, Some(4)).await.unwrap(),
        Some(Loaded::Whole(expected))
    );
    // Creating again replaces the whole record.
    assert_eq!(
        dir.create(&key, b"new", b"s").await.unwrap(),
        Changed::Done(0)
    );
    let replaced = StoredRecord::new(b"new".to_vec(), b"s".to_vec(), Vec::new(), 0);
    assert_eq!(whole(dir, &key).await, Some(replaced));
    assert!(dir.remove(&key).await.unwrap());
    assert!(!dir.remove(&key).await.unwrap());
    assert_eq!(whole(dir, &key).await, None);
    assert_eq!(dir.load(&key, Some(0)).await.unwrap(), None);
}

async fn unknown_keys_are_gone(dir: &impl SessionDirectory) {
    let key = unique("never");
    assert_eq!(whole(dir, &key).await, None);
    for delta in [
        Delta::SetState(b"s"),
        Delta::Add {
            name: "demo://a",
            value: b"1",
        },
        Delta::Remove { name: "demo://a" },
    ] {
        assert_eq!(dir.change(&key, delta).await.unwrap(), Changed::Gone);
    }
    assert_eq!(whole(dir, &key).await, None, "a change creates nothing");
    assert!(!dir.remove(&key).await.unwrap());
}

async fn records_stay_within_their_bounds(dir: &impl SessionDirectory) {
    // Members.
    let key = unique("members");
    dir.create(&key, b"h", b"s").await.unwrap();
    for i in 0..MAX_RECORD_MEMBERS {
        let name = format!("m{i}");
        let added = dir
            .change(
                &key,
                Delta::Add {
                    name: &name,
                    value: b"v",
                },
            )
            .await;
        assert!(done(added.unwrap()), "member {i}");
    }
    let past = dir
        .change(
            &key,
            Delta::Add {
                name: "one-more",
                value: b"v",
            },
        )
        .await;
    assert_eq!(past.unwrap(), Changed::TooManyMembers);
    let replaced = dir
        .change(
            &key,
            Delta::Add {
                name: "m0",
                value: b"w",
            },
        )
        .await;
    assert!(done(replaced.unwrap()), "a member replaced is no new one");
    dir.change(&key, Delta::Remove { name: "m1" })
        .await
        .unwrap();
    let room = dir
        .change(
            &key,
            Delta::Add {
                name: "one-more",
                value: b"v",
            },
        )
        .await;
    assert!(done(room.unwrap()), "a removed member makes room");
    let stored = whole(dir, &key).await.unwrap();
    assert_eq!(stored.members.len(), MAX_RECORD_MEMBERS);
    dir.remove(&key).await.unwrap();
    // Bytes.
    let key = unique("bytes");
    let too_big = vec![b'h'; MAX_RECORD_BYTES];
    assert_eq!(
        dir.create(&key, &too_big, b"s").await.unwrap(),
        Changed::TooLarge
    );
    assert_eq!(whole(dir, &key).await, None);
    let head = vec![b'h'; MAX_RECORD_BYTES - 20];
    assert!(done(dir.create(&key, &head, b"0123456789").await.unwrap()));
    // 10 bytes left: a member of 11 bytes does not fit, one of 10 does.
    let over = dir
        .change(
            &key,
            Delta::Add {
                name: "m",
                value: b"0123456789",
            },
        )
        .await;
    assert_eq!(over.unwrap(), Changed::TooLarge);
    let fits = dir
        .change(
            &key,
            Delta::Add {
                name: "m",
                value: b"012345678",
            },
        )
        .await;
    assert_eq!(fits.unwrap(), Changed::Done(1));
    let state = dir.change(&key, Delta::SetState(b"0123456789a")).await;
    assert_eq!(state.unwrap(), Changed::TooLarge);
    let stored = whole(dir, &key).await.unwrap();
    assert_eq!(
        stored.generation, 1,
        "a refused change counts no generation"
    );
    assert_eq!(stored.size(), MAX_RECORD_BYTES);
    assert_eq!(
        stored.state, b"0123456789",
        "a refused change wrote nothing"
    );
    // Replacing a member counts its new size only.
    let replaced = dir
        .change(
            &key,
            Delta::Add {
                name: "m",
                value: b"01234",
            },
        )
        .await;
    assert!(done(replaced.unwrap()));
    let state = dir.change(&key, Delta::SetState(b"0123456789abcd")).await;
    assert!(done(state.unwrap()));
    assert_eq!(whole(dir, &key).await.unwrap().size(), MAX_RECORD_BYTES);
    dir.remove(&key).await.unwrap();
}

async fn idle_records_expire(dir: &impl SessionDirectory, idle: Duration) {
    let (read, changed, left) = (unique("read"), unique("changed"), unique("left"));
    for key in [&read, &changed, &left] {
        dir.create(key, b"h", b"s").await.unwrap();
    }
    let step = idle / 3;
    for i in 0..5 {
        tokio::time::sleep(step).await;
        assert!(dir.load(&read, Some(0)).await.unwrap().is_some());
        let name = format!("m{i}");
        let kept = dir
            .change(
                &changed,
                Delta::Add {
                    name: &name,
                    value: b"v",
                },
            )
            .await;
        assert!(done(kept.unwrap()));
    }
    assert_eq!(
        whole(dir, &left).await,
        None,
        "a record nobody used for longer than the idle time expired"
    );
    assert_eq!(
        dir.change(&left, Delta::SetState(b"s")).await.unwrap(),
        Changed::Gone
    );
    dir.remove(&read).await.unwrap();
    dir.remove(&changed).await.unwrap();
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

async fn sealed_records_round_trip_and_hold_no_id<D: SessionDirectory + Clone>(dir: &D) {
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

async fn forged_changed_and_moved_records_are_absent<D: SessionDirectory + Clone>(dir: &D) {
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

async fn records_open_across_a_key_rotation<D: SessionDirectory + Clone>(dir: &D) {
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
