//! Trace and span ids: random, never all zeros, from a per-thread
//! generator seeded by the standard library's random hasher keys.

use std::cell::Cell;
use std::hash::{BuildHasher, Hasher};

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish()
}

/// The next 64 random bits (SplitMix64).
fn next() -> u64 {
    STATE.with(|s| {
        let x = s.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        s.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

/// A new trace id.
pub(crate) fn trace_id() -> [u8; 16] {
    loop {
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&next().to_be_bytes());
        id[8..].copy_from_slice(&next().to_be_bytes());
        if id != [0; 16] {
            return id;
        }
    }
}

/// A new span id.
pub(crate) fn span_id() -> [u8; 8] {
    loop {
        let id = next().to_be_bytes();
        if id != [0; 8] {
            return id;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_differ_within_and_across_threads() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(super::span_id()));
        }
        let other = std::thread::spawn(|| (0..1000).map(|_| super::span_id()).collect::<Vec<_>>())
            .join()
            .unwrap();
        for id in other {
            assert!(seen.insert(id));
        }
        assert_ne!(super::trace_id(), super::trace_id());
    }
}
