//! `prompts/get`: string arguments, required ones enforced, messages shaped.

use serde_json::{Map, Value, json};

use super::catalog::Catalog;
use super::reply::Failure;
use super::{Server, outcome};
use crate::prompt::PromptArguments;
use crate::{Context, Error};

impl Server {
    pub(super) async fn get_prompt(
        &self,
        catalog: &Catalog,
        cx: Context,
    ) -> Result<Map<String, Value>, Failure> {
        let params = cx.salient_params();
        let name = match cx.target() {
            Some(n) if !n.is_empty() => n.to_owned(),
            _ => {
                return Err(Error::invalid_params("Prompt name must be a non-empty string").into());
            }
        };
        let Some(entry) = catalog.prompt(&name) else {
            return Err(Error::invalid_params(format!("Unknown prompt: {name}")).into());
        };
        if let Some(policy) = self.policy() {
            policy
                .check(&cx, super::Item::Prompt(&name))
                .map_err(Failure::ok)?;
        }
        let strings = |v: &Value| {
            v.as_object()
                .is_some_and(|m| m.values().all(Value::is_string))
        };
        let args = match (params.get("arguments"), cx.shared_arguments()) {
            (None | Some(Value::Null), None) => Map::new(),
            (None, Some(args)) if strings(&args) => args.as_object().cloned().unwrap_or_default(),
            _ => return Err(Error::invalid_params("Prompt arguments must be strings").into()),
        };
        let missing: Vec<&str> = entry
            .required
            .iter()
            .filter(|a| !args.contains_key(a.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(Error::invalid_params("Missing required prompt arguments")
                .with_data(json!({"missing": missing}))
                .into());
        }
        // The handler takes the context; this handle on it (no copy) reads
        // the client's capabilities afterwards.
        let asker = cx.clone();
        let result = outcome::run(
            entry.component.get_boxed(PromptArguments(args), cx),
            "Prompt raised an exception",
        )
        .await?
        .map_err(|failure| failure.into_error("Prompt failed"))?;
        match result.messages {
            Err(request) => outcome::input_required(&request, asker.client_capabilities()),
            Ok(messages) => {
                let mut out = Map::new();
                if let Some(d) = result.description {
                    out.insert("description".into(), d.into());
                }
                out.insert(
                    "messages".into(),
                    serde_json::to_value(&messages).unwrap_or(Value::Array(Vec::new())),
                );
                Ok(out)
            }
        }
    }
}
