//! Bound values: percent-decoding, a repeated variable, the accessors, and
//! large URIs.

use super::{NONE, run};
use crate::template::UriTemplate;

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
