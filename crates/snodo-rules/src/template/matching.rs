//! Matching a URI against a parsed template, and the values it binds.

use super::parse::{Authority, Segment, UriTemplate};
use super::uri::{is_plain_host, percent_decode};

impl UriTemplate {
    /// Matches `uri` against the template.
    ///
    /// Returns the bound variables in template order, or `None` when the URI
    /// does not match. Values are percent-decoded once and must be valid
    /// UTF-8 (`+` stays `+`); an absent optional variable is omitted, and
    /// `q=` binds `""`. A fragment, a port, userinfo, an empty query (`?`), a
    /// repeated query parameter or one the template doesn't name means no
    /// match. The work done is linear in the length of `uri`.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        if uri.contains('#') {
            return None;
        }
        let (scheme, rest) = uri.split_once(':')?;
        if !scheme.eq_ignore_ascii_case(&self.scheme) {
            return None;
        }
        let (rest, query) = match rest.split_once('?') {
            Some((rest, query)) => (rest, Some(query)),
            None => (rest, None),
        };
        let mut bindings = Bindings::new(self.names.len());
        let path = match (&self.authority, rest.strip_prefix("//")) {
            (Some(authority), Some(after)) => {
                let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
                if !is_plain_host(host) {
                    return None;
                }
                match authority {
                    Authority::Literal(literal) if literal == host => {}
                    Authority::Literal(_) => return None,
                    Authority::Var(id) if !host.is_empty() => {
                        bindings.bind(*id, Some(percent_decode(host)?))?;
                    }
                    Authority::Var(_) => return None,
                }
                path
            }
            (None, None) => rest,
            _ => return None,
        };
        self.match_path(path, &mut bindings)?;
        self.match_query(query, &mut bindings)?;
        Some(bindings.finish(&self.names))
    }

    /// Whether `uri` matches the template: `self.matches(uri).is_some()`.
    ///
    /// Used to detect a fixed resource URI that a template already covers.
    pub fn matches_literal_uri(&self, uri: &str) -> bool {
        self.matches(uri).is_some()
    }

    fn match_path(&self, path: &str, bindings: &mut Bindings) -> Option<()> {
        let parts: Vec<&str> = path.split('/').collect();
        let Some(v) = self.variable_length else {
            if parts.len() != self.segments.len() {
                return None;
            }
            for (segment, part) in self.segments.iter().zip(&parts) {
                match_fixed(segment, part, bindings)?;
            }
            return Some(());
        };
        let prefix = &self.segments[..v];
        let suffix = &self.segments[v + 1..];
        let middle_end = parts.len().checked_sub(suffix.len())?;
        let middle = parts.get(prefix.len()..middle_end)?;
        for (segment, part) in prefix.iter().zip(&parts[..prefix.len()]) {
            match_fixed(segment, part, bindings)?;
        }
        for (segment, part) in suffix.iter().zip(&parts[middle_end..]) {
            match_fixed(segment, part, bindings)?;
        }
        if middle.iter().any(|part| part.is_empty()) {
            return None;
        }
        let (id, fits) = match self.segments[v] {
            Segment::Reserved(id) => (id, !middle.is_empty()),
            Segment::Optional(id) => (id, middle.len() <= 1),
            Segment::Exploded(id) => (id, true),
            Segment::Literal(_) | Segment::Var(_) => unreachable!("not variable-length"),
        };
        if !fits {
            return None;
        }
        let value = if middle.is_empty() {
            None
        } else {
            Some(percent_decode(&middle.join("/"))?)
        };
        bindings.bind(id, value)
    }

    fn match_query(&self, query: Option<&str>, bindings: &mut Bindings) -> Option<()> {
        let mut seen = vec![false; self.query.len()];
        if let Some(query) = query {
            if query.is_empty() {
                return None;
            }
            for pair in query.split('&') {
                let (name, value) = pair.split_once('=')?;
                let index = self.query.iter().position(|&id| self.names[id] == name)?;
                if std::mem::replace(&mut seen[index], true) {
                    return None;
                }
                bindings.bind(self.query[index], Some(percent_decode(value)?))?;
            }
        }
        for (index, &id) in self.query.iter().enumerate() {
            if !seen[index] {
                bindings.bind(id, None)?;
            }
        }
        Some(())
    }
}

/// Matches one literal or `{var}` segment.
fn match_fixed(segment: &Segment, part: &str, bindings: &mut Bindings) -> Option<()> {
    match segment {
        Segment::Literal(literal) => (literal == part).then_some(()),
        Segment::Var(id) if !part.is_empty() => bindings.bind(*id, Some(percent_decode(part)?)),
        _ => None,
    }
}

/// The values bound so far, by variable id.
struct Bindings {
    slots: Vec<Slot>,
}

enum Slot {
    Unset,
    Absent,
    Present(String),
}

impl Bindings {
    fn new(len: usize) -> Self {
        Bindings {
            slots: (0..len).map(|_| Slot::Unset).collect(),
        }
    }

    /// Records one occurrence's value; every occurrence of a variable must
    /// agree (all absent, or all present with the same value).
    fn bind(&mut self, id: usize, value: Option<String>) -> Option<()> {
        let slot = &mut self.slots[id];
        match (&*slot, value) {
            (Slot::Unset, None) => *slot = Slot::Absent,
            (Slot::Unset, Some(value)) => *slot = Slot::Present(value),
            (Slot::Absent, None) => {}
            (Slot::Present(old), Some(value)) if *old == value => {}
            _ => return None,
        }
        Some(())
    }

    fn finish(self, names: &[String]) -> Vec<(String, String)> {
        names
            .iter()
            .zip(self.slots)
            .filter_map(|(name, slot)| match slot {
                Slot::Present(value) => Some((name.clone(), value)),
                Slot::Unset | Slot::Absent => None,
            })
            .collect()
    }
}
