//! Refused templates: each shape named, the limits, and the error type.

use crate::template::UriTemplate;

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
