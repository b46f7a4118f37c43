//! The crate root's public modules and prelude are the ones README's
//! "Layout" names, and the paths dependents use resolve.

use std::path::Path;

/// The public modules of the crate root, as README lists them.
const MODULES: &[&str] = &[
    "apps",
    "client",
    "error",
    "fuzzing",
    "handler",
    "model",
    "prompt",
    "proxy",
    "resource",
    "schema",
    "server",
    "skills",
    "task",
    "telemetry",
    "tool",
    "transport",
];

/// The names in `snodo::prelude`.
const PRELUDE: &[&str] = &[
    "Arguments",
    "BoxError",
    "CallResult",
    "Content",
    "Context",
    "HandlerError",
    "InputRequired",
    "IntoCallResult",
    "Server",
    "Tool",
    "ToolResult",
];

fn source(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// `pub mod NAME` at the start of a line of the crate root, but the hidden
/// `__private` and the prelude.
fn root_modules(lib: &str) -> Vec<String> {
    let mut names: Vec<String> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches([';', '{', ' ']).to_owned())
        .filter(|name| name != "__private" && name != "prelude")
        .collect();
    names.sort();
    names
}

#[test]
fn the_crate_root_has_the_modules_readme_names() {
    let lib = source("src/lib.rs");
    assert_eq!(root_modules(&lib), MODULES);
    let readme = source("../../README.md");
    let layout = &readme[readme.find("## Layout").unwrap()..];
    let paragraph = &layout[..layout.find("```text").unwrap()];
    for name in MODULES.iter().filter(|name| **name != "fuzzing") {
        assert!(
            paragraph.contains(&format!("`{name}`")),
            "README's layout omits `{name}`"
        );
    }
}

#[test]
fn the_prelude_holds_the_names_a_tool_needs() {
    let lib = source("src/lib.rs");
    let start = lib.find("pub mod prelude {").unwrap();
    let body = &lib[start..start + lib[start..].find("\n}\n").unwrap()];
    let uses = &body[body.find("pub use crate::{").unwrap() + "pub use crate::{".len()..];
    let uses = &uses[..uses.find('}').unwrap()];
    let mut names: Vec<&str> = uses
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    names.sort_unstable();
    assert_eq!(names, PRELUDE);
    assert_eq!(
        body.matches("pub use").count(),
        1,
        "one re-export in the prelude"
    );
}

/// The paths the workspace's other crates and the macros name resolve (a
/// compile-time check: this file fails to build otherwise).
#[test]
fn the_paths_dependents_name_resolve() {
    #[allow(unused_imports)]
    use snodo::handler::{
        BoxFuture, CancelSignal, Context, ElicitAction, ElicitResponse, FromCall, InputRequired,
        InputSchema, Rejection, Share, State, StateNeed,
    };
    #[allow(unused_imports)]
    use snodo::model::{LATEST_VERSION, LogLevel, Request, RequestId, Revision, decode};
    #[allow(unused_imports)]
    use snodo::server::events::{EventHub, bus::EventBus};
    #[allow(unused_imports)]
    use snodo::server::{StateSealer, keyring::Keyring};
    let _ = snodo::model::auth::challenge::MAX_CHALLENGES;
    assert_eq!(snodo::model::LATEST_VERSION, "2026-07-28");
}
