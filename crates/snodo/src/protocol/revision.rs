//! The protocol revisions this library knows, and how the initialize-era
//! handshake picks one.
//!
//! | revision | era | how a client opens |
//! |---|---|---|
//! | `2026-07-28` | stateless | every request carries `_meta` (`server/discover` optional) |
//! | `2025-11-25` | initialize | `initialize`, then `notifications/initialized` |
//! | `2025-06-18` | initialize | the same handshake, a smaller vocabulary |
//!
//! Both sides use this module: the server to negotiate and to shape what it
//! sends, the client to pick what it offers.

use std::fmt;
use std::str::FromStr;

/// The newest revision this library speaks.
pub const LATEST_VERSION: &str = "2026-07-28";

/// The revisions a server built by this library serves.
pub const SUPPORTED_VERSIONS: &[&str] = &[LATEST_VERSION];

/// One MCP protocol revision.
///
/// ```
/// use snodo::model::Revision;
/// let r: Revision = "2025-06-18".parse().unwrap();
/// assert!(r.is_legacy());
/// assert_eq!(Revision::negotiate("2024-11-05", Revision::ALL), Some(Revision::V2025_11_25));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Revision {
    /// `2025-06-18`: the first revision with structured output, form
    /// elicitation and the `MCP-Protocol-Version` header.
    V2025_06_18,
    /// `2025-11-25`: adds icons, URL elicitation, SSE polling and sampling tools.
    V2025_11_25,
    /// `2026-07-28`: the stateless revision (per-request `_meta`, no handshake).
    V2026_07_28,
}

/// A string that names no revision this library knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRevision(pub String);

impl fmt::Display for UnknownRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown protocol revision `{}` (known: 2026-07-28, 2025-11-25, 2025-06-18)",
            self.0
        )
    }
}

impl std::error::Error for UnknownRevision {}

impl Revision {
    /// Every revision, newest first.
    pub const ALL: &'static [Revision] = &[
        Revision::V2026_07_28,
        Revision::V2025_11_25,
        Revision::V2025_06_18,
    ];

    /// The initialize-era revisions, newest first.
    pub const LEGACY: &'static [Revision] = &[Revision::V2025_11_25, Revision::V2025_06_18];

    /// The wire name (`"2025-11-25"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Looks a wire name up.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "2025-06-18" => Revision::V2025_06_18,
            "2025-11-25" => Revision::V2025_11_25,
            "2026-07-28" => Revision::V2026_07_28,
            _ => return None,
        })
    }

    /// Whether the revision opens with `initialize` (and keeps session state).
    pub const fn is_legacy(self) -> bool {
        !matches!(self, Revision::V2026_07_28)
    }

    /// Whether the revision has icons on components and `Implementation`
    /// (plus `description` and `websiteUrl` there).
    pub const fn has_icons(self) -> bool {
        !matches!(self, Revision::V2025_06_18)
    }

    /// Whether the revision has URL-mode elicitation.
    pub const fn has_url_elicitation(self) -> bool {
        !matches!(self, Revision::V2025_06_18)
    }

    /// Whether SSE streams of the revision start with a priming event and may
    /// be closed early for the client to poll (SEP-1699).
    pub const fn has_sse_polling(self) -> bool {
        matches!(self, Revision::V2025_11_25)
    }

    /// The answer to an `initialize` that asks for `requested`, among the
    /// initialize-era revisions in `served`: the requested one when served,
    /// otherwise the newest served initialize-era revision (never 2026-07-28,
    /// which has no handshake). `None` when `served` has no initialize-era
    /// revision.
    pub fn negotiate(requested: &str, served: &[Revision]) -> Option<Revision> {
        if let Some(r) = Revision::parse(requested)
            && r.is_legacy()
            && served.contains(&r)
        {
            return Some(r);
        }
        served.iter().copied().filter(|r| r.is_legacy()).max()
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Revision {
    type Err = UnknownRevision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Revision::parse(s).ok_or_else(|| UnknownRevision(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_echoes_a_served_legacy_revision_and_counters_anything_else() {
        let all = Revision::ALL;
        for (asked, answer) in [
            ("2025-11-25", Some(Revision::V2025_11_25)),
            ("2025-06-18", Some(Revision::V2025_06_18)),
            ("2025-03-26", Some(Revision::V2025_11_25)),
            ("2024-11-05", Some(Revision::V2025_11_25)),
            ("2026-07-28", Some(Revision::V2025_11_25)),
            ("garbage", Some(Revision::V2025_11_25)),
        ] {
            assert_eq!(Revision::negotiate(asked, all), answer, "{asked}");
        }
        let old = &[Revision::V2025_06_18];
        assert_eq!(
            Revision::negotiate("2025-11-25", old),
            Some(Revision::V2025_06_18)
        );
        assert_eq!(
            Revision::negotiate("2025-11-25", &[Revision::V2026_07_28]),
            None
        );
    }

    #[test]
    fn names_round_trip() {
        for r in Revision::ALL {
            assert_eq!(r.as_str().parse::<Revision>().unwrap(), *r);
        }
        assert!("2024-11-05".parse::<Revision>().is_err());
    }
}
