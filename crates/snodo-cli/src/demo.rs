//! The demo server: tools that show both failure shapes, required arguments,
//! an output schema, an `x-mcp-header` argument, progress and an elicitation;
//! a resource, a resource template, an MCP App (for `add`), and a prompt
//! that completes names.

use std::time::Duration;

use serde_json::{Map, Value, json};
use snodo::State;
use snodo::apps::AppResource;
use snodo::prelude::*;
use snodo::prompt::{Prompt, PromptArgument, PromptArguments, PromptMessage, PromptResult};
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo::schema::Basic;
use snodo::server::StateSealer;
use snodo::server::legacy::SessionRecords;
use snodo::task::TaskOptions;

/// Words the `lookup` tool knows.
const DICTIONARY: &[(&str, &str)] = &[
    (
        "mcp",
        "Model Context Protocol: how LLM hosts talk to tools, resources and prompts.",
    ),
    (
        "tool",
        "A function a model may call, described by a JSON Schema.",
    ),
    (
        "resource",
        "Data a server exposes by URI for a client to read.",
    ),
    ("prompt", "A reusable message template a server offers."),
    (
        "rust",
        "A language empowering everyone to build reliable and efficient software.",
    ),
];

/// The MCP App `add` renders in: one HTML page, no external assets.
const SUM_APP: &str = include_str!("demo_app.html");

/// Names the `introduce` prompt completes.
const NAMES: &[&str] = &[
    "Ada",
    "Alan",
    "Barbara",
    "Edsger",
    "Grace",
    "Katherine",
    "Linus",
    "Margaret",
];

#[snodo::tool(
    description = "Greets someone by name",
    annotations = { "readOnlyHint": true, "idempotentHint": true },
    input_schema = {
        "type": "object",
        "properties": {
            "name": { "type": "string", "minLength": 1, "x-mcp-header": "Name", "description": "Who to greet" }
        },
        "required": ["name"],
        "additionalProperties": false
    }
)]
async fn greet(args: Arguments) -> CallResult {
    Ok(format!("Hello, {}!", args.str("name")?).into())
}

#[snodo::tool(
    description = "Adds two integers",
    ui = "ui://demo/sum.html",
    annotations = { "readOnlyHint": true },
    input_schema = {
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"]
    },
    output_schema = {
        "type": "object",
        "properties": { "sum": { "type": "integer" } },
        "required": ["sum"]
    }
)]
async fn add(args: Arguments) -> CallResult {
    let (a, b) = (args.i64("a")?, args.i64("b")?);
    match a.checked_add(b) {
        Some(sum) => Ok(ToolResult::structured(json!({ "sum": sum }))),
        None => Ok(ToolResult::error(
            "The sum does not fit in a 64-bit integer",
        )),
    }
}

#[snodo::tool(
    description = "Looks a word up in a small built-in dictionary",
    annotations = { "readOnlyHint": true },
    input_schema = {
        "type": "object",
        "properties": { "word": { "type": "string", "minLength": 1 } },
        "required": ["word"]
    }
)]
async fn lookup(args: Arguments) -> CallResult {
    let word = args.str("word")?.to_lowercase();
    Ok(match DICTIONARY.iter().find(|(w, _)| *w == word) {
        Some((_, definition)) => ToolResult::text(*definition),
        None => ToolResult::error(format!("No definition for \"{word}\"")),
    })
}

#[snodo::tool(
    description = "Announces a change to every listener (on every node sharing a bus): `tools`, `prompts` or `resources` for a list_changed, or a resource URI for resources/updated",
    annotations = { "idempotentHint": true },
    input_schema = {
        "type": "object",
        "properties": {
            "what": { "type": "string", "minLength": 1, "maxLength": 2048, "description": "tools, prompts, resources, or a resource URI" }
        },
        "required": ["what"],
        "additionalProperties": false
    }
)]
async fn announce(args: Arguments, cx: Context) -> CallResult {
    let what = args.str("what")?;
    let events = cx.events();
    match what {
        "tools" => events.tools_changed(),
        "prompts" => events.prompts_changed(),
        "resources" => events.resources_changed(),
        uri if uri.contains(':') => events.resource_updated(uri),
        other => {
            return Ok(ToolResult::error(format!(
                "Expected tools, prompts, resources or a resource URI, not {other:?}"
            )));
        }
    }
    Ok(format!("Announced {what}").into())
}

#[snodo::tool(
    description = "Counts from 1 to `to`, reporting progress at each step",
    annotations = { "readOnlyHint": true },
    input_schema = {
        "type": "object",
        "properties": { "to": { "type": "integer", "minimum": 1, "maximum": 100 } },
        "required": ["to"]
    }
)]
async fn count(args: Arguments, cx: Context) -> CallResult {
    let to = args.i64("to")?;
    for step in 1..=to {
        if cx.is_cancelled() {
            return Ok(ToolResult::error("Cancelled"));
        }
        let _ = cx
            .progress(
                step as f64,
                Some(to as f64),
                Some(&format!("Counted {step} of {to}")),
            )
            .await;
        // Each step takes a moment, the last one included: the TypeScript
        // SDK v1 client handles notifications a microtask later than
        // responses, so a progress notification read together with the
        // response would reach it after the call had already finished.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(ToolResult::text(format!("Counted to {to}")))
}

#[snodo::tool(
    description = "Writes a report in `seconds` seconds (1 to 60), reporting progress each second; runs as a task when the client allows tasks",
    annotations = { "readOnlyHint": true },
    input_schema = {
        "type": "object",
        "properties": { "seconds": { "type": "integer", "minimum": 1, "maximum": 60 } },
        "required": ["seconds"]
    },
    task = "optional"
)]
async fn report(args: Arguments, cx: Context) -> CallResult {
    let seconds = args.i64("seconds")?.clamp(1, 60);
    for second in 1..=seconds {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            () = cx.cancellation().cancelled() => return Ok(ToolResult::error("Cancelled")),
        }
        // Inline: a progress notification when asked for; as a task: the
        // task's status message.
        let _ = cx
            .progress(
                second as f64,
                Some(seconds as f64),
                Some("Writing the report"),
            )
            .await;
    }
    Ok(ToolResult::text(format!(
        "Report ready after {seconds} s{}",
        cx.task_id()
            .map(|id| format!(" (task {id})"))
            .unwrap_or_default()
    )))
}

/// `confirm_delete`: the question goes out as a form elicitation; the request
/// state is sealed with the server's [`StateSealer`] (shared state) so a client
/// cannot skip it.
#[snodo::tool(
    description = "Pretends to delete a file, after asking the user to confirm",
    annotations = { "destructiveHint": true },
    scopes = ["files:write"],
    task = "optional",
    input_schema = {
        "type": "object",
        "properties": { "path": { "type": "string", "minLength": 1 } },
        "required": ["path"]
    }
)]
async fn confirm_delete(args: Arguments, cx: Context, sealer: State<StateSealer>) -> CallResult {
    let path = args.str("path")?;
    if let (Some(_), Some(answer)) = (sealer.open(&cx)?, cx.elicitation("confirm")) {
        return Ok(match (answer.action, answer.bool("confirm")) {
            (snodo::handler::ElicitAction::Accept, Some(true)) => {
                ToolResult::text(format!("Deleted {path} (not really: this is a demo)"))
            }
            _ => ToolResult::text(format!("Kept {path}")),
        });
    }
    let form = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Delete it?"}},
        "required": ["confirm"]
    });
    Ok(ToolResult::input_required(
        InputRequired::new()
            .elicit_form("confirm", &format!("Really delete {path}?"), form)
            .state(sealer.seal(&cx, &json!({"asked": true}))),
    ))
}

/// `demo://readme`.
struct Readme;

impl Resource for Readme {
    fn uri(&self) -> Option<&str> {
        Some("demo://readme")
    }
    fn name(&self) -> &str {
        "readme"
    }
    fn description(&self) -> Option<&str> {
        Some("What this demo server offers")
    }
    fn mime_type(&self) -> Option<&str> {
        Some("text/markdown")
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let text = "# snodo demo\n\nTools: greet, add, lookup, count, confirm_delete.\n\
                    Resources: demo://readme, demo://greetings/{name}.\nPrompts: introduce.\n";
        Ok(ResourceContents::text(req.uri, text)
            .with_mime_type("text/markdown")
            .into())
    }
}

/// `demo://greetings/{name}`.
struct Greetings;

impl Resource for Greetings {
    fn uri_template(&self) -> Option<&str> {
        Some("demo://greetings/{name}")
    }
    fn name(&self) -> &str {
        "greetings"
    }
    fn description(&self) -> Option<&str> {
        Some("A greeting for anyone")
    }
    fn mime_type(&self) -> Option<&str> {
        Some("text/plain")
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        let name = req.var("name").unwrap_or("stranger").to_string();
        Ok(ResourceContents::text(req.uri, format!("Hello, {name}!"))
            .with_mime_type("text/plain")
            .into())
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(
        &self,
        _variable: &str,
        value: &str,
        _context: &Map<String, Value>,
    ) -> Vec<String> {
        complete_name(value)
    }
}

fn complete_name(prefix: &str) -> Vec<String> {
    let prefix = prefix.to_lowercase();
    NAMES
        .iter()
        .filter(|n| n.to_lowercase().starts_with(&prefix))
        .map(|n| n.to_string())
        .collect()
}

/// `introduce`: a prompt with a required `name` that completes from a list.
struct Introduce;

impl Prompt for Introduce {
    fn name(&self) -> &str {
        "introduce"
    }
    fn description(&self) -> Option<&str> {
        Some("Asks the model to introduce someone")
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("name").with_description("Who to introduce")]
    }
    async fn get(&self, args: PromptArguments, _cx: Context) -> Result<PromptResult, HandlerError> {
        let name = args.get("name").unwrap_or_default();
        Ok(PromptResult::new([PromptMessage::user_text(format!(
            "Please introduce {name} in two sentences."
        ))]))
    }
    fn completes(&self) -> bool {
        true
    }
    async fn complete(
        &self,
        _argument: &str,
        value: &str,
        _context: &Map<String, Value>,
    ) -> Vec<String> {
        complete_name(value)
    }
}

/// The scope every demo call needs over OAuth (`confirm_delete` needs
/// `files:write` instead).
pub(crate) const READ_SCOPE: &str = "demo:read";
/// The scope `confirm_delete` needs.
pub(crate) const WRITE_SCOPE: &str = "files:write";

/// The demo server, with the Basic validator installed. Its scopes matter
/// only when it is served with `--issuer`.
/// Where the demo keeps its tasks: `memory` (the default), `sqlite:PATH`
/// or a `postgres://` URL.
pub(crate) async fn task_options(spec: &str) -> Result<TaskOptions, String> {
    if spec == "memory" {
        return Ok(TaskOptions::memory());
    }
    if let Some(path) = spec.strip_prefix("sqlite:") {
        let store = snodo_sqlite::SqliteTaskStore::open(path)
            .map_err(|e| format!("--tasks {spec}: {e}"))?;
        return Ok(TaskOptions::new(store));
    }
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        let store = snodo_postgres::PostgresTaskStore::connect(spec)
            .await
            .map_err(|e| format!("--tasks: {e}"))?;
        return Ok(TaskOptions::new(store));
    }
    Err(format!(
        "--tasks {spec}: expected memory, sqlite:PATH or a postgres:// URL"
    ))
}

/// How a demo node is put together: where its tasks are, the bus that
/// joins it to other nodes, its keys, its page size.
pub(crate) struct Setup {
    pub(crate) tasks: TaskOptions,
    pub(crate) events: Option<snodo::server::events::EventHub>,
    /// The keys that seal request state: the service's, or one made for
    /// this process.
    pub(crate) keys: snodo::server::keyring::Keyring,
    pub(crate) page_size: Option<usize>,
    /// The skills served beside the demo's own components.
    pub(crate) skills: Option<snodo::skills::Skills>,
}

pub(crate) fn server(setup: Setup) -> Server {
    let sealer = StateSealer::from_keyring(setup.keys);
    let mut builder = Server::builder("snodo-demo", env!("CARGO_PKG_VERSION"))
        .instructions("A demo: greet someone, add two integers, look a word up, count with progress, confirm a deletion, write a report (a task when the client allows tasks), or announce a change to every listener.")
        .validator(Basic)
        .tool(greet)
        .tool(add)
        .tool(lookup)
        .tool(count)
        .state(sealer)
        .tool(confirm_delete)
        .tool(report)
        .tool(announce)
        .tasks(setup.tasks)
        .resource(Readme)
        .resource(Greetings)
        .app(
            AppResource::html("ui://demo/sum.html", "sum-app", SUM_APP)
                .title("Sum")
                .description("Shows the two integers `add` was given and their sum")
                .prefers_border(true),
        )
        .prompt(Introduce)
        .default_scopes([READ_SCOPE]);
    if let Some(hub) = setup.events {
        builder = builder.events(hub);
    }
    if let Some(size) = setup.page_size {
        builder = builder.page_size(size);
    }
    if let Some(skills) = setup.skills {
        builder = builder.skills(skills);
    }
    builder
        .build()
        .expect("the demo server's definitions are valid")
}

/// What `--bus URL` joins a node to: the hub's bus and the directory of
/// initialize-era sessions, both on the same Redis or PostgreSQL, both
/// authenticated with `keys`.
pub(crate) async fn bus(
    url: &str,
    channel: Option<&str>,
    keys: &snodo::server::keyring::Keyring,
) -> Result<(snodo::server::events::EventHub, SessionRecords), String> {
    use snodo::server::events::EventHub;
    use snodo::transport::http::DEFAULT_SESSION_IDLE;
    const MAX_LISTENERS: usize = 4096;
    if url.starts_with("redis://") || url.starts_with("rediss://") {
        let channel = channel.unwrap_or(snodo_redis::DEFAULT_CHANNEL);
        let bus = snodo_redis::RedisBus::connect(url, channel)
            .await
            .map_err(|e| format!("--bus: {e}"))?;
        let prefix = match channel {
            snodo_redis::DEFAULT_CHANNEL => snodo_redis::DEFAULT_PREFIX.to_string(),
            other => format!("{other}:session:"),
        };
        let sessions = snodo_redis::RedisSessions::connect(url, &prefix, DEFAULT_SESSION_IDLE)
            .await
            .map_err(|e| format!("--bus: {e}"))?;
        return Ok((
            EventHub::with_bus(MAX_LISTENERS, bus, keys.clone())
                .map_err(|e| format!("--bus: {e}"))?,
            SessionRecords::new(sessions, keys.clone()),
        ));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let channel = channel.unwrap_or(snodo_postgres::DEFAULT_BUS_CHANNEL);
        let bus = snodo_postgres::PostgresBus::connect(url, channel)
            .await
            .map_err(|e| format!("--bus: {e}"))?;
        let sessions = snodo_postgres::PostgresSessions::connect(url, DEFAULT_SESSION_IDLE)
            .await
            .map_err(|e| format!("--bus: {e}"))?;
        return Ok((
            EventHub::with_bus(MAX_LISTENERS, bus, keys.clone())
                .map_err(|e| format!("--bus: {e}"))?,
            SessionRecords::new(sessions, keys.clone()),
        ));
    }
    Err(format!(
        "--bus {url}: expected a redis:// or a postgres:// URL"
    ))
}
