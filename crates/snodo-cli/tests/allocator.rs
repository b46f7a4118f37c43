//! The command's allocator: mimalloc with the default features.

#![cfg(feature = "mimalloc")]

use std::process::Command;

/// mimalloc announces its start when asked to be verbose: the process that
/// runs is the `snodo` binary with mimalloc as its global allocator.
#[test]
fn the_command_allocates_with_mimalloc() {
    let out = Command::new(env!("CARGO_BIN_EXE_snodo"))
        .arg("--version")
        .env("MIMALLOC_VERBOSE", "1")
        .output()
        .expect("snodo runs");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mimalloc: process init"),
        "no mimalloc start in: {stderr}"
    );
}
