//! RFC 6570 resource templates: any template text parses or is refused, and
//! matching any URI against a parsed template binds only the template's own
//! variables, once each, in template order. Input: template, a NUL byte, URI.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo_rules::UriTemplate;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\0').unwrap_or((&text, ""));
    let Ok(parsed) = UriTemplate::parse(template) else {
        return;
    };
    let names: Vec<&str> = parsed.variables().collect();
    for candidate in [uri, template, parsed.as_str()] {
        if let Some(bindings) = parsed.matches(candidate) {
            let mut at = 0;
            for (name, _) in &bindings {
                let i = names[at..]
                    .iter()
                    .position(|n| n == name)
                    .unwrap_or_else(|| panic!("{name:?} bound out of order or not a variable"));
                at += i + 1;
            }
            assert_eq!(parsed.matches_literal_uri(candidate), true);
        }
    }
});
