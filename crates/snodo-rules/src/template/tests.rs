//! Tests of `template`.

use super::*;
use proptest::prelude::*;

type Expected = Option<&'static [(&'static str, &'static str)]>;

const NONE: Expected = None;

/// Matches every `(uri, expected bindings)` pair against `template`.
fn run(template: &str, cases: &[(&str, Expected)]) {
    let parsed = UriTemplate::parse(template)
        .unwrap_or_else(|error| panic!("{template:?} should parse: {error}"));
    for &(uri, expected) in cases {
        let expected: Option<Vec<(String, String)>> = expected.map(|pairs| {
            pairs
                .iter()
                .map(|&(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        });
        assert_eq!(
            parsed.matches(uri),
            expected,
            "template {template:?} against {uri:?}"
        );
        assert_eq!(
            parsed.matches_literal_uri(uri),
            expected.is_some(),
            "matches_literal_uri: template {template:?} against {uri:?}"
        );
    }
}

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

#[test]
fn percent_decoding() {
    run(
        "t://h/{v}",
        &[
            ("t://h/a%2Fb", Some(&[("v", "a/b")])),
            ("t://h/a%2fb", Some(&[("v", "a/b")])),
            ("t://h/%25", Some(&[("v", "%")])),
            ("t://h/%2541", Some(&[("v", "%41")])),
            ("t://h/%00", Some(&[("v", "\0")])),
            ("t://h/..", Some(&[("v", "..")])),
            ("t://h/%2E%2E", Some(&[("v", "..")])),
            ("t://h/%C3%A9t%C3%A9", Some(&[("v", "été")])),
            ("t://h/été", Some(&[("v", "été")])),
            ("t://h/a+b", Some(&[("v", "a+b")])),
            ("t://h/%2B", Some(&[("v", "+")])),
            ("t://h/%3F%23", Some(&[("v", "?#")])),
            ("t://h/%FF", NONE),
            ("t://h/%C3", NONE),
            ("t://h/%C3%28", NONE),
            ("t://h/%ED%A0%80", NONE),
            ("t://h/%zz", NONE),
            ("t://h/%", NONE),
            ("t://h/%4", NONE),
            ("t://h/a%", NONE),
            ("t://h/%%41", NONE),
            ("t://h/%+1", NONE),
        ],
    );
    // `%2F` decodes to `/` but does not split segments.
    run(
        "t://h/{v}/end",
        &[
            ("t://h/a%2Fb/end", Some(&[("v", "a/b")])),
            ("t://h/a/b/end", NONE),
        ],
    );
    run(
        "t://h/{+p}",
        &[
            ("t://h/a/%41", Some(&[("p", "a/A")])),
            ("t://h/a/%FF", NONE),
            ("t://h/a/%g0", NONE),
        ],
    );
    // Literal segments compare the raw text: no decoding.
    run(
        "t://h/data",
        &[("t://h/data", Some(&[])), ("t://h/%64ata", NONE)],
    );
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
fn repeated_variable_must_agree() {
    run(
        "r://h/{id}/copy/{id}",
        &[
            ("r://h/1/copy/1", Some(&[("id", "1")])),
            ("r://h/1/copy/%31", Some(&[("id", "1")])),
            ("r://h/1/copy/2", NONE),
        ],
    );
    run(
        "r://{id}/{id}",
        &[("r://a/a", Some(&[("id", "a")])), ("r://a/b", NONE)],
    );
    run(
        "r://h/{id}{?id}",
        &[
            ("r://h/1?id=1", Some(&[("id", "1")])),
            ("r://h/1", NONE),
            ("r://h/1?id=2", NONE),
        ],
    );
    run(
        "r://h{/id}{?id}",
        &[
            ("r://h", Some(&[])),
            ("r://h/1?id=1", Some(&[("id", "1")])),
            ("r://h/1", NONE),
            ("r://h?id=1", NONE),
        ],
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

#[test]
fn accessors() {
    let source = "r://{host}/{id}/x/{id}{?q}{&lang}";
    let template = UriTemplate::parse(source).unwrap();
    assert_eq!(template.as_str(), source);
    assert_eq!(template.to_string(), source);
    assert_eq!(
        template.variables().collect::<Vec<_>>(),
        ["host", "id", "q", "lang"]
    );
    assert_eq!(source.parse::<UriTemplate>(), Ok(template));
    let plain = UriTemplate::parse("docs://readme").unwrap();
    assert_eq!(plain.variables().count(), 0);
    assert!(plain.matches_literal_uri("docs://readme"));
    assert!(!plain.matches_literal_uri("docs://readme2"));
}

#[test]
fn refused_shapes_are_named() {
    let long = format!("x://h/{}", "a".repeat(1020));
    let many: String = (0..33).map(|i| format!("/{{v{i}}}")).collect();
    let many = format!("x://h{many}");
    let many_query: Vec<String> = (0..33).map(|i| format!("q{i}")).collect();
    let many_query = format!("x://h{{?{}}}", many_query.join(","));
    let cases: &[(&str, &str)] = &[
        (
            "docs://{#frag}",
            "unsupported template expression \"{#frag}\" (fragment expansion)",
        ),
        ("docs://h/{#frag}", "\"{#frag}\" (fragment expansion)"),
        ("docs://h/{id:3}", "\"{id:3}\" (prefix modifier)"),
        ("docs://h/{+id:3}", "\"{+id:3}\" (prefix modifier)"),
        ("docs://h/{?q:3}", "\"{?q:3}\" (prefix modifier)"),
        ("docs://h/file{.ext}", "\"{.ext}\" (label expansion)"),
        ("docs://h/{.}", "\"{.}\" (label expansion)"),
        ("docs://h/{;x}", "\"{;x}\" (path-style parameters)"),
        ("docs://h/{=x}", "\"{=x}\" (reserved operator \"=\")"),
        ("docs://h/{!x}", "reserved operator \"!\""),
        ("docs://h/{@x}", "reserved operator \"@\""),
        ("docs://h/{|x}", "reserved operator \"|\""),
        ("docs://h/{,x}", "reserved operator \",\""),
        (
            "docs://h/v{version}",
            "unsupported template segment \"v{version}\" \
             (mixed literal and expression in one segment)",
        ),
        (
            "docs://h/{version}v/x",
            "\"{version}v\" (mixed literal and expression",
        ),
        (
            "docs://h/{+path}.json",
            "\"{+path}.json\" (mixed literal and expression",
        ),
        (
            "docs://h/x{+path}",
            "\"x{+path}\" (mixed literal and expression",
        ),
        (
            "docs://h/repos{/owner}x",
            "\"{/owner}x\" (mixed literal and expression",
        ),
        (
            "docs://h/{a}{b}",
            "\"{a}{b}\" (more than one expression in one segment)",
        ),
        (
            "docs://h/{/a}{b}",
            "\"{/a}{b}\" (more than one expression in one segment)",
        ),
        ("docs://h/{a,b}", "\"{a,b}\" (multi-variable expression)"),
        ("docs://h/{+a,b}", "\"{+a,b}\" (multi-variable expression)"),
        ("docs://h{/a,b}", "\"{/a,b}\" (multi-variable expression)"),
        (
            "docs://h/{a*}",
            "\"{a*}\" (explode modifier outside {/var*})",
        ),
        (
            "docs://h/{+a*}",
            "\"{+a*}\" (explode modifier outside {/var*})",
        ),
        (
            "docs://h/{?q*}",
            "\"{?q*}\" (explode modifier outside {/var*})",
        ),
        (
            "docs://h/{&q*}",
            "\"{&q*}\" (explode modifier outside {/var*})",
        ),
        (
            "docs://h/{id",
            "unbalanced braces in template: \"{\" at byte 9 is never closed",
        ),
        ("docs://h/{a{b}}", "\"{\" at byte 9 is never closed"),
        (
            "docs://h/id}",
            "unbalanced braces in template: \"}\" at byte 11 has no matching",
        ),
        ("docs://h/{a}}", "\"}\" at byte 12 has no matching \"{\""),
        (
            "docs://h/{}",
            "invalid variable name \"\" in template expression \"{}\"",
        ),
        (
            "docs://h/{+}",
            "invalid variable name \"\" in template expression \"{+}\"",
        ),
        (
            "docs://h{/}",
            "invalid variable name \"\" in template expression \"{/}\"",
        ),
        (
            "docs://h{/*}",
            "invalid variable name \"\" in template expression \"{/*}\"",
        ),
        (
            "docs://h{?}",
            "invalid variable name \"\" in template expression \"{?}\"",
        ),
        (
            "docs://h{?q,}",
            "invalid variable name \"\" in template expression \"{?q,}\"",
        ),
        (
            "docs://h/{a-b}",
            "invalid variable name \"a-b\" in template expression \"{a-b}\"",
        ),
        ("docs://h/{a b}", "invalid variable name \"a b\""),
        ("docs://h/{a..b}", "invalid variable name \"a..b\""),
        ("docs://h/{a.}", "invalid variable name \"a.\""),
        ("docs://h/{%41}", "invalid variable name \"%41\""),
        ("docs://h/{é}", "invalid variable name \"é\""),
        (
            &long,
            "template is 1026 bytes long (at most 1024 are allowed)",
        ),
        (&many, "template has 33 variables (at most 32 are allowed)"),
        (
            &many_query,
            "template has 33 variables (at most 32 are allowed)",
        ),
        (
            "docs://h/{+a}/{+b}",
            "\"{+b}\" (second variable-length path expression after \"{+a}\")",
        ),
        (
            "docs://h/{+a}{/b}",
            "\"{/b}\" (second variable-length path expression after \"{+a}\")",
        ),
        (
            "docs://h{/a}{/b}",
            "\"{/b}\" (second variable-length path expression after \"{/a}\")",
        ),
        (
            "docs://h{/a*}/x{/b*}",
            "\"{/b*}\" (second variable-length path expression after",
        ),
        (
            "docs://h{/a}/{+b}",
            "\"{+b}\" (second variable-length path expression after \"{/a}\")",
        ),
        (
            "docs://h/search?q={q}",
            "unsupported literal \"?\" at byte 15 (literal query string; use {?name})",
        ),
        (
            "docs://h/page#top",
            "unsupported literal \"#\" at byte 13 (fragment)",
        ),
        (
            "docs://h{?q}/x",
            "unsupported literal \"/\" at byte 12 (literal text after a query expression)",
        ),
        (
            "docs://h{?q}{/x}",
            "\"{/x}\" (path expression after a query expression)",
        ),
        (
            "docs://h{?q}{id}",
            "\"{id}\" (path expression after a query expression)",
        ),
        (
            "docs://h{?q}{&q}",
            "\"{&q}\" (query parameter \"q\" named twice)",
        ),
        (
            "docs://h{?q,q}",
            "\"{?q,q}\" (query parameter \"q\" named twice)",
        ),
        (
            "{scheme}://x",
            "template expression \"{scheme}\" (expression in the scheme)",
        ),
        ("x{s}://x", "\"{s}\" (expression in the scheme)"),
        ("//host/{id}", "template has no scheme"),
        ("", "template has no scheme"),
        ("noscheme", "template has no scheme"),
        ("1x://h", "template has no scheme"),
        ("a_b://h", "template has no scheme"),
        (
            "docs://{a}.example.com/x",
            "unsupported template authority \"{a}.example.com\" \
             (mixed literal and expression; only a literal or one {var})",
        ),
        (
            "docs://{a}{b}/x",
            "authority \"{a}{b}\" (only a literal or one {var})",
        ),
        (
            "docs://{+host}/x",
            "authority \"{+host}\" (only a literal or one {var})",
        ),
        (
            "https://{host}{+path}",
            "authority \"{host}{+path}\" (only a literal or one {var})",
        ),
        (
            "docs://h:8080/x",
            "unsupported template authority \"h:8080\" (port or userinfo)",
        ),
        (
            "docs://u@h/x",
            "unsupported template authority \"u@h\" (port or userinfo)",
        ),
        (
            "file://",
            "unsupported template authority \"\" \
             (an empty authority must be followed by \"/\")",
        ),
        (
            "file://{/p*}",
            "an empty authority must be followed by \"/\"",
        ),
        (
            "file://{?q}",
            "an empty authority must be followed by \"/\"",
        ),
    ];
    for &(template, expected) in cases {
        let message = match UriTemplate::parse(template) {
            Ok(parsed) => panic!("{template:?} should be refused, got {parsed:?}"),
            Err(error) => error.to_string(),
        };
        assert!(
            message.contains(expected),
            "{template:?}: {message:?} should contain {expected:?}"
        );
    }
}

#[test]
fn limits_are_inclusive() {
    let exactly = format!("x://h/{}", "a".repeat(1018));
    assert_eq!(exactly.len(), 1024);
    assert!(UriTemplate::parse(&exactly).is_ok());
    let thirty_two: String = (0..32).map(|i| format!("/{{v{i}}}")).collect();
    let template = UriTemplate::parse(&format!("x://h{thirty_two}")).unwrap();
    assert_eq!(template.variables().count(), 32);
}

#[test]
fn error_implements_std_error() {
    let error: Box<dyn std::error::Error> = Box::new(UriTemplate::parse("x://h/{#f}").unwrap_err());
    assert_eq!(
        error.to_string(),
        "unsupported template expression \"{#f}\" (fragment expansion)"
    );
}

#[test]
fn large_uris_complete() {
    let big = "a".repeat(100 * 1024);
    let slashes = "a/".repeat(50 * 1024);
    let escapes = "%41".repeat(34 * 1024);
    let queries = "q=1&lang=2&".repeat(10 * 1024);
    let templates = [
        "file:///{+path}",
        "x://h/files{/path*}/end",
        "x://h/{a}/{b}/{c}",
        "x://h/{a}{/rest*}/{b}{?q,lang}",
        "x://{host}/{id}",
    ];
    let uris = [
        format!("file:///{big}"),
        format!("file:///{slashes}"),
        format!("x://h/files/{slashes}end"),
        format!("x://h/{escapes}"),
        format!("x://h/a/{slashes}b?{queries}"),
        format!("x://{big}/1"),
        big.clone(),
    ];
    for template in templates {
        let template = UriTemplate::parse(template).unwrap();
        for uri in &uris {
            let _ = template.matches(uri);
        }
    }
    let template = UriTemplate::parse("file:///{+path}").unwrap();
    let bound = template.matches(&format!("file:///{slashes}x")).unwrap();
    assert_eq!(bound[0].1.len(), slashes.len() + 1);
    let template = UriTemplate::parse("x://h/{v}").unwrap();
    let bound = template.matches(&format!("x://h/{escapes}")).unwrap();
    assert_eq!(bound[0].1, "A".repeat(34 * 1024));
}

fn fuzz_templates() -> Vec<UriTemplate> {
    [
        "test://template/{id}/data",
        "demo://greetings/{name}",
        "file:///{+path}",
        "https://{host}/repos{/owner}{?page,per_page}",
        "x://h/{a}{/rest*}/{b}{&x}",
        "r://{id}/{id}{?id}",
        "urn:{id}",
    ]
    .iter()
    .map(|t| UriTemplate::parse(t).unwrap())
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn matching_arbitrary_strings_never_panics(uri in ".{0,64}") {
        for template in fuzz_templates() {
            let _ = template.matches(&uri);
        }
    }

    #[test]
    fn matching_uri_like_strings_never_panics(
        prefix in "(test|file|https|x|r|urn|TEST)(:|://|:///)?",
        rest in "[a-z0-9/?&=%#:@\\[\\]{}+.é]{0,40}",
    ) {
        let uri = format!("{prefix}{rest}");
        for template in fuzz_templates() {
            let _ = template.matches(&uri);
        }
    }

    #[test]
    fn parsing_arbitrary_templates_never_panics(
        template in "([a-z]{1,3}:(//)?)?[a-z/{}+#./;?&=,*:0-9é]{0,30}",
        uri in "[a-z]{1,3}:[a-z/?&=%0-9]{0,20}",
    ) {
        if let Ok(parsed) = UriTemplate::parse(&template) {
            let _ = parsed.matches(&uri);
        }
    }

    #[test]
    fn segment_values_round_trip(id in "[A-Za-z0-9._~!$'()*+,;=:@-]{1,20}") {
        let template = UriTemplate::parse("test://template/{id}/data").unwrap();
        let uri = format!("test://template/{id}/data");
        prop_assert_eq!(
            template.matches(&uri),
            Some(vec![("id".to_owned(), id.clone())])
        );
    }
}
