//! What a running server says of itself, read once by `snodo bundle` and
//! `snodo registry init`: its identity (`serverInfo`), its instructions and,
//! when asked, its tools and whether it has prompts.

use serde_json::{Map, Value};
use snodo::client::{Client, ClientError, Target};
use snodo::tool::ToolDefinition;

/// A server's own description.
pub(crate) struct Described {
    info: Map<String, Value>,
    instructions: Option<String>,
    /// Its tools (read only when asked).
    pub(crate) tools: Vec<ToolDefinition>,
    /// Whether it lists a prompt (read only when asked).
    pub(crate) prompts: bool,
}

impl Described {
    /// Connects to `target`, reads what it says of itself (with `listings`,
    /// its tools and prompts too) and closes the connection.
    pub(crate) async fn read(target: Target, listings: bool) -> Result<Self, ClientError> {
        let client = Client::connect(target).await?;
        let read = async {
            let info = match client.server_info() {
                Some(Value::Object(info)) => info,
                _ => Map::new(),
            };
            let caps = client.server_capabilities();
            let tools = if listings && caps.get("tools").is_some() {
                client.list_tools().await?
            } else {
                Vec::new()
            };
            let prompts = listings
                && caps.get("prompts").is_some()
                && !client.list_prompts().await?.is_empty();
            Ok(Self {
                info,
                instructions: client.instructions(),
                tools,
                prompts,
            })
        }
        .await;
        client.close().await;
        read
    }

    /// A text member of its `serverInfo` (`name`, `version`, `title`, ...).
    pub(crate) fn text(&self, key: &str) -> Option<String> {
        self.info
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Its instructions, when it gives any.
    pub(crate) fn instructions(&self) -> Option<&str> {
        self.instructions
            .as_deref()
            .filter(|i| !i.trim().is_empty())
    }

    /// What it does: its `serverInfo.description`, else the first line of
    /// its instructions.
    pub(crate) fn description(&self) -> Option<String> {
        self.text("description").or_else(|| {
            self.instructions()
                .and_then(|i| i.lines().find(|l| !l.trim().is_empty()))
                .map(|l| l.trim().to_owned())
        })
    }
}
