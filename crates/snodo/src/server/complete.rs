//! `completion/complete`: argument values for prompts and template variables.

use serde_json::{Map, Value, json};

use super::Server;
use super::catalog::Catalog;
use super::reply::Failure;
use crate::{Context, Error};

/// Most values one completion returns.
pub const MAX_COMPLETION_VALUES: usize = 100;

impl Server {
    pub(super) async fn complete(
        &self,
        catalog: &Catalog,
        params: Map<String, Value>,
        cx: Context,
    ) -> Result<Map<String, Value>, Failure> {
        let invalid = |m: &str| -> Failure { Error::invalid_params(m.to_string()).into() };
        let reference = params
            .get("ref")
            .and_then(Value::as_object)
            .ok_or_else(|| invalid("ref must be an object"))?;
        let argument = params
            .get("argument")
            .and_then(Value::as_object)
            .ok_or_else(|| invalid("argument must be an object"))?;
        let (Some(arg_name), Some(value)) = (
            argument.get("name").and_then(Value::as_str),
            argument.get("value").and_then(Value::as_str),
        ) else {
            return Err(invalid("argument needs a string name and value"));
        };
        let empty = Map::new();
        let context = params
            .get("context")
            .and_then(|c| c.get("arguments"))
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let values = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("ref/prompt needs a name"))?;
                let entry = catalog
                    .prompt(name)
                    .ok_or_else(|| invalid(&format!("Unknown prompt: {name}")))?;
                self.may_complete(&cx, super::Item::Prompt(name))?;
                if entry.completes {
                    entry
                        .component
                        .complete_boxed(arg_name, value, context)
                        .await
                } else {
                    Vec::new()
                }
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid("ref/resource needs a uri"))?;
                let entry = catalog
                    .templates
                    .iter()
                    .find(|t| t.template.as_ref().is_some_and(|t| t.as_str() == uri))
                    .or_else(|| {
                        catalog
                            .resource_index
                            .get(uri)
                            .map(|&i| &catalog.resources[i])
                    });
                if entry.is_some() {
                    self.may_complete(&cx, super::Item::Resource(uri))?;
                }
                match entry {
                    Some(e) if e.completes => {
                        e.component.complete_boxed(arg_name, value, context).await
                    }
                    Some(_) => Vec::new(),
                    None => {
                        return Err(Error::invalid_params("Resource not found")
                            .with_data(json!({"uri": uri}))
                            .into());
                    }
                }
            }
            _ => return Err(invalid("ref.type must be ref/prompt or ref/resource")),
        };
        let total = values.len();
        let shown: Vec<Value> = values
            .into_iter()
            .take(MAX_COMPLETION_VALUES)
            .map(Value::from)
            .collect();
        let mut out = Map::new();
        out.insert(
            "completion".into(),
            json!({"values": shown, "total": total, "hasMore": total > MAX_COMPLETION_VALUES}),
        );
        Ok(out)
    }

    /// What a caller may not get or read it may not complete either: the
    /// policy's check, as for the prompt or the resource itself.
    fn may_complete(&self, cx: &Context, item: super::Item<'_>) -> Result<(), Failure> {
        match self.policy() {
            Some(policy) => policy.check(cx, item).map_err(Failure::ok),
            None => Ok(()),
        }
    }
}
