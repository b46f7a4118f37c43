//! Path expressions: `{var}` segments, `{+path}`, `{/var}` and `{/var*}`.

use super::{NONE, run};

#[test]
fn conformance_template() {
    run(
        "test://template/{id}/data",
        &[
            ("test://template/123/data", Some(&[("id", "123")])),
            (
                "test://template/abc-def_1.2~x/data",
                Some(&[("id", "abc-def_1.2~x")]),
            ),
            ("test://template//data", NONE),
            ("test://template/1/2/data", NONE),
            ("test://template/123/data/", NONE),
            ("test://template/123", NONE),
            ("test://template/123/Data", NONE),
            ("test://other/123/data", NONE),
            ("test:/template/123/data", NONE),
            ("test:template/123/data", NONE),
            ("test://template/123/data?x=1", NONE),
            ("test://template/123/data?", NONE),
            ("test://template/123/data#top", NONE),
            ("test://template/123/data#", NONE),
            ("test://template:80/123/data", NONE),
            ("test://template:/123/data", NONE),
            ("test://u@template/123/data", NONE),
            ("other://template/123/data", NONE),
            ("", NONE),
            ("test", NONE),
            ("test:", NONE),
        ],
    );
}

#[test]
fn simple_segment() {
    run(
        "demo://greetings/{name}",
        &[
            ("demo://greetings/Ada", Some(&[("name", "Ada")])),
            (
                "demo://greetings/Ada+Lovelace",
                Some(&[("name", "Ada+Lovelace")]),
            ),
            (
                "demo://greetings/Ada%20Lovelace",
                Some(&[("name", "Ada Lovelace")]),
            ),
            ("demo://greetings/", NONE),
            ("demo://greetings", NONE),
            ("demo://greetings/a/b", NONE),
            ("demo://Greetings/Ada", NONE),
            ("demo://greetings/Ada?lang=en", NONE),
        ],
    );
    run(
        "db://{table}/{id}",
        &[
            ("db://users/42", Some(&[("table", "users"), ("id", "42")])),
            ("db://users/", NONE),
            ("db:///42", NONE),
            ("db://users/42/x", NONE),
        ],
    );
    run(
        "db://x/{a}/{b}/{c}",
        &[
            ("db://x/1/2/3", Some(&[("a", "1"), ("b", "2"), ("c", "3")])),
            ("db://x/1/2", NONE),
            ("db://x/1/2/3/4", NONE),
            ("db://x/1//3", NONE),
        ],
    );
    run(
        "urn:{id}",
        &[
            ("urn:abc", Some(&[("id", "abc")])),
            ("URN:abc", Some(&[("id", "abc")])),
            ("urn:", NONE),
            ("urn://abc", NONE),
            ("urn:a/b", NONE),
        ],
    );
}

#[test]
fn reserved_expansion() {
    run(
        "file:///{+path}",
        &[
            ("file:///etc/hosts", Some(&[("path", "etc/hosts")])),
            ("file:///README.md", Some(&[("path", "README.md")])),
            ("file:///a/b/c/d.txt", Some(&[("path", "a/b/c/d.txt")])),
            ("file:///a/../etc", Some(&[("path", "a/../etc")])),
            ("file:///a%20b/c%2Fd", Some(&[("path", "a b/c/d")])),
            ("FILE:///x", Some(&[("path", "x")])),
            ("file:///", NONE),
            ("file://", NONE),
            ("file:///a//b", NONE),
            ("file:///a/", NONE),
            ("file:////a", NONE),
            ("file://host/etc/hosts", NONE),
            ("file:/etc/hosts", NONE),
            ("file:///etc/hosts?x=1", NONE),
            ("file:///etc/hosts#L1", NONE),
        ],
    );
    run(
        "repo://{owner}/{+path}/raw",
        &[
            (
                "repo://ada/src/lib.rs/raw",
                Some(&[("owner", "ada"), ("path", "src/lib.rs")]),
            ),
            ("repo://ada/x/raw", Some(&[("owner", "ada"), ("path", "x")])),
            (
                "repo://ada/raw/raw",
                Some(&[("owner", "ada"), ("path", "raw")]),
            ),
            ("repo://ada/raw", NONE),
            ("repo://ada/x/raw/", NONE),
            ("repo://ada/x/raw2", NONE),
        ],
    );
    run(
        "repo://h/{a}/{+p}/{b}/end",
        &[
            (
                "repo://h/1/x/y/z/2/end",
                Some(&[("a", "1"), ("p", "x/y/z"), ("b", "2")]),
            ),
            (
                "repo://h/1/x/2/end",
                Some(&[("a", "1"), ("p", "x"), ("b", "2")]),
            ),
            ("repo://h/1/2/end", NONE),
            ("repo://h/1/x/2/end/", NONE),
        ],
    );
}

#[test]
fn optional_segment() {
    run(
        "https://{host}/repos{/owner}{?page,per_page}",
        &[
            ("https://github.com/repos", Some(&[("host", "github.com")])),
            (
                "https://github.com/repos/ada",
                Some(&[("host", "github.com"), ("owner", "ada")]),
            ),
            (
                "https://github.com/repos/ada?page=2",
                Some(&[("host", "github.com"), ("owner", "ada"), ("page", "2")]),
            ),
            (
                "https://github.com/repos?per_page=5&page=1",
                Some(&[("host", "github.com"), ("page", "1"), ("per_page", "5")]),
            ),
            (
                "https://github.com/repos/ada?page=",
                Some(&[("host", "github.com"), ("owner", "ada"), ("page", "")]),
            ),
            ("https://github.com/repos/ada/x", NONE),
            ("https://github.com/repos/", NONE),
            ("https://github.com/reposada", NONE),
            ("https://github.com/repos?", NONE),
            ("https://github.com/repos?page=1&page=1", NONE),
            ("https://github.com/repos?page=1&page=2", NONE),
            ("https://github.com/repos?sort=asc", NONE),
            ("https://github.com/repos?page=1#x", NONE),
            ("https://github.com:443/repos", NONE),
            ("https://me@github.com/repos", NONE),
            ("https://github.com/users/ada", NONE),
        ],
    );
    run(
        "x://h{/a}/tail",
        &[
            ("x://h/tail", Some(&[])),
            ("x://h/1/tail", Some(&[("a", "1")])),
            ("x://h/1/2/tail", NONE),
            ("x://h//tail", NONE),
        ],
    );
}

#[test]
fn exploded_segments() {
    run(
        "x://h/files{/path*}",
        &[
            ("x://h/files", Some(&[])),
            ("x://h/files/a", Some(&[("path", "a")])),
            ("x://h/files/a/b/c", Some(&[("path", "a/b/c")])),
            ("x://h/files/a%2Fb", Some(&[("path", "a/b")])),
            ("x://h/files/", NONE),
            ("x://h/files/a//b", NONE),
            ("x://h/filesa", NONE),
        ],
    );
    run(
        "x://h{/path*}",
        &[
            ("x://h", Some(&[])),
            ("x://h/a/b", Some(&[("path", "a/b")])),
            ("x://h/", NONE),
        ],
    );
    run(
        "x://h/{a}{/rest*}/{b}",
        &[
            ("x://h/1/2", Some(&[("a", "1"), ("b", "2")])),
            (
                "x://h/1/m/n/2",
                Some(&[("a", "1"), ("rest", "m/n"), ("b", "2")]),
            ),
            ("x://h/1", NONE),
            ("x://h/1/2/", NONE),
        ],
    );
}
