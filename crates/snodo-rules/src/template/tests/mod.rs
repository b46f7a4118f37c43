//! Tests of `template`.

mod authority;
mod fuzz;
mod paths;
mod query;
mod refusals;
mod values;

use super::UriTemplate;

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
