//! The method catalog of the 2026-07-28 revision.

/// A client-to-server request method this library knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `server/discover`
    Discover,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/templates/list`
    ResourceTemplatesList,
    /// `resources/read`
    ResourcesRead,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `completion/complete`
    Complete,
    /// `subscriptions/listen`
    Listen,
    /// `tasks/get` (the Tasks extension)
    TasksGet,
    /// `tasks/update` (the Tasks extension)
    TasksUpdate,
    /// `tasks/cancel` (the Tasks extension)
    TasksCancel,
}

impl Method {
    /// Looks a method name up; `None` for unknown and removed methods.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "server/discover" => Method::Discover,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::Complete,
            "subscriptions/listen" => Method::Listen,
            "tasks/get" => Method::TasksGet,
            "tasks/update" => Method::TasksUpdate,
            "tasks/cancel" => Method::TasksCancel,
            _ => return None,
        })
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Discover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::Complete => "completion/complete",
            Method::Listen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
        }
    }

    /// Whether the method belongs to the Tasks extension.
    pub fn is_task_method(self) -> bool {
        matches!(
            self,
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel
        )
    }

    /// The server capability that must be advertised for the method to exist.
    pub fn capability(self) -> Option<&'static str> {
        match self {
            Method::Discover
            | Method::Listen
            | Method::TasksGet
            | Method::TasksUpdate
            | Method::TasksCancel => None,
            Method::ToolsList | Method::ToolsCall => Some("tools"),
            Method::ResourcesList | Method::ResourceTemplatesList | Method::ResourcesRead => {
                Some("resources")
            }
            Method::PromptsList | Method::PromptsGet => Some("prompts"),
            Method::Complete => Some("completions"),
        }
    }

    /// Where the `Mcp-Name` header's value lives in the params as sent, for the methods that
    /// need it (a decoded request holds it in
    /// [`Request::target`](crate::model::Request::target)).
    pub fn name_param(self) -> Option<&'static str> {
        crate::wire::target_member(self.as_str())
    }
}

/// Whether `name` is a method earlier revisions had and 2026-07-28 removed.
pub(crate) fn is_removed(name: &str) -> bool {
    REMOVED.contains(&name)
}

const REMOVED: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];
