//! A `SKILL.md` file's YAML frontmatter, read into a JSON object within
//! bounds: the block's size, its nesting and its number of values; aliases
//! (which can multiply a small text into a huge value) are refused.

use std::fmt;

use serde_json::{Map, Number, Value};
use yaml_rust2::Yaml;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// The largest frontmatter block read, in bytes.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// The deepest nesting of mappings and sequences in a frontmatter block.
pub const MAX_FRONTMATTER_DEPTH: usize = 32;
/// The most values (scalars, mappings and sequences) in a frontmatter block.
pub const MAX_FRONTMATTER_VALUES: usize = 4096;

/// Why a `SKILL.md` file's frontmatter could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError {
    message: String,
}

impl FrontmatterError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FrontmatterError {}

/// The YAML between the opening `---` line and the closing one, when the
/// text starts with such a block (a byte order mark before it is skipped).
pub(crate) fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut start = 0;
    // An empty block: the closing line right after the opening one.
    if closes(rest) {
        return Some("");
    }
    while let Some(i) = rest[start..].find('\n') {
        let line_end = start + i;
        let next = line_end + 1;
        if closes(&rest[next..]) {
            let body = &rest[..line_end];
            return Some(body.strip_suffix('\r').unwrap_or(body));
        }
        start = next;
    }
    None
}

/// Whether `rest` starts with a closing `---` line (spaces or tabs after it).
fn closes(rest: &str) -> bool {
    let Some(after) = rest.strip_prefix("---") else {
        return false;
    };
    let after = after.trim_start_matches([' ', '\t']);
    after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n")
}

/// Reads the frontmatter of a `SKILL.md` text into a JSON object: the text
/// must start with a `---` delimited YAML block holding a mapping, within
/// [`MAX_FRONTMATTER_BYTES`], [`MAX_FRONTMATTER_DEPTH`] and
/// [`MAX_FRONTMATTER_VALUES`], without aliases, and every value must have a
/// JSON form (no `.nan` or `.inf`, keys scalars).
///
/// ```
/// let text = "---\nname: pdf-processing\ndescription: Fill PDF forms\nmetadata:\n  version: 2\n---\n# Body\n";
/// let fm = snodo::skills::frontmatter(text).unwrap();
/// assert_eq!(fm["name"], "pdf-processing");
/// assert_eq!(fm["metadata"]["version"], 2);
/// assert!(snodo::skills::frontmatter("# no frontmatter").is_err());
/// ```
pub fn frontmatter(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let yaml = block(text).ok_or_else(|| {
        FrontmatterError::new("SKILL.md does not start with a --- delimited YAML frontmatter block")
    })?;
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(FrontmatterError::new(format!(
            "the frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes"
        )));
    }
    let mut builder = Builder::default();
    Parser::new_from_str(yaml)
        .load(&mut builder, true)
        .map_err(|e| FrontmatterError::new(format!("the frontmatter is not YAML: {e}")))?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    match builder.root {
        Some(Value::Object(map)) => Ok(map),
        None | Some(Value::Null) => Ok(Map::new()),
        Some(_) => Err(FrontmatterError::new("the frontmatter is not a mapping")),
    }
}

/// A mapping or sequence being built.
enum Open {
    Mapping {
        map: Map<String, Value>,
        key: Option<String>,
    },
    Sequence(Vec<Value>),
}

/// Builds JSON from the parser's events, keeping the first error.
#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    root: Option<Value>,
    values: usize,
    documents: usize,
    error: Option<FrontmatterError>,
}

impl Builder {
    fn fail(&mut self, message: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(FrontmatterError::new(message));
        }
    }

    /// Counts one more value; false once past the bound.
    fn count(&mut self) -> bool {
        self.values += 1;
        if self.values > MAX_FRONTMATTER_VALUES {
            self.fail(format!(
                "the frontmatter holds more than {MAX_FRONTMATTER_VALUES} values"
            ));
            return false;
        }
        true
    }

    fn open(&mut self, open: Open) {
        if !self.count() {
            return;
        }
        if self.stack.len() >= MAX_FRONTMATTER_DEPTH {
            self.fail(format!(
                "the frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels"
            ));
            return;
        }
        if let Some(Open::Mapping { key: None, .. }) = self.stack.last() {
            self.fail("a frontmatter key is a mapping or a sequence");
            return;
        }
        self.stack.push(open);
    }

    fn close(&mut self) {
        let value = match self.stack.pop() {
            Some(Open::Mapping { map, .. }) => Value::Object(map),
            Some(Open::Sequence(items)) => Value::Array(items),
            None => return,
        };
        self.put(value);
    }

    /// Places a finished value in its parent (or as the root).
    fn put(&mut self, value: Value) {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Open::Sequence(items)) => items.push(value),
            Some(Open::Mapping { map, key }) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                None => {
                    let k = match value {
                        Value::String(s) => s,
                        Value::Null => "null".to_owned(),
                        other => other.to_string(),
                    };
                    if map.contains_key(&k) {
                        self.fail(format!("the frontmatter repeats the key {k:?}"));
                        return;
                    }
                    *key = Some(k);
                }
            },
        }
    }

    fn scalar(&mut self, text: String, style: TScalarStyle, tag: Option<Tag>) {
        if !self.count() {
            return;
        }
        // `!!str 1.0` is the text "1.0"; other tags are read as untagged.
        let text_tag = tag.is_some_and(|t| t.suffix == "str");
        let value = if style == TScalarStyle::Plain && !text_tag {
            match Yaml::from_str(&text) {
                // YAML 1.2's core schema: `Null` and `NULL` too.
                _ if text == "Null" || text == "NULL" => Value::Null,
                Yaml::Null => Value::Null,
                Yaml::Boolean(b) => Value::Bool(b),
                Yaml::Integer(i) => Value::Number(i.into()),
                Yaml::Real(r) => match r.parse::<f64>().ok().and_then(Number::from_f64) {
                    Some(n) => Value::Number(n),
                    None => {
                        self.fail(format!("the frontmatter value {r:?} has no JSON form"));
                        return;
                    }
                },
                _ => Value::String(text),
            }
        } else {
            Value::String(text)
        };
        self.put(value);
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, _mark: Marker) {
        if self.error.is_some() {
            return;
        }
        match event {
            Event::Alias(_) => self.fail("the frontmatter uses a YAML alias"),
            Event::Scalar(text, style, _, tag) => self.scalar(text, style, tag),
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    self.fail("the frontmatter holds more than one YAML document");
                }
            }
            Event::MappingStart(..) => self.open(Open::Mapping {
                map: Map::new(),
                key: None,
            }),
            Event::SequenceStart(..) => self.open(Open::Sequence(Vec::new())),
            Event::MappingEnd | Event::SequenceEnd => self.close(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_block_is_found_between_two_dash_lines() {
        assert_eq!(block("---\na: 1\n---\nbody"), Some("a: 1"));
        assert_eq!(block("\u{feff}---\r\na: 1\r\n---\r\n"), Some("a: 1"));
        assert_eq!(block("---\na: 1\n---"), Some("a: 1"));
        assert_eq!(block("---\n---\n"), Some(""));
        assert_eq!(block("---\na: 1\n--- \t\nx"), Some("a: 1"));
        assert_eq!(block("---\na: 1\n----\n"), None);
        assert_eq!(block("---\na: 1\n"), None);
        assert_eq!(block("a: 1\n---\n"), None);
    }

    #[test]
    fn frontmatter_reads_yaml_as_json() {
        let fm = frontmatter(
            "---\nname: refunds\ndescription: \"Process: refunds\"\nlicense: Apache-2.0\n\
             metadata:\n  version: \"2.1\"\n  count: 3\n  ratio: 0.5\n  on: true\n  none: ~\n\
             allowed-tools: [a, b]\n---\nbody\n",
        )
        .unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({
                "name": "refunds",
                "description": "Process: refunds",
                "license": "Apache-2.0",
                "metadata": {"version": "2.1", "count": 3, "ratio": 0.5, "on": true, "none": null},
                "allowed-tools": ["a", "b"],
            })
        );
        let fm =
            frontmatter("---\na: Null\nb: NULL\nc: !!str 1.0\nd: 1.0\ne: \"null\"\n---\n").unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"a": null, "b": null, "c": "1.0", "d": 1.0, "e": "null"})
        );
    }

    #[test]
    fn frontmatter_refuses_what_it_cannot_bound_or_render() {
        let cases = [
            ("no block", "# Title\n", "does not start"),
            ("a list", "---\n- a\n---\n", "not a mapping"),
            ("an alias", "---\na: &x [1]\nb: *x\n---\n", "alias"),
            (
                "a repeated key",
                "---\na: 1\na: 2\n---\n",
                "repeats the key",
            ),
            (
                "a complex key",
                "---\n? [a]\n: 1\n---\n",
                "key is a mapping",
            ),
            ("nan", "---\na: .nan\n---\n", "no JSON form"),
            ("not yaml", "---\na: [1\n---\n", "not YAML"),
            (
                "two documents",
                "---\na: 1\n...\nb: 2\n---\n",
                "more than one",
            ),
        ];
        for (what, text, needle) in cases {
            let e = frontmatter(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{what}: {e}");
        }
        let deep = format!("---\na: {}1{}\n---\n", "[".repeat(40), "]".repeat(40));
        let e = frontmatter(&deep).unwrap_err().to_string();
        assert!(e.contains("deeper") || e.contains("recursion"), "{e}");
        let many = format!("---\na: [{}]\n---\n", vec!["1"; 5000].join(","));
        assert!(
            frontmatter(&many)
                .unwrap_err()
                .to_string()
                .contains("more than 4096")
        );
        let big = format!("---\na: \"{}\"\n---\n", "x".repeat(MAX_FRONTMATTER_BYTES));
        assert!(
            frontmatter(&big)
                .unwrap_err()
                .to_string()
                .contains("larger than")
        );
        assert_eq!(frontmatter("---\n---\n").unwrap(), Map::new());
    }
}
