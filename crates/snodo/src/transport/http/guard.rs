//! `Host` and `Origin` allowlists: the DNS-rebinding protection.
//!
//! A browser tricked by DNS rebinding sends the attacker's name in `Host` and
//! the attacker's page in `Origin`; both are checked against allowlists before
//! the body is read. Local defaults accept `localhost`, `127.0.0.1` and `[::1]`
//! on any port, or only the bound port once a listener knows it.

/// The names a local server answers to.
const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Which values of a header are accepted.
#[derive(Debug, Clone)]
pub(crate) enum Allowlist {
    /// Every value (the check is off).
    Any,
    /// Only values matching one of the rules.
    Rules(Vec<Rule>),
}

/// One accepted `[scheme://]host[:port]`.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// `None` for hosts; for origins, `None` means `http` or `https`.
    scheme: Option<Box<str>>,
    /// Lowercase; IPv6 addresses keep their brackets.
    host: Box<str>,
    port: Port,
}

/// Which ports a rule accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    /// With or without a port, any port.
    Any,
    /// Without a port, or with the listener's bound port (any port when
    /// unbound).
    Bound,
    /// Exactly this port.
    Exactly(u16),
    /// Only without a port (an origin on its scheme's default port).
    Absent,
    /// Matches nothing: the configured entry could not be parsed.
    Invalid,
}

impl Allowlist {
    /// `localhost`, `127.0.0.1`, `[::1]`, with or without the (bound) port.
    pub(crate) fn local_hosts() -> Self {
        Allowlist::Rules(
            LOCAL_HOSTS
                .iter()
                .map(|host| Rule {
                    scheme: None,
                    host: (*host).into(),
                    port: Port::Bound,
                })
                .collect(),
        )
    }

    /// `http://` or `https://` and the local hosts.
    pub(crate) fn local_origins() -> Self {
        Self::local_hosts()
    }

    /// Parses `host` (any port) and `host:port` entries.
    pub(crate) fn hosts<I, S>(entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Allowlist::Rules(
            entries
                .into_iter()
                .map(|entry| match split_authority(entry.as_ref().trim()) {
                    Some((host, port)) => Rule {
                        scheme: None,
                        host: host.to_ascii_lowercase().into(),
                        port: port.map_or(Port::Any, Port::Exactly),
                    },
                    None => Rule::invalid(),
                })
                .collect(),
        )
    }

    /// Parses `scheme://host[:port]` entries.
    pub(crate) fn origins<I, S>(entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Allowlist::Rules(
            entries
                .into_iter()
                .map(|entry| match split_origin(entry.as_ref().trim()) {
                    Some((scheme, host, port)) => Rule {
                        scheme: Some(scheme.to_ascii_lowercase().into()),
                        host: host.to_ascii_lowercase().into(),
                        port: port.map_or(Port::Absent, Port::Exactly),
                    },
                    None => Rule::invalid(),
                })
                .collect(),
        )
    }

    /// Whether a `Host` value (or HTTP/2 `:authority`) is accepted.
    pub(crate) fn allows_host(&self, authority: &str, bound: Option<u16>) -> bool {
        match self {
            Allowlist::Any => true,
            Allowlist::Rules(rules) => split_authority(authority).is_some_and(|(host, port)| {
                rules
                    .iter()
                    .any(|rule| rule.matches(None, host, port, bound))
            }),
        }
    }

    /// Whether an `Origin` value is accepted (`null` and malformed values never
    /// are, unless everything is).
    pub(crate) fn allows_origin(&self, origin: &str, bound: Option<u16>) -> bool {
        match self {
            Allowlist::Any => true,
            Allowlist::Rules(rules) => split_origin(origin).is_some_and(|(scheme, host, port)| {
                rules
                    .iter()
                    .any(|rule| rule.matches(Some(scheme), host, port, bound))
            }),
        }
    }
}

impl Rule {
    fn invalid() -> Self {
        Rule {
            scheme: None,
            host: "".into(),
            port: Port::Invalid,
        }
    }

    fn matches(
        &self,
        scheme: Option<&str>,
        host: &str,
        port: Option<u16>,
        bound: Option<u16>,
    ) -> bool {
        let scheme_ok = match (&self.scheme, scheme) {
            (_, None) => true,
            (Some(want), Some(got)) => want.eq_ignore_ascii_case(got),
            (None, Some(got)) => {
                got.eq_ignore_ascii_case("http") || got.eq_ignore_ascii_case("https")
            }
        };
        let port_ok = match (self.port, port) {
            (Port::Invalid, _) => false,
            (Port::Any, _) | (Port::Bound | Port::Absent, None) => true,
            (Port::Bound, Some(p)) => bound.is_none_or(|b| b == p),
            (Port::Exactly(want), Some(p)) => want == p,
            (Port::Exactly(_), None) | (Port::Absent, Some(_)) => false,
        };
        scheme_ok && port_ok && self.host.eq_ignore_ascii_case(host)
    }
}

/// Splits `host[:port]`; IPv6 hosts are bracketed. `None` when malformed.
fn split_authority(value: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if value.starts_with('[') {
        let end = value.find(']')? + 1;
        let (host, rest) = value.split_at(end);
        match rest {
            "" => (host, None),
            rest => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match value.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (value, None),
        }
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~[]:%".contains(&b));
    if !host_ok {
        return None;
    }
    match port {
        None => Some((host, None)),
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some((host, Some(p.parse().ok()?)))
        }
        Some(_) => None,
    }
}

/// Splits a serialized origin `scheme://host[:port]`. `None` for `null` and
/// anything else that is not one.
fn split_origin(value: &str) -> Option<(&str, &str, Option<u16>)> {
    let (scheme, rest) = value.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    let (host, port) = split_authority(rest)?;
    Some((scheme, host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_accept_any_port_until_bound() {
        let hosts = Allowlist::local_hosts();
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1:1",
            "[::1]",
            "[::1]:4000",
        ] {
            assert!(hosts.allows_host(ok, None), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "localhost.evil.com",
            "127.0.0.2",
            "localhost:",
            "localhost:x",
            "",
            "[::1",
        ] {
            assert!(!hosts.allows_host(bad, None), "{bad}");
        }
        assert!(hosts.allows_host("localhost:4000", Some(4000)));
        assert!(hosts.allows_host("localhost", Some(4000)));
        assert!(!hosts.allows_host("localhost:4001", Some(4000)));
    }

    #[test]
    fn configured_hosts() {
        let hosts = Allowlist::hosts(["mcp.example.com", "other.example.com:8443", "not valid"]);
        assert!(hosts.allows_host("MCP.example.com:9999", Some(1)));
        assert!(hosts.allows_host("other.example.com:8443", None));
        assert!(!hosts.allows_host("other.example.com", None));
        assert!(!hosts.allows_host("localhost", None));
    }

    #[test]
    fn origins() {
        let local = Allowlist::local_origins();
        assert!(local.allows_origin("http://localhost:3000", None));
        assert!(local.allows_origin("https://[::1]", None));
        assert!(!local.allows_origin("http://localhost:3000", Some(4000)));
        assert!(!local.allows_origin("null", None));
        assert!(!local.allows_origin("ftp://localhost", None));
        assert!(!local.allows_origin("http://evil.example.com", None));
        assert!(!local.allows_origin("http://localhost/path", None));
        let configured = Allowlist::origins(["https://app.example.com", "http://localhost:5173"]);
        assert!(configured.allows_origin("https://APP.example.com", None));
        assert!(!configured.allows_origin("http://app.example.com", None));
        assert!(!configured.allows_origin("https://app.example.com:444", None));
        assert!(configured.allows_origin("http://localhost:5173", None));
        assert!(!configured.allows_origin("http://localhost:5174", None));
        assert!(Allowlist::Any.allows_origin("null", None));
    }
}
