//! The one seam every transport uses: decode, admit, route, shape.

use http::StatusCode;
use serde_json::{Map, Value};

use super::reply::{Dispatched, Failure, Reply};
use super::{Server, list};
use crate::context::{CancelSignal, RequestInfo, TransportInfo, TransportKind};
use crate::protocol::{self, Method, RequestMeta, headers};
use crate::wire::{self, Message, Request, RequestId};
use crate::{Context, Error};

impl Server {
    /// Decodes one message (within the server's limits) and dispatches it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use snodo::{Dispatched, Server, TransportInfo};
    /// let server = Server::builder("demo", "1.0.0").build().unwrap();
    /// let out = server.dispatch(br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
    ///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#, TransportInfo::default()).await;
    /// let Dispatched::Reply(reply) = out else { panic!() };
    /// assert_eq!(reply.status, 200);
    /// # });
    /// ```
    pub async fn dispatch(&self, bytes: &[u8], transport: TransportInfo) -> Dispatched {
        match wire::decode(bytes, &self.inner.limits) {
            Ok(message) => self.handle(message, transport, CancelSignal::new()).await,
            Err(e) => Dispatched::Reply(Reply::error(
                StatusCode::BAD_REQUEST,
                e.id.as_ref(),
                &e.error,
            )),
        }
    }

    /// Dispatches an already decoded message with a transport-owned
    /// cancellation signal.
    pub async fn handle(
        &self,
        message: Message,
        transport: TransportInfo,
        cancel: CancelSignal,
    ) -> Dispatched {
        match message {
            Message::Response(_) | Message::Notification(_) => Dispatched::Nothing,
            Message::Request(request) => {
                let id = request.id.clone();
                match self.request(request, transport, cancel).await {
                    Ok(mut result) => {
                        protocol::stamp_result(&mut result, &self.inner.info);
                        Dispatched::Reply(Reply::ok(wire::encode_result(&id, &result)))
                    }
                    Err(f) => Dispatched::Reply(Reply::error(f.status, Some(&id), &f.error)),
                }
            }
        }
    }

    /// Dispatches a JSON value in process and returns the JSON response, if
    /// any (`None` for notifications).
    pub async fn dispatch_value(&self, message: Value) -> Option<Value> {
        let bytes = serde_json::to_vec(&message).ok()?;
        match self.dispatch(&bytes, TransportInfo::default()).await {
            Dispatched::Nothing => None,
            Dispatched::Reply(reply) => serde_json::from_slice(&reply.body).ok(),
        }
    }

    /// Calls a tool in process with a well-formed 2026-07-28 request and
    /// returns its result object, or the JSON-RPC error.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, Error> {
        let request = crate::testing::request(
            "tools/call",
            serde_json::json!({"name": name, "arguments": arguments}),
        );
        let response = self
            .dispatch_value(request)
            .await
            .ok_or_else(|| Error::internal("no response"))?;
        if let Some(result) = response.get("result") {
            return Ok(result.clone());
        }
        let error = response.get("error").cloned().unwrap_or(Value::Null);
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let mut err = Error::new(code, message);
        if let Some(data) = error.get("data") {
            err = err.with_data(data.clone());
        }
        Err(err)
    }

    async fn request(
        &self,
        request: Request,
        transport: TransportInfo,
        cancel: CancelSignal,
    ) -> Result<Map<String, Value>, Failure> {
        let Request { id, method, params } = request;
        if protocol::is_removed(&method) {
            return Err(Failure::not_found(Error::method_not_found(&method)));
        }
        let meta = RequestMeta::from_params(&params).map_err(Failure::bad_request)?;
        let known = Method::parse(&method);
        if transport.kind == TransportKind::Http
            && let Some(h) = &transport.headers
        {
            let name = known
                .and_then(Method::name_param)
                .and_then(|key| params.get(key))
                .and_then(Value::as_str);
            headers::check_standard(h, &method, name, &meta.protocol_version)
                .map_err(Failure::bad_request)?;
        }
        if !protocol::SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
            return Err(Failure::bad_request(Error::unsupported_version(
                &meta.protocol_version,
                protocol::SUPPORTED_VERSIONS,
            )));
        }
        let Some(known) = known else {
            return Err(Failure::not_found(Error::method_not_found(&method)));
        };
        if let Some(cap) = known.capability()
            && self.inner.capabilities.get(cap).is_none()
        {
            return Err(Failure::not_found(Error::method_not_found(&method).with_data(
                serde_json::json!({"reason": format!("Server does not support the {cap} capability")}),
            )));
        }
        let cx = self.context(&id, &method, meta, transport, cancel);
        match known {
            Method::Discover => Ok(self.discover()),
            Method::ToolsList => {
                let mut page = list::page(
                    "tools/list",
                    "tools",
                    &self.inner.tools.listed,
                    self.inner.tools.digest,
                    self.inner.page_size,
                    &params,
                )?;
                self.inner.list_cache.apply(&mut page);
                Ok(page)
            }
            Method::ToolsCall => self.call(params, cx).await,
            _ => Err(Failure::not_found(Error::method_not_found(&method))),
        }
    }

    fn context(
        &self,
        id: &RequestId,
        method: &str,
        meta: RequestMeta,
        transport: TransportInfo,
        cancel: CancelSignal,
    ) -> Context {
        Context::new(
            RequestInfo {
                protocol_version: meta.protocol_version,
                client_info: meta.client_info,
                client_capabilities: meta.client_capabilities,
                request_id: Some(id.clone()),
                method: method.to_string(),
                meta: meta.raw,
                transport,
            },
            cancel,
        )
    }

    fn discover(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(
            "supportedVersions".into(),
            protocol::SUPPORTED_VERSIONS.iter().map(|v| Value::from(*v)).collect(),
        );
        out.insert("capabilities".into(), self.inner.capabilities.clone());
        if let Some(text) = &self.inner.instructions {
            out.insert("instructions".into(), text.clone().into());
        }
        self.inner.discover_cache.apply(&mut out);
        out
    }
}
