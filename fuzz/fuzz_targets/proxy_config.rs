//! The `snodo proxy` configuration file (TOML), read by the CLI's own
//! parser (its source is included as it is: the CLI is a binary): a file
//! that parses names at most `MAX_BACKENDS` backends, each with valid id
//! and either a command or an http(s) URL, positive finite timeouts, a
//! known stderr mode, `forward_identity` only for a URL, `env_from_claims`
//! only for a command with `[auth]` and valid variable names, and no zero
//! bound; an `[auth]` issuer URL, an admin token of 16 characters or more,
//! roles that build; a named audit file; a parsed caller rate; virtual
//! servers that name backends of the file and build their views; and reads
//! the same again. Input: the file's text.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/snodo-cli/src/proxy_cmd/config.rs"]
mod config;

use config::{Command, Config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = Config::parse(text) else {
        return;
    };
    assert!(snodo::proxy::check_separator(&config.separator).is_ok());
    assert!(config.health_interval >= 0.1 && config.health_interval.is_finite());
    assert!(config.backends.len() <= snodo::proxy::MAX_BACKENDS);
    for (name, server) in &config.servers {
        assert!(snodo::proxy::check_id(name).is_ok(), "server {name:?}");
        assert!(!server.backends.is_empty(), "server {name:?}");
        for id in &server.backends {
            assert!(config.backends.contains_key(id), "server {name:?}: {id:?}");
        }
        assert!(server.view().is_ok(), "server {name:?}");
    }
    for (id, backend) in &config.backends {
        assert!(snodo::proxy::check_id(id).is_ok(), "id {id:?}");
        match (&backend.command, &backend.url) {
            (Some(Command::Line(line)), None) => assert!(!line.trim().is_empty()),
            (Some(Command::Argv(argv)), None) => assert!(!argv.is_empty()),
            (None, Some(url)) => {
                assert!(snodo::client::Target::is_url(url), "url {url:?}");
                assert!(backend.env.is_empty());
            }
            _ => panic!("backend {id:?}: not exactly one of command and url"),
        }
        if backend.command.is_some() {
            assert!(backend.headers.is_empty());
        }
        for timeout in [backend.timeout, backend.connect_timeout] {
            assert!(timeout > 0.0 && timeout.is_finite(), "timeout {timeout}");
        }
        assert!(matches!(backend.stderr.as_str(), "inherit" | "quiet"));
        assert!(!backend.forward_identity || backend.url.is_some());
        if let Some(claims) = &backend.env_from_claims {
            assert!(backend.command.is_some() && config.auth.is_some());
            for (var, claim) in claims {
                assert!(!var.is_empty() && !claim.is_empty());
                assert!(var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            }
        } else {
            assert!(backend.max_callers.is_none() && backend.caller_idle.is_none());
        }
        assert!(backend.max_callers != Some(0));
        assert!(backend.concurrency != Some(0));
        assert!(backend.max_argument_bytes != Some(0));
    }
    if let Some(auth) = &config.auth {
        assert!(snodo::client::Target::is_url(&auth.issuer));
        assert!(auth.admin_token.as_ref().is_none_or(|t| t.len() >= 16));
        assert!(auth.policy_roles().is_ok());
    }
    assert!(config.audit.as_ref().is_none_or(|a| !a.path.trim().is_empty()));
    assert_eq!(config.limits.per_principal.is_some(), config.limits.rate.is_some());
    assert_eq!(
        Config::parse(text),
        Ok(config),
        "a file reads differently twice"
    );
});
