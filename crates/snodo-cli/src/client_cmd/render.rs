//! Human-readable output: tables, content blocks, colour on a terminal.
//! Every string from the server is escaped ([`crate::escape`]) before it
//! is styled.

use std::borrow::Cow;
use std::io::IsTerminal;

use serde_json::Value;
use snodo::client::Client;

use crate::escape;

/// Whether to colour stdout, and the helpers that do.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    color: bool,
    err_color: bool,
    width: usize,
}

impl Style {
    /// Colour when stdout (or stderr, for messages there) is a terminal and
    /// `NO_COLOR` is unset.
    pub(crate) fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .filter(|w: &usize| *w >= 40)
            .unwrap_or(100);
        Self {
            color: !no_color && std::io::stdout().is_terminal(),
            err_color: !no_color && std::io::stderr().is_terminal(),
            width,
        }
    }

    fn paint(&self, on: bool, code: &str, text: &str) -> String {
        if on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub(crate) fn bold(&self, text: &str) -> String {
        self.paint(self.color, "1", text)
    }

    pub(crate) fn cyan(&self, text: &str) -> String {
        self.paint(self.color, "36", text)
    }

    pub(crate) fn red(&self, text: &str) -> String {
        self.paint(self.color, "31", text)
    }

    /// Dim text for stderr.
    pub(crate) fn dim(&self, text: &str) -> String {
        self.paint(self.err_color, "2", text)
    }

    /// Red bold text for stderr.
    pub(crate) fn error(&self, text: &str) -> String {
        self.paint(self.err_color, "1;31", text)
    }

    /// Yellow text for stderr.
    pub(crate) fn warn(&self, text: &str) -> String {
        self.paint(self.err_color, "33", text)
    }

    /// Whether stderr is a terminal with colour.
    pub(crate) fn stderr_is_terminal(&self) -> bool {
        std::io::stderr().is_terminal()
    }

    /// The terminal width assumed for tables.
    pub(crate) fn width(&self) -> usize {
        self.width
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Prints rows as aligned columns; the last column is truncated to fit.
fn table(style: &Style, header: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        outln!("(none)");
        return;
    }
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(cols - 1) {
            widths[i] = widths[i].max(cell.chars().count()).min(48);
        }
    }
    let used: usize = widths[..cols - 1].iter().map(|w| w + 2).sum();
    let last = style.width().saturating_sub(used).max(20);
    let line = |cells: Vec<String>, bold: bool| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let text = if i + 1 == cols {
                truncate(cell, last)
            } else {
                let t = truncate(cell, widths[i]);
                format!("{t:<width$}  ", width = widths[i])
            };
            out.push_str(&if bold {
                style.bold(&text)
            } else if i == 0 {
                style.cyan(&text)
            } else {
                text
            });
        }
        outln!("{}", out.trim_end());
    };
    line(header.iter().map(|h| h.to_string()).collect(), true);
    for row in rows {
        line(row.clone(), false);
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The string at `key`, escaped for one line.
fn line_of<'a>(v: &'a Value, key: &str) -> Cow<'a, str> {
    escape::line(str_of(v, key))
}

/// The first line of the string at `key`, escaped.
fn first_line_of<'a>(v: &'a Value, key: &str) -> Cow<'a, str> {
    escape::line(first_line(str_of(v, key)))
}

/// `value` as JSON text, escaped.
pub(crate) fn json_text(value: &Value) -> String {
    escape::json(&value.to_string()).into_owned()
}

/// `snodo discover`.
pub(crate) fn discover(style: &Style, client: &Client, _result: &Value) {
    let info = client.server_info().unwrap_or(Value::Null);
    let name = line_of(&info, "name");
    let version = line_of(&info, "version");
    outln!(
        "{} {} {}",
        style.bold("Server:"),
        if name.is_empty() { "(unnamed)" } else { &name },
        version
    );
    let era = if client.is_legacy() {
        "initialize-era"
    } else {
        "modern"
    };
    outln!(
        "{} {} ({era})",
        style.bold("Protocol:"),
        escape::line(&client.protocol_version())
    );
    let supported = client.supported_versions();
    if !supported.is_empty() {
        let supported: Vec<_> = supported.iter().map(|v| escape::line(v)).collect();
        outln!("{} {}", style.bold("Supported:"), supported.join(", "));
    }
    if let Some(session) = client.session_id() {
        outln!("{} {}", style.bold("Session:"), escape::line(&session));
    }
    let caps = client.server_capabilities();
    let mut names = Vec::new();
    if let Some(map) = caps.as_object() {
        for (key, value) in map {
            let flags: Vec<Cow<'_, str>> = value
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(_, v)| v.as_bool() == Some(true))
                        .map(|(k, _)| escape::line(k))
                        .collect()
                })
                .unwrap_or_default();
            let key = escape::line(key);
            if flags.is_empty() {
                names.push(key.into_owned());
            } else {
                names.push(format!("{key} ({})", flags.join(", ")));
            }
        }
    }
    outln!(
        "{} {}",
        style.bold("Capabilities:"),
        if names.is_empty() {
            "(none)".into()
        } else {
            names.join(", ")
        }
    );
    if let Some(instructions) = client.instructions() {
        outln!(
            "{}\n{}",
            style.bold("Instructions:"),
            escape::block(&instructions)
        );
    }
}

/// `snodo tools`.
pub(crate) fn tools(style: &Style, tools: &[Value]) {
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            let title = t.get("title").and_then(Value::as_str).map(escape::line);
            let desc = first_line_of(t, "description");
            let desc = match title {
                Some(title) if !desc.is_empty() => format!("{title}: {desc}"),
                Some(title) => title.to_string(),
                None => desc.to_string(),
            };
            let args: Vec<String> = t
                .get("inputSchema")
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| escape::line(k).into_owned()).collect())
                .unwrap_or_default();
            vec![line_of(t, "name").into_owned(), args.join(","), desc]
        })
        .collect();
    table(style, &["NAME", "ARGUMENTS", "DESCRIPTION"], &rows);
}

/// One content block, as text.
fn content_block(style: &Style, block: &Value) -> String {
    match str_of(block, "type") {
        "text" => escape::block(str_of(block, "text")).into_owned(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes of base64]",
            str_of(block, "type"),
            line_of(block, "mimeType"),
            str_of(block, "data").len()
        ),
        "resource_link" => format!(
            "[link {} {}]",
            line_of(block, "uri"),
            line_of(block, "name")
        ),
        "resource" => {
            let res = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = line_of(&res, "uri");
            match res.get("text").and_then(Value::as_str) {
                Some(text) => format!(
                    "{}\n{}",
                    style.cyan(&format!("[resource {uri}]")),
                    escape::block(text)
                ),
                None => format!(
                    "[resource {uri} {}, {} bytes of base64]",
                    line_of(&res, "mimeType"),
                    str_of(&res, "blob").len()
                ),
            }
        }
        other => format!("[{} block] {}", escape::line(other), json_text(block)),
    }
}

/// `snodo call`.
pub(crate) fn call_result(style: &Style, result: &Value) {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    if is_error {
        outln!("{}", style.red("The tool reported an error:"));
    }
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for block in &blocks {
        outln!("{}", content_block(style, block));
    }
    let has_text = blocks.iter().any(|b| str_of(b, "type") == "text");
    if let Some(structured) = result.get("structuredContent")
        && (!has_text || blocks.is_empty())
    {
        outln!(
            "{}",
            escape::json(&serde_json::to_string_pretty(structured).unwrap_or_default())
        );
    }
}

/// `snodo resources`.
pub(crate) fn resources(style: &Style, resources: &[Value], templates: &[Value]) {
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                line_of(r, "uri").into_owned(),
                line_of(r, "name").into_owned(),
                first_line_of(r, "description").into_owned(),
            ]
        })
        .collect();
    table(style, &["URI", "NAME", "DESCRIPTION"], &rows);
    if !templates.is_empty() {
        outln!();
        let rows: Vec<Vec<String>> = templates
            .iter()
            .map(|r| {
                vec![
                    line_of(r, "uriTemplate").into_owned(),
                    line_of(r, "name").into_owned(),
                    first_line_of(r, "description").into_owned(),
                ]
            })
            .collect();
        table(style, &["URI TEMPLATE", "NAME", "DESCRIPTION"], &rows);
    }
}

/// `snodo skills TARGET`.
pub(crate) fn skills(style: &Style, skills: &[snodo::skills::Skill]) {
    let rows: Vec<Vec<String>> = skills
        .iter()
        .map(|s| {
            let files = match &s.resources {
                snodo::skills::SkillFiles::Listed(files) => {
                    let bytes = files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size));
                    format!("{} ({bytes} bytes)", files.len())
                }
                _ => "dynamic".to_owned(),
            };
            let description = s.description().lines().next().unwrap_or_default();
            vec![
                escape::line(s.name()).into_owned(),
                escape::line(&s.uri).into_owned(),
                files,
                escape::line(description).into_owned(),
            ]
        })
        .collect();
    table(style, &["NAME", "URI", "FILES", "DESCRIPTION"], &rows);
}

/// `snodo read`.
pub(crate) fn read_result(style: &Style, result: &Value) {
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let many = contents.len() > 1;
    for c in &contents {
        if many {
            outln!("{}", style.cyan(&format!("[{}]", line_of(c, "uri"))));
        }
        match c.get("text").and_then(Value::as_str) {
            Some(text) => outln!("{}", escape::block(text)),
            None => outln!(
                "[blob {} {}, {} bytes of base64]",
                line_of(c, "uri"),
                line_of(c, "mimeType"),
                str_of(c, "blob").len()
            ),
        }
    }
}

/// `snodo prompts`.
pub(crate) fn prompts(style: &Style, prompts: &[Value]) {
    let rows: Vec<Vec<String>> = prompts
        .iter()
        .map(|p| {
            let args: Vec<String> = p
                .get("arguments")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .map(|a| {
                            let name = line_of(a, "name");
                            if a.get("required").and_then(Value::as_bool) == Some(true) {
                                name.into_owned()
                            } else {
                                format!("[{name}]")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            vec![
                line_of(p, "name").into_owned(),
                args.join(","),
                first_line_of(p, "description").into_owned(),
            ]
        })
        .collect();
    table(style, &["NAME", "ARGUMENTS", "DESCRIPTION"], &rows);
}

/// `snodo prompt`.
pub(crate) fn prompt_result(style: &Style, result: &Value) {
    if let Some(desc) = result.get("description").and_then(Value::as_str) {
        outln!("{}", style.bold(&escape::block(desc)));
    }
    for m in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = m.get("content").cloned().unwrap_or(Value::Null);
        outln!(
            "{} {}",
            style.cyan(&format!("{}:", line_of(m, "role"))),
            content_block(style, &content)
        );
    }
}

/// `snodo complete`.
pub(crate) fn completion(_style: &Style, result: &Value) {
    let c = result.get("completion").cloned().unwrap_or(Value::Null);
    for v in c
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        outln!(
            "{}",
            v.as_str()
                .map(|s| escape::line(s).into_owned())
                .unwrap_or_else(|| json_text(v))
        );
    }
    if c.get("hasMore").and_then(Value::as_bool) == Some(true) {
        let total = c.get("total").map(json_text).unwrap_or_else(|| "?".into());
        eprintln!("(more values available; {total} in total)");
    }
}

/// `snodo listen`: one notification.
pub(crate) fn notification(style: &Style, method: &str, params: &Value) {
    let short = escape::line(method.strip_prefix("notifications/").unwrap_or(method));
    match params.get("uri").and_then(Value::as_str) {
        Some(uri) => outln!("{} {}", style.cyan(&short), escape::line(uri)),
        None => outln!("{}", style.cyan(&short)),
    }
}
