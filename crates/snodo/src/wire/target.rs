//! What a request acts on, read out of its `params` as it is decoded: the
//! member that names its target (a tool's or prompt's `name`, a resource's
//! `uri`, a task's `taskId`) and a call's `arguments`.
//!
//! Each is read out only when it has its type (the target a string, the
//! arguments an object); a member of another type stays in `params`, where
//! admission finds it and refuses it with its usual message. Nothing is lost:
//! [`Request::into_params`](super::Request::into_params) puts both back.

use serde_json::{Map, Value};

/// The `params` member that names what `method` acts on.
pub(crate) fn target_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some(NAME),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some(URI),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some(TASK_ID),
        _ => None,
    }
}

/// The target of a request for `method` in its params as sent (before
/// decoding read it out), when a string.
pub(crate) fn target_in<'a>(method: &str, params: &'a Map<String, Value>) -> Option<&'a str> {
    target_member(method)
        .and_then(|key| params.get(key))
        .and_then(Value::as_str)
}

/// Whether `method`'s `params` may carry `arguments` for a tool or a prompt.
pub(crate) fn takes_arguments(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get")
}

const NAME: &str = "name";
const URI: &str = "uri";
const TASK_ID: &str = "taskId";
const ARGUMENTS: &str = "arguments";

/// The members that may be read out of `params`, kept aside as they arrive
/// (before the method is known: it may come after `params`).
#[derive(Default)]
pub(crate) struct Aside {
    name: Option<Value>,
    uri: Option<Value>,
    task_id: Option<Value>,
    arguments: Option<Value>,
}

impl Aside {
    /// Keeps `value` aside if `key` is one of the members that may be read
    /// out, else gives it back. A later member of the same name replaces an
    /// earlier one, as in a map.
    pub(crate) fn keep(&mut self, key: &str, value: Value) -> Option<Value> {
        match self.slot(key) {
            Some(slot) => {
                *slot = Some(value);
                None
            }
            None => Some(value),
        }
    }

    /// The members of `params` that may be read out, moved aside.
    pub(crate) fn take_from(params: &mut Map<String, Value>) -> Self {
        let mut aside = Self::default();
        for key in [NAME, URI, TASK_ID, ARGUMENTS] {
            if let Some(value) = params.remove(key) {
                aside.keep(key, value);
            }
        }
        aside
    }

    /// Reads out `method`'s target and arguments where they have their
    /// types; everything else goes back into `params`.
    pub(crate) fn settle(
        mut self,
        method: &str,
        params: &mut Map<String, Value>,
    ) -> (Option<String>, Option<Map<String, Value>>) {
        let target = target_member(method).and_then(|key| {
            let slot = self.slot(key)?;
            match slot.take() {
                Some(Value::String(target)) => Some(target),
                other => {
                    *slot = other;
                    None
                }
            }
        });
        let arguments = match self.arguments.take() {
            Some(Value::Object(arguments)) if takes_arguments(method) => Some(arguments),
            other => {
                self.arguments = other;
                None
            }
        };
        self.restore(params);
        (target, arguments)
    }

    /// Puts every member kept aside back into `params`.
    pub(crate) fn restore(self, params: &mut Map<String, Value>) {
        let all = [
            (NAME, self.name),
            (URI, self.uri),
            (TASK_ID, self.task_id),
            (ARGUMENTS, self.arguments),
        ];
        for (key, value) in all {
            if let Some(value) = value {
                params.insert(key.into(), value);
            }
        }
    }

    fn slot(&mut self, key: &str) -> Option<&mut Option<Value>> {
        match key {
            NAME => Some(&mut self.name),
            URI => Some(&mut self.uri),
            TASK_ID => Some(&mut self.task_id),
            ARGUMENTS => Some(&mut self.arguments),
            _ => None,
        }
    }
}

/// `params` with the target and the arguments that were read out of it put
/// back under their names.
pub(crate) fn put_back(
    method: &str,
    params: &mut Map<String, Value>,
    target: Option<String>,
    arguments: Option<Map<String, Value>>,
) {
    if let (Some(key), Some(target)) = (target_member(method), target) {
        params.insert(key.into(), Value::String(target));
    }
    if let Some(arguments) = arguments {
        params.insert(ARGUMENTS.into(), Value::Object(arguments));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn target_member_names_what_a_method_acts_on() {
        assert_eq!(target_member("tools/call"), Some("name"));
        assert_eq!(target_member("resources/read"), Some("uri"));
        assert_eq!(target_member("tasks/get"), Some("taskId"));
        assert_eq!(target_member("tools/list"), None);
    }

    fn settle(method: &str, params: Value) -> (Option<String>, Option<Value>, Value) {
        let Value::Object(mut params) = params else {
            unreachable!()
        };
        let aside = Aside::take_from(&mut params);
        let (target, arguments) = aside.settle(method, &mut params);
        (target, arguments.map(Value::Object), Value::Object(params))
    }

    #[test]
    fn a_call_gives_its_name_and_arguments_and_keeps_the_rest() {
        let (target, arguments, rest) = settle(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1}, "uri": "x", "requestState": "s"}),
        );
        assert_eq!(target.as_deref(), Some("add"));
        assert_eq!(arguments, Some(json!({"a": 1})));
        assert_eq!(rest, json!({"uri": "x", "requestState": "s"}));
    }

    #[test]
    fn a_member_of_another_type_stays_in_params() {
        let (target, arguments, rest) = settle("tools/call", json!({"name": 5, "arguments": [1]}));
        assert_eq!((target, arguments), (None, None));
        assert_eq!(rest, json!({"name": 5, "arguments": [1]}));
        let (target, _, rest) = settle("resources/read", json!({"uri": null, "name": "n"}));
        assert_eq!(target, None);
        assert_eq!(rest, json!({"uri": null, "name": "n"}));
    }

    #[test]
    fn other_methods_keep_every_member() {
        let params = json!({"name": "n", "uri": "u", "taskId": "t", "arguments": {}});
        let (target, arguments, rest) = settle("completion/complete", params.clone());
        assert_eq!((target, arguments), (None, None));
        assert_eq!(rest, params);
        // A task method reads its id; a prompt its name and arguments.
        assert_eq!(
            settle("tasks/cancel", params.clone()).0.as_deref(),
            Some("t")
        );
        let (target, arguments, _) = settle("prompts/get", params);
        assert_eq!(target.as_deref(), Some("n"));
        assert_eq!(arguments, Some(json!({})));
    }

    #[test]
    fn put_back_restores_the_params_as_sent() {
        let sent = json!({"name": "add", "arguments": {"a": 1}, "x": true});
        let Value::Object(mut params) = sent.clone() else {
            unreachable!()
        };
        let (target, arguments) = Aside::take_from(&mut params).settle("tools/call", &mut params);
        put_back("tools/call", &mut params, target, arguments);
        assert_eq!(Value::Object(params), sent);
    }
}
