//! The terminal side of a call: a progress bar on stderr, server log lines,
//! and elicitation questions asked on the terminal. The server's words in
//! them are escaped ([`crate::escape`]): a question cannot redraw itself.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use snodo::BoxError;
use snodo::client::{ElicitMode, ElicitRequest, LogMessage, Progress};
use snodo::handler::{ElicitAction, ElicitResponse};

use super::render::{Style, json_text};
use crate::escape;

/// Progress on stderr while a call reports it: a bar redrawn in place on a
/// terminal; otherwise one line per update (a JSON object with `--json`).
#[derive(Clone)]
pub(crate) struct ProgressBar {
    style: Style,
    json: bool,
    drawn: Arc<Mutex<bool>>,
}

impl ProgressBar {
    pub(crate) fn new(style: Style, json: bool) -> Self {
        Self {
            style,
            json,
            drawn: Arc::new(Mutex::new(false)),
        }
    }

    /// Redraws the bar for an update.
    pub(crate) fn update(&self, p: &Progress) {
        if self.json {
            eprintln!(
                "{}",
                json_text(&json!({"progress": p.progress, "total": p.total, "message": p.message}))
            );
            return;
        }
        if !self.style.stderr_is_terminal() {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p
                .message
                .as_deref()
                .map(|m| format!(" {}", escape::line(m)))
                .unwrap_or_default();
            eprintln!("progress: {}{total}{message}", p.progress);
            return;
        }
        let width = 30usize;
        let message = escape::line(p.message.as_deref().unwrap_or(""));
        let line = match p.total.filter(|t| *t > 0.0) {
            Some(total) => {
                let ratio = (p.progress / total).clamp(0.0, 1.0);
                let filled = (ratio * width as f64).round() as usize;
                format!(
                    "[{}{}] {:>3.0}% {message}",
                    "#".repeat(filled),
                    "-".repeat(width - filled),
                    ratio * 100.0
                )
            }
            None => format!("[{}] {message}", p.progress),
        };
        let max = self.style.width().saturating_sub(1);
        let line: String = line.chars().take(max).collect();
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[2K{}", self.style.dim(&line));
        let _ = stderr.flush();
        *self.drawn.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// Clears the bar.
    pub(crate) fn finish(&self) {
        let mut drawn = self.drawn.lock().unwrap_or_else(|e| e.into_inner());
        if *drawn {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
            *drawn = false;
        }
    }
}

/// Prints a server log message on stderr (a text message keeps its lines).
pub(crate) fn print_log(style: &Style, m: &LogMessage) {
    let data = match &m.data {
        Value::String(s) => escape::block(s).into_owned(),
        other => json_text(other),
    };
    let logger = m
        .logger
        .as_deref()
        .map(|l| format!("{}: ", escape::line(l)))
        .unwrap_or_default();
    let level = format!("[{}]", escape::line(&m.level));
    eprintln!("{} {logger}{data}", style.dim(&level));
}

/// Reads one line from stdin; `None` at end of input.
fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
    }
}

fn ask(prompt: &str) -> Option<String> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    read_line()
}

fn cancel() -> ElicitResponse {
    ElicitResponse {
        action: ElicitAction::Cancel,
        content: Map::new(),
    }
}

/// Parses an answer for one property; `Err` explains what is expected.
fn parse_answer(prop: &Value, text: &str) -> Result<Value, String> {
    let options: Vec<String> = prop
        .get("enum")
        .and_then(Value::as_array)
        .map(|e| {
            e.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .or_else(|| {
            prop.get("oneOf").and_then(Value::as_array).map(|list| {
                list.iter()
                    .filter_map(|o| o.get("const").and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default();
    match prop.get("type").and_then(Value::as_str) {
        Some("integer") => text
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "an integer".into()),
        Some("number") => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
            .ok_or_else(|| "a number".into()),
        Some("boolean") => match text.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(json!(true)),
            "n" | "no" | "false" => Ok(json!(false)),
            _ => Err("yes or no".into()),
        },
        Some("array") => {
            let items: Vec<String> = text
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let allowed: Vec<String> = prop
                .get("items")
                .and_then(|i| i.get("enum").or_else(|| i.get("anyOf")))
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(|o| {
                            o.as_str()
                                .or_else(|| o.get("const").and_then(Value::as_str))
                        })
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            if !allowed.is_empty() && items.iter().any(|i| !allowed.contains(i)) {
                return Err(format!("a comma-separated list of: {}", allowed.join(", ")));
            }
            Ok(json!(items))
        }
        _ if !options.is_empty() => {
            let t = text.trim();
            if let Ok(n) = t.parse::<usize>()
                && (1..=options.len()).contains(&n)
            {
                return Ok(json!(options[n - 1]));
            }
            if options.iter().any(|o| o == t) {
                Ok(json!(t))
            } else {
                Err(format!("one of: {}", options.join(", ")))
            }
        }
        _ => Ok(json!(text)),
    }
}

fn form_blocking(style: &Style, req: &ElicitRequest) -> ElicitResponse {
    eprintln!(
        "{} {}",
        style.warn("The server asks:"),
        escape::block(&req.message)
    );
    let ElicitMode::Form { schema } = &req.mode else {
        return cancel();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, prop) in props {
        let label = escape::line(prop.get("title").and_then(Value::as_str).unwrap_or(name));
        let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
        let mut hints = vec![escape::line(ty).into_owned()];
        if let Some(desc) = prop.get("description").and_then(Value::as_str) {
            hints.push(escape::line(desc).into_owned());
        }
        if let Some(default) = prop.get("default") {
            hints.push(format!("default {}", json_text(default)));
        }
        let is_required = required.contains(&name.as_str());
        let marker = if is_required { "*" } else { "" };
        loop {
            let Some(answer) = ask(&format!("  {label}{marker} ({}): ", hints.join("; "))) else {
                return cancel();
            };
            if answer.trim().is_empty() {
                if let Some(default) = prop.get("default") {
                    content.insert(name.clone(), default.clone());
                    break;
                }
                if !is_required {
                    break;
                }
                eprintln!("  {}", style.warn("a value is required"));
                continue;
            }
            match parse_answer(prop, &answer) {
                Ok(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                Err(expected) => eprintln!(
                    "  {}",
                    style.warn(&format!("expected {}", escape::line(&expected)))
                ),
            }
        }
    }
    let Some(answer) = ask("Submit? [Y/n = decline/c = cancel] ") else {
        return cancel();
    };
    match answer.trim().to_ascii_lowercase().as_str() {
        "" | "y" | "yes" => ElicitResponse {
            action: ElicitAction::Accept,
            content,
        },
        "c" | "cancel" => cancel(),
        _ => ElicitResponse {
            action: ElicitAction::Decline,
            content: Map::new(),
        },
    }
}

fn url_blocking(style: &Style, req: &ElicitRequest) -> ElicitResponse {
    eprintln!(
        "{} {}",
        style.warn("The server asks:"),
        escape::block(&req.message)
    );
    if let ElicitMode::Url { url } = &req.mode {
        eprintln!("  {}", escape::line(url));
    }
    match ask("Open this URL and continue? [y/N] ").map(|a| a.trim().to_ascii_lowercase()) {
        Some(a) if a == "y" || a == "yes" => ElicitResponse {
            action: ElicitAction::Accept,
            content: Map::new(),
        },
        Some(_) => ElicitResponse {
            action: ElicitAction::Decline,
            content: Map::new(),
        },
        None => cancel(),
    }
}

/// Asks a form on the terminal.
pub(crate) async fn ask_form(style: Style, req: ElicitRequest) -> Result<ElicitResponse, BoxError> {
    Ok(tokio::task::spawn_blocking(move || form_blocking(&style, &req)).await?)
}

/// Asks for consent to open a URL on the terminal.
pub(crate) async fn ask_url(style: Style, req: ElicitRequest) -> Result<ElicitResponse, BoxError> {
    Ok(tokio::task::spawn_blocking(move || url_blocking(&style, &req)).await?)
}
