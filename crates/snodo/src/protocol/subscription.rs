//! `SubscriptionFilter`: what a `subscriptions/listen` request asks to hear,
//! one type for the client that sends it and the server that honours it.

use serde_json::{Map, Value, json};

/// What a subscription asks for (`SubscriptionFilter`).
///
/// ```
/// use snodo::model::SubscriptionFilter;
/// let filter = SubscriptionFilter::new().tools().resource("file:///log.txt").task("t-1");
/// assert_eq!(filter.to_json()["toolsListChanged"], true);
/// assert_eq!(filter.to_json()["resourceSubscriptions"][0], "file:///log.txt");
/// assert_eq!(filter.to_json()["taskIds"][0], "t-1");
/// assert!(filter.covers_uri("file:///log.txt"));
/// assert!(!filter.covers_uri("file:///log.txt.bak"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs and what lies below
    /// them (see [`SubscriptionFilter::covers_uri`]).
    pub resource_subscriptions: Vec<String>,
    /// `notifications/tasks` for these tasks (the Tasks extension).
    pub task_ids: Vec<String>,
}

impl SubscriptionFilter {
    /// An empty filter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every list-changed notification.
    pub fn all_lists() -> Self {
        Self::new().tools().prompts().resources()
    }

    /// Adds tool list changes.
    #[must_use]
    pub fn tools(mut self) -> Self {
        self.tools_list_changed = true;
        self
    }

    /// Adds prompt list changes.
    #[must_use]
    pub fn prompts(mut self) -> Self {
        self.prompts_list_changed = true;
        self
    }

    /// Adds resource list changes.
    #[must_use]
    pub fn resources(mut self) -> Self {
        self.resources_list_changed = true;
        self
    }

    /// Adds updates of one resource (and of the resources below it).
    #[must_use]
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_subscriptions.push(uri.into());
        self
    }

    /// Adds the status changes of one task (the Tasks extension: the request
    /// must declare it).
    #[must_use]
    pub fn task(mut self, task_id: impl Into<String>) -> Self {
        self.task_ids.push(task_id.into());
        self
    }

    /// The wire form: the members that are set.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools_list_changed),
            ("promptsListChanged", self.prompts_list_changed),
            ("resourcesListChanged", self.resources_list_changed),
        ] {
            if on {
                out.insert(key.into(), true.into());
            }
        }
        if !self.resource_subscriptions.is_empty() {
            out.insert(
                "resourceSubscriptions".into(),
                json!(self.resource_subscriptions),
            );
        }
        if !self.task_ids.is_empty() {
            out.insert("taskIds".into(), json!(self.task_ids));
        }
        Value::Object(out)
    }

    /// Whether an update of `uri` is asked for: a subscribed URI, or one
    /// below it (the next character after the subscribed prefix is a `/`,
    /// or the subscribed URI ends with one).
    pub fn covers_uri(&self, uri: &str) -> bool {
        self.resource_subscriptions
            .iter()
            .any(|s| uri_covers(s, uri))
    }

    /// Whether the notification `method` with `params` is one this filter
    /// asks for.
    pub fn accepts(&self, method: &str, params: &Map<String, Value>) -> bool {
        let text = |key: &str| params.get(key).and_then(Value::as_str);
        match method {
            "notifications/tools/list_changed" => self.tools_list_changed,
            "notifications/prompts/list_changed" => self.prompts_list_changed,
            "notifications/resources/list_changed" => self.resources_list_changed,
            "notifications/resources/updated" => text("uri").is_some_and(|u| self.covers_uri(u)),
            "notifications/tasks" => {
                text("taskId").is_some_and(|id| self.task_ids.iter().any(|t| t == id))
            }
            _ => false,
        }
    }
}

/// Whether a subscription to `subscribed` covers a change of `uri`: the
/// same URI, or a sub-resource of it (the next character after the prefix is
/// a `/`, or the subscribed URI ends with one). The one rule for
/// `subscriptions/listen` filters, on both sides, and initialize-era session
/// subscriptions.
pub(crate) fn uri_covers(subscribed: &str, uri: &str) -> bool {
    uri == subscribed
        || (uri.starts_with(subscribed)
            && (subscribed.ends_with('/') || uri[subscribed.len()..].starts_with('/')))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_filter_accepts_what_it_asks_for_and_nothing_else() {
        let filter = SubscriptionFilter::new()
            .prompts()
            .resource("demo://notes/")
            .task("t-1");
        let params = |v: Value| v.as_object().cloned().unwrap();
        assert!(filter.accepts("notifications/prompts/list_changed", &Map::new()));
        assert!(!filter.accepts("notifications/tools/list_changed", &Map::new()));
        let updated = "notifications/resources/updated";
        assert!(filter.accepts(updated, &params(json!({"uri": "demo://notes/a"}))));
        assert!(!filter.accepts(updated, &params(json!({"uri": "demo://notesx"}))));
        let tasks = "notifications/tasks";
        assert!(filter.accepts(
            tasks,
            &params(json!({"taskId": "t-1", "status": "working"}))
        ));
        assert!(!filter.accepts(tasks, &params(json!({"taskId": "t-2"}))));
        assert!(!filter.accepts("notifications/message", &Map::new()));
    }
}
