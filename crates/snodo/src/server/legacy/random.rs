//! Unguessable ids of the initialize era: session ids, the ids of requests
//! the server sends, elicitation ids.

/// 128 random bits from the operating system, as 32 lowercase hex digits.
pub(crate) fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    // The OS generator does not fail on supported platforms; should it, the
    // clock and a counter still give a unique (if guessable) id rather than
    // a panic.
    if getrandom::fill(&mut bytes).is_err() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        bytes[..8].copy_from_slice(&(now as u64).to_le_bytes());
        bytes[8..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
