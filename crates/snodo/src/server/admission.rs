//! Admission: the checks a request passes before anything runs, in the
//! order the Streamable HTTP rules assume: removed methods, `_meta`,
//! standard headers (HTTP only), version, method and capability, then the
//! method's own checks (for `tools/call`: the tool and its `Mcp-Param-*`
//! headers), then the OAuth scopes the request needs, where the transport's
//! authenticator asks for them to be enforced (the tool's own, read off the
//! tool found once; else the component's or the server's defaults).
//!
//! An initialize-era request is lowered to its 2026-07-28 form first (its
//! `_meta` and capabilities come from the session) and passes the same
//! [`Server::admit_known`] checks.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::Server;
use super::catalog::Catalog;
use super::dispatch::{Admitted, Route};
use super::registry::ToolEntry;
use super::reply::Failure;
use crate::Error;
use crate::context::{TransportInfo, TransportKind};
use crate::protocol::{self, Method, RequestMeta, Revision, headers};
use crate::wire::Request;

impl Server {
    pub(super) fn admit(
        &self,
        request: Request,
        transport: &TransportInfo,
    ) -> Result<Admitted, Failure> {
        let Request {
            id,
            method,
            params,
            meta,
            target,
            arguments,
            ..
        } = request;
        if protocol::is_removed(&method) {
            return Err(Failure::not_found(Error::method_not_found(&method)));
        }
        let meta = RequestMeta::from_meta(meta).map_err(Failure::bad_request)?;
        let known = Method::parse(&method);
        let http_headers = match (transport.kind, &transport.headers) {
            (TransportKind::Http, Some(h)) => Some(h),
            _ => None,
        };
        if let Some(h) = http_headers {
            let name = known.and(target.as_deref());
            headers::check_standard(h, &method, name, &meta.protocol_version)
                .map_err(Failure::bad_request)?;
        }
        if !protocol::SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str())
            || !self.serves(Revision::V2026_07_28)
        {
            return Err(Failure::bad_request(Error::unsupported_version(
                &meta.protocol_version,
                protocol::SUPPORTED_VERSIONS,
            )));
        }
        let catalog = self.catalog();
        let route = match known {
            Some(m) => Route::Known(m),
            None => match catalog.extension_methods.get(&method) {
                Some(&i) => {
                    let extension = &catalog.extensions[i];
                    let name = extension.name();
                    let declared = !extension.client_declares()
                        || meta
                            .client_capabilities
                            .get()
                            .get("extensions")
                            .and_then(|e| e.get(name))
                            .is_some();
                    if !declared {
                        return Err(Failure::bad_request(Error::missing_client_capability(
                            json!({"extensions": {name: {}}}),
                        )));
                    }
                    Route::Extension(i)
                }
                None => return Err(Failure::not_found(Error::method_not_found(&method))),
            },
        };
        let tool = match route {
            Route::Known(m) => self.admit_known(
                &catalog,
                m,
                Lowered {
                    target: target.as_deref(),
                    params: &params,
                    arguments: arguments.as_ref(),
                    client_capabilities: meta.client_capabilities.get(),
                },
                http_headers,
                transport,
            )?,
            Route::Extension(_) => {
                self.admit_scopes(transport, || self.scopes_of(&method, None, &params))?;
                None
            }
        };
        Ok(Admitted {
            id,
            method,
            route,
            params,
            target,
            arguments,
            meta,
            catalog,
            tool,
        })
    }

    /// The checks of a known method that every revision passes (an
    /// initialize-era request lowered to its 2026-07-28 form): the
    /// capability, the Tasks extension for the task methods, the retry
    /// envelope, for `tools/call` the tool (found once, here) and its
    /// `Mcp-Param-*` headers, then the scopes the request needs where the
    /// transport asks for them to be enforced.
    pub(super) fn admit_known(
        &self,
        catalog: &Catalog,
        method: Method,
        request: Lowered<'_>,
        http_headers: Option<&http::HeaderMap>,
        transport: &TransportInfo,
    ) -> Result<Option<Arc<ToolEntry>>, Failure> {
        if let Some(cap) = method.capability()
            && catalog.capabilities.get(cap).is_none()
        {
            return Err(Failure::not_found(
                Error::method_not_found(method.as_str()).with_data(
                    json!({"reason": format!("Server does not support the {cap} capability")}),
                ),
            ));
        }
        if method.is_task_method() {
            if self.task_engine().is_none() {
                return Err(Failure::not_found(Error::method_not_found(method.as_str())));
            }
            if !crate::task::declared(request.client_capabilities) {
                return Err(Failure::bad_request(
                    super::tasks::engine::missing_extension(),
                ));
            }
        }
        if let Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead = method {
            check_retry_envelope(request.params)?;
        }
        let tool = match method {
            Method::ToolsCall => {
                let entry = self.admit_call(
                    catalog,
                    request.target,
                    request.params,
                    request.arguments,
                    http_headers,
                )?;
                // A tool for the app alone does not exist for a host
                // without MCP Apps.
                if entry.app_only && !crate::apps::declared_by(request.client_capabilities) {
                    return Err(
                        Error::invalid_params(format!("Unknown tool: {}", entry.name())).into(),
                    );
                }
                Some(entry)
            }
            _ => None,
        };
        self.admit_scopes(transport, || match &tool {
            Some(entry) => self.scopes_of_tool(entry),
            None => self.scopes_of(method.as_str(), request.target, request.params),
        })?;
        Ok(tool)
    }
}

/// A request in its 2026-07-28 form, as admission reads it.
pub(super) struct Lowered<'a> {
    /// What it acts on, read out of its params at decode.
    pub(super) target: Option<&'a str>,
    /// Its params, without the target and the arguments.
    pub(super) params: &'a Map<String, Value>,
    /// A call's arguments, read out of its params at decode.
    pub(super) arguments: Option<&'a Map<String, Value>>,
    /// The capabilities the client declared (in `_meta`, or at `initialize`).
    pub(super) client_capabilities: &'a Value,
}

/// `inputResponses` must be an object (or absent/null); `requestState` a string.
fn check_retry_envelope(params: &Map<String, Value>) -> Result<(), Failure> {
    match params.get("inputResponses") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(_) => return Err(Error::invalid_params("inputResponses must be an object").into()),
    }
    match params.get("requestState") {
        None | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(Error::invalid_params("requestState must be a string").into()),
    }
}
