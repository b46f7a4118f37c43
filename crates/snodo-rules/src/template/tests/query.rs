//! Query expressions: `{?a,b}` and `{&x}`.

use super::{NONE, run};

#[test]
fn query_parameters() {
    run(
        "s://h/search{?q,lang}",
        &[
            ("s://h/search", Some(&[])),
            ("s://h/search?q=rust", Some(&[("q", "rust")])),
            (
                "s://h/search?lang=en&q=rust",
                Some(&[("q", "rust"), ("lang", "en")]),
            ),
            ("s://h/search?q=", Some(&[("q", "")])),
            ("s://h/search?q=&lang=", Some(&[("q", ""), ("lang", "")])),
            ("s://h/search?q=a+b", Some(&[("q", "a+b")])),
            ("s://h/search?q=a%20b%26c", Some(&[("q", "a b&c")])),
            ("s://h/search?q=a=b", Some(&[("q", "a=b")])),
            ("s://h/search?q=a/b:c@d", Some(&[("q", "a/b:c@d")])),
            ("s://h/search?q=%E2%82%AC", Some(&[("q", "€")])),
            ("s://h/search?", NONE),
            ("s://h/search?q", NONE),
            ("s://h/search?=1", NONE),
            ("s://h/search?q=1&", NONE),
            ("s://h/search?&q=1", NONE),
            ("s://h/search?q=1&&lang=en", NONE),
            ("s://h/search?q=1&q=2", NONE),
            ("s://h/search?q=1&q=1", NONE),
            ("s://h/search?Q=1", NONE),
            ("s://h/search?q%3D1", NONE),
            ("s://h/search?q=1&page=2", NONE),
            ("s://h/search?q=%zz", NONE),
            ("s://h/search?q=%FF", NONE),
            ("s://h/search?q=1#frag", NONE),
            ("s://h/search/?q=1", NONE),
            ("s://h/search/", NONE),
        ],
    );
    run(
        "s://h/search{?q}{&x}",
        &[
            ("s://h/search?x=1&q=2", Some(&[("q", "2"), ("x", "1")])),
            ("s://h/search?x=1", Some(&[("x", "1")])),
            ("s://h/search?x=1&x=1", NONE),
        ],
    );
    run(
        "s://h/search{&x}",
        &[
            ("s://h/search?x=1", Some(&[("x", "1")])),
            ("s://h/search", Some(&[])),
            ("s://h/search?x=", Some(&[("x", "")])),
            ("s://h/search?y=1", NONE),
            ("s://h/search&x=1", NONE),
            ("s://h/search?&x=1", NONE),
        ],
    );
    run(
        "s://h/search{&x,y}",
        &[("s://h/search?y=2&x=1", Some(&[("x", "1"), ("y", "2")]))],
    );
    run(
        "s://h{?q}",
        &[
            ("s://h?q=1", Some(&[("q", "1")])),
            ("s://h", Some(&[])),
            ("s://h/?q=1", NONE),
        ],
    );
    run(
        "s://h/{id}{?v}",
        &[
            ("s://h/7?v=1", Some(&[("id", "7"), ("v", "1")])),
            ("s://h/?v=1", NONE),
        ],
    );
    run(
        "s://h/plain",
        &[
            ("s://h/plain", Some(&[])),
            ("s://h/plain?", NONE),
            ("s://h/plain?a=1", NONE),
        ],
    );
}
