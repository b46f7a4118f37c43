//! The contract every [`SessionDirectory`] keeps, as a test suite: [`run`]
//! panics on the first broken rule. `idle` is the idle time the directory
//! was made with (keep it short: the suite waits it out).
//!
//! The rules: records are created, read and changed by delta; unknown keys
//! are gone; a record holds at most [`MAX_RECORD_MEMBERS`] members and
//! [`MAX_RECORD_BYTES`] bytes, and a change past either is refused whole;
//! each change of the members counts a generation, and a reader that knows
//! the generation reads the state only; reading or changing a record
//! refreshes its idle expiry, and a record nobody used expires.
//!
//! A directory stores bytes and is trusted with nothing else: what snodo
//! seals into a record (no session id in it, forged, changed or moved parts
//! refused, keys rotated) is snodo's own and tested there, over any
//! directory that keeps these rules.

use std::time::Duration;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use snodo::server::legacy::{
    Changed, Delta, Loaded, MAX_RECORD_BYTES, MAX_RECORD_MEMBERS, SessionDirectory, StoredRecord,
};

/// A key no other run uses: the directory may be shared and outlive the run.
fn unique(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("contract-{name}-{}-{now:x}-{n}", std::process::id())
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
pub async fn run(directory: impl SessionDirectory, idle: Duration) {
    records_change_by_delta(&directory).await;
    unknown_keys_are_gone(&directory).await;
    records_stay_within_their_bounds(&directory).await;
    idle_records_expire(&directory, idle).await;
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
