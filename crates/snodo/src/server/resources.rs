//! `resources/read`: fixed URIs first, then templates; contents checked.

use serde_json::{Map, Value, json};

use super::catalog::{Catalog, ResourceEntry};
use super::reply::Failure;
use super::{Server, outcome};
use crate::resource::{ReadKind, ReadRequest};
use crate::{Context, Error};

impl Server {
    pub(super) async fn read(
        &self,
        catalog: &Catalog,
        cx: Context,
    ) -> Result<Map<String, Value>, Failure> {
        let uri = match cx.target() {
            Some(u) if !u.is_empty() => u.to_owned(),
            _ => {
                return Err(
                    Error::invalid_params("Resource uri must be a non-empty string").into(),
                );
            }
        };
        let (entry, vars) = find(catalog, &uri)?;
        if let Some(policy) = self.policy() {
            policy
                .check(&cx, super::Item::Resource(&uri))
                .map_err(Failure::ok)?;
        }
        // The handler takes the context; this handle on it (no copy) reads
        // the client's capabilities afterwards.
        let asker = cx.clone();
        let request = ReadRequest { uri, vars };
        let result = outcome::run(
            entry.component.read_boxed(request, cx),
            "Resource raised an exception",
        )
        .await?
        .map_err(|failure| failure.into_error("Resource read failed"))?;
        match result.kind {
            ReadKind::InputRequired(request) => {
                outcome::input_required(&request, asker.client_capabilities())
            }
            ReadKind::Contents(contents) => {
                if contents.is_empty() || !contents.iter().all(|c| c.is_valid()) {
                    return Err(Error::internal("Resource returned invalid contents").into());
                }
                let mut out = Map::new();
                out.insert(
                    "contents".into(),
                    Value::Array(contents.into_iter().map(|c| c.into_value()).collect()),
                );
                result
                    .cache
                    .unwrap_or(self.inner.read_cache)
                    .apply(&mut out);
                Ok(out)
            }
        }
    }
}

/// A resource and the variables its template matched.
type Found<'c> = (&'c ResourceEntry, Vec<(String, String)>);

/// The resource serving `uri`: an exact fixed URI, else exactly one template.
fn find<'c>(catalog: &'c Catalog, uri: &str) -> Result<Found<'c>, Failure> {
    if let Some(&i) = catalog.resource_index.get(uri) {
        return Ok((&catalog.resources[i], Vec::new()));
    }
    let mut found = None;
    for entry in &catalog.templates {
        if let Some(vars) = entry.template.as_ref().and_then(|t| t.matches(uri)) {
            if found.is_some() {
                return Err(
                    Error::internal("Multiple resource routes matched the requested URI").into(),
                );
            }
            found = Some((entry, vars));
        }
    }
    found.ok_or_else(|| {
        Error::invalid_params("Resource not found")
            .with_data(json!({"uri": uri}))
            .into()
    })
}
