//! Arbitrary templates and URIs never panic, and segment values round-trip.

use proptest::prelude::*;

use crate::template::UriTemplate;

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
