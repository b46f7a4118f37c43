//! Whose share of a table every client uses a request counts against.
//!
//! Sessions, tasks and the memory behind them are shared by every client of a
//! server; each is capped per [`Share`] so that one client cannot take what
//! the others need. A request counts against its authenticated principal
//! (issuer and subject together, so that two issuers' subjects never meet),
//! or, when anonymous, against the remote address it came from: the whole
//! address for IPv4, the /64 network for IPv6 (one host is usually given a
//! whole /64). A request with neither (a service mounted in another router
//! that does not put a [`ConnectionInfo`](super::ConnectionInfo) in the
//! request's extensions) counts against one share for all such requests.

use std::fmt;
use std::net::IpAddr;

/// The key a request's use of a shared table is counted under.
///
/// ```
/// use snodo::Principal;
/// use snodo::handler::Share;
/// let a = Share::of(Some(&Principal::new("alice").key()), None);
/// let b = Share::of(None, Some("127.0.0.2".parse().unwrap()));
/// assert_ne!(a, b);
/// assert_eq!(b.as_str(), "address 127.0.0.2");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Share(Box<str>);

impl Share {
    /// The share of a request by the principal whose
    /// [`key`](crate::Principal::key) is `principal` (if authenticated) from
    /// `peer` (see also [`TransportInfo::share`](crate::TransportInfo::share)).
    pub fn of(principal: Option<&str>, peer: Option<IpAddr>) -> Self {
        if let Some(key) = principal {
            return Self(format!("principal {key}").into());
        }
        match peer.map(network) {
            Some(IpAddr::V4(v4)) => Self(format!("address {v4}").into()),
            Some(IpAddr::V6(v6)) => Self(format!("address {v6}/64").into()),
            None => Self("anonymous".into()),
        }
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The address an anonymous client is counted by: an IPv4 address as it is
/// (an IPv4-mapped IPv6 address included), an IPv6 address's /64 network.
fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Principal;

    fn key(issuer: Option<&str>, subject: &str) -> String {
        let mut p = Principal::new(subject);
        p.issuer = issuer.map(str::to_string);
        p.key()
    }

    #[test]
    fn principals_of_two_issuers_never_share() {
        let a = Share::of(Some(&key(Some("https://a"), "bob")), None);
        let b = Share::of(Some(&key(Some("https://b"), "bob")), None);
        assert_ne!(a, b);
        // No issuer/subject split reads as another.
        let c = Share::of(Some(&key(Some("x"), "yz")), None);
        let d = Share::of(Some(&key(Some("xy"), "z")), None);
        assert_ne!(c, d);
    }

    #[test]
    fn a_principal_is_never_an_address() {
        let user = Share::of(Some(&key(None, "127.0.0.1")), None);
        let peer = Share::of(None, Some("127.0.0.1".parse().unwrap()));
        assert_ne!(user, peer);
    }

    #[test]
    fn anonymous_clients_count_by_address_and_ipv6_by_network() {
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert_ne!(
            Share::of(None, ip("127.0.0.1")),
            Share::of(None, ip("127.0.0.2"))
        );
        assert_eq!(
            Share::of(None, ip("2001:db8:1:2::1")),
            Share::of(None, ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(
            Share::of(None, ip("2001:db8:1:2::1")),
            Share::of(None, ip("2001:db8:1:3::1"))
        );
        assert_eq!(
            Share::of(None, ip("::ffff:10.0.0.1")),
            Share::of(None, ip("10.0.0.1"))
        );
        assert_eq!(Share::of(None, None).as_str(), "anonymous");
    }
}
