//! The scheme and the authority: a `{var}` host, an empty authority, and a
//! scheme matched case-insensitively.

use super::{NONE, run};

#[test]
fn authority_variable() {
    run(
        "https://{host}/status",
        &[
            (
                "https://example.com/status",
                Some(&[("host", "example.com")]),
            ),
            ("https://[::1]/status", Some(&[("host", "[::1]")])),
            ("https://ex%41mple/status", Some(&[("host", "exAmple")])),
            ("https:///status", NONE),
            ("https://example.com:443/status", NONE),
            ("https://[::1]:443/status", NONE),
            ("https://[::1/status", NONE),
            ("https://[/status", NONE),
            ("https://user@example.com/status", NONE),
            ("https://user:pw@example.com/status", NONE),
            ("https://example.com/status/", NONE),
            ("https://example.com", NONE),
        ],
    );
    run(
        "https://{host}",
        &[
            ("https://example.com", Some(&[("host", "example.com")])),
            ("https://example.com/", NONE),
            ("https://", NONE),
        ],
    );
    run(
        "https://example.com",
        &[
            ("https://example.com", Some(&[])),
            ("HTTPS://example.com", Some(&[])),
            ("https://example.com/", NONE),
            ("https://example.org", NONE),
            ("https://example.com:443", NONE),
        ],
    );
    run("https://[::1]/x", &[("https://[::1]/x", Some(&[]))]);
}

#[test]
fn scheme_is_case_insensitive() {
    run(
        "test://template/{id}/data",
        &[
            ("TEST://template/1/data", Some(&[("id", "1")])),
            ("TeSt://template/1/data", Some(&[("id", "1")])),
            ("tests://template/1/data", NONE),
            ("tes://template/1/data", NONE),
            // Only the scheme: the authority literal is compared exactly.
            ("test://TEMPLATE/1/data", NONE),
        ],
    );
    run(
        "TEST://template/{id}/data",
        &[("test://template/1/data", Some(&[("id", "1")]))],
    );
    run(
        "my+app.v-1://x/{id}",
        &[("MY+APP.V-1://x/1", Some(&[("id", "1")]))],
    );
}

#[test]
fn empty_authority() {
    run(
        "file:///etc/{name}",
        &[
            ("file:///etc/hosts", Some(&[("name", "hosts")])),
            ("file://localhost/etc/hosts", NONE),
            ("file:/etc/hosts", NONE),
        ],
    );
    run("file:///", &[("file:///", Some(&[])), ("file://", NONE)]);
}
