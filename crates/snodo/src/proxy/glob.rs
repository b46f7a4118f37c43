//! Name patterns: `*` stands for any run of characters (none included),
//! `?` for exactly one; every other character stands for itself.

use super::ProxyError;

/// The longest pattern.
const MAX_PATTERN: usize = 256;

/// A name pattern (`read_*`, `fs.?et`, `*`), matched against a whole name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
}

impl Glob {
    /// A pattern of 1 to 256 bytes.
    pub fn new(pattern: &str) -> Result<Self, ProxyError> {
        if pattern.is_empty() || pattern.len() > MAX_PATTERN {
            return Err(ProxyError::config(format!(
                "pattern {pattern:?}: use 1 to {MAX_PATTERN} bytes"
            )));
        }
        Ok(Glob {
            pattern: pattern.to_owned(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether the whole of `name` matches. Linear in the pattern times
    /// the name at worst: a `*` is never backtracked past an earlier one.
    pub fn matches(&self, name: &str) -> bool {
        let (p, n): (Vec<char>, Vec<char>) =
            (self.pattern.chars().collect(), name.chars().collect());
        let (mut pi, mut ni) = (0, 0);
        // The last `*` seen and the name position it was tried at.
        let mut star: Option<(usize, usize)> = None;
        while ni < n.len() {
            match p.get(pi) {
                Some('*') => {
                    star = Some((pi, ni));
                    pi += 1;
                }
                Some('?') => {
                    pi += 1;
                    ni += 1;
                }
                Some(c) if *c == n[ni] => {
                    pi += 1;
                    ni += 1;
                }
                _ => match star {
                    // The `*` takes one more character.
                    Some((sp, sn)) => {
                        star = Some((sp, sn + 1));
                        pi = sp + 1;
                        ni = sn + 1;
                    }
                    None => return false,
                },
            }
        }
        p[pi..].iter().all(|c| *c == '*')
    }
}

impl std::fmt::Display for Glob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.pattern)
    }
}

/// Whether any of `globs` matches `name`.
pub(crate) fn any(globs: &[Glob], name: &str) -> bool {
    globs.iter().any(|g| g.matches(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, name: &str) -> bool {
        Glob::new(pattern).unwrap().matches(name)
    }

    #[test]
    fn stars_and_marks_match_whole_names() {
        for (pattern, name) in [
            ("*", ""),
            ("*", "anything"),
            ("read_*", "read_"),
            ("read_*", "read_file"),
            ("*_file", "read_file"),
            ("r*d*e", "read_file"),
            ("?ead", "read"),
            ("a*b*c", "aXbYbZc"),
            ("**", "x"),
            ("fs.*", "fs.read"),
            ("é*", "été"),
            ("file:///*", "file:///a/b.txt"),
        ] {
            assert!(m(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [
            ("read", "read_file"),
            ("read_*", "write_file"),
            ("?ead", "ead"),
            ("a*b*c", "aXbYbZ"),
            ("*.read", "fs_read"),
            ("x", ""),
        ] {
            assert!(!m(pattern, name), "{pattern} {name}");
        }
    }

    #[test]
    fn long_names_against_many_stars_stay_fast() {
        let name = "a".repeat(10_000);
        assert!(!m(&format!("{}b", "*a".repeat(100)), &name));
        assert!(m(&"*a".repeat(100), &name));
    }

    #[test]
    fn empty_and_long_patterns_are_refused() {
        assert!(Glob::new("").is_err());
        assert!(Glob::new(&"*".repeat(257)).is_err());
        assert!(Glob::new(&"*".repeat(256)).is_ok());
    }
}
