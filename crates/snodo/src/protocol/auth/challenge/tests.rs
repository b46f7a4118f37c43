use super::*;

fn one(header: &str) -> Challenge {
    let mut all = parse(header).unwrap_or_else(|e| panic!("{header}: {e}"));
    assert_eq!(all.len(), 1, "{header}");
    all.remove(0)
}

#[test]
fn the_shapes_servers_send() {
    // The TS SDK's bearer middleware (what most servers answer).
    let c = one(
        r#"Bearer error="invalid_token", error_description="Missing Authorization header", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp""#,
    );
    assert!(c.is("Bearer"));
    assert_eq!(c.param("error"), Some("invalid_token"));
    assert_eq!(
        c.param("error_description"),
        Some("Missing Authorization header")
    );
    assert_eq!(
        c.param("resource_metadata"),
        Some("http://localhost:3000/.well-known/oauth-protected-resource/mcp")
    );
    // Order varies, names are case-insensitive, values may be tokens.
    let c = one(
        r#"bearer Scope="mcp:basic mcp:write", RESOURCE_METADATA="http://h/x",error=insufficient_scope"#,
    );
    assert!(c.is("BEARER"));
    assert_eq!(c.scopes(), vec!["mcp:basic", "mcp:write"]);
    assert_eq!(c.param("resource_metadata"), Some("http://h/x"));
    assert_eq!(c.param("error"), Some("insufficient_scope"));
    // A bare scheme.
    let c = one("Bearer");
    assert!(c.params.is_empty() && c.token68.is_none());
    // DPoP with algs.
    let c = one(r#"DPoP algs="ES256 PS256", error="use_dpop_nonce""#);
    assert!(c.is("dpop"));
    assert_eq!(c.param("algs"), Some("ES256 PS256"));
}

#[test]
fn several_challenges_in_one_value() {
    let all = parse(
        r#"Basic realm="x", Bearer resource_metadata="http://h/m", scope="a b", DPoP algs="ES256""#,
    )
    .unwrap();
    let schemes: Vec<_> = all.iter().map(|c| c.scheme.as_str()).collect();
    assert_eq!(schemes, ["Basic", "Bearer", "DPoP"]);
    assert_eq!(all[1].param("scope"), Some("a b"));
    assert_eq!(all[0].param("realm"), Some("x"));
    // Bare schemes and empty list elements.
    let all = parse("Negotiate, , Bearer").unwrap();
    assert_eq!(all.len(), 2);
    // token68.
    let all = parse("Negotiate YIIB3gYGKwYB==, Bearer realm=r").unwrap();
    assert_eq!(all[0].token68.as_deref(), Some("YIIB3gYGKwYB=="));
    assert_eq!(all[1].param("realm"), Some("r"));
    // Several header values.
    let all = parse_all(["Basic realm=a", "garbage \"", r#"Bearer scope="s""#]);
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].param("scope"), Some("s"));
}

#[test]
fn quoted_strings_unescape() {
    let c = one(r#"Bearer error_description="a \"quoted\" word, and a \\ slash", x="""#);
    assert_eq!(
        c.param("error_description"),
        Some(r#"a "quoted" word, and a \ slash"#)
    );
    assert_eq!(c.param("x"), Some(""));
    let c = one("Bearer realm = \"spaced\" , scope=\"ü\"");
    assert_eq!(c.param("realm"), Some("spaced"));
    assert_eq!(c.param("scope"), Some("ü"));
}

#[test]
fn malformed_values_are_errors() {
    for bad in [
        "Bearer realm=\"open",
        "Bearer realm=\"a\\",
        "Bearer realm=\"a\" junk",
        "=x",
        "Bearer realm=\"a\nb\"",
        "Bearer abc== def",
        "\"Bearer\"",
    ] {
        assert!(parse(bad).is_err(), "{bad:?} parsed");
    }
    let long = format!("Bearer x=\"{}\"", "a".repeat(MAX_HEADER_BYTES));
    assert_eq!(parse(&long).unwrap_err().reason, "header value too long");
    let many = vec!["Basic"; MAX_CHALLENGES + 1].join(", ");
    assert_eq!(parse(&many).unwrap_err().reason, "too many challenges");
    let params: Vec<String> = (0..=MAX_PARAMS).map(|i| format!("p{i}=v")).collect();
    assert_eq!(
        parse(&format!("Bearer {}", params.join(", ")))
            .unwrap_err()
            .reason,
        "too many parameters"
    );
}

#[test]
fn what_is_built_parses_back() {
    let c = Challenge::new("Bearer")
        .with("error", "insufficient_scope")
        .with("scope", "files:write demo:read")
        .with("error_description", "needs \"files:write\" \\ now\r\n");
    let text = c.to_string();
    assert_eq!(
        text,
        r#"Bearer error="insufficient_scope", scope="files:write demo:read", error_description="needs \"files:write\" \\ now  ""#
    );
    let back = one(&text);
    assert_eq!(back.param("scope"), Some("files:write demo:read"));
    assert_eq!(
        back.param("error_description"),
        Some("needs \"files:write\" \\ now  ")
    );
    assert!(::http::HeaderValue::from_str(&text).is_ok());
}
