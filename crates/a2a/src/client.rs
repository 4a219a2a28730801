//! The A2A 1.0 JSON-RPC binding over the workspace HTTP client:
//! `SendMessage`, `SendStreamingMessage` (server-sent events), `GetTask`,
//! `CancelTask`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::stream::BoxStream;
use futures_util::{StreamExt, future};
use oxiscope_http::reqwest::header;
use oxiscope_http::{HttpClient, SseStream};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::card::Endpoint;
use crate::error::{Error, Result};
use crate::wire::{Message, Payload, Task};

/// The protocol version sent in the `A2A-Version` header.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The largest non-streamed JSON-RPC response read.
const MAX_RESPONSE_BYTES: u64 = 16 << 20;

/// A stream of payloads; an error item is the last one.
pub(crate) type PayloadStream = BoxStream<'static, Result<Payload>>;

/// A JSON-RPC client for one A2A endpoint.
#[derive(Debug, Clone)]
pub(crate) struct RpcClient {
    http: HttpClient,
    endpoint: Endpoint,
    next_id: Arc<AtomicU64>,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<RpcError>,
}

#[derive(Deserialize)]
struct RpcError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<Value>,
}

/// Reads one JSON-RPC response: its result, or its error as [`Error::Rpc`].
pub(crate) fn parse_envelope(body: &[u8]) -> Result<Value> {
    let envelope: Envelope = serde_json::from_slice(body)
        .map_err(|e| Error::Protocol(format!("not a JSON-RPC response: {e}")))?;
    match (envelope.result, envelope.error) {
        (_, Some(e)) => Err(Error::Rpc {
            code: e.code,
            message: e.message,
            data: e.data,
        }),
        (Some(result), None) => Ok(result),
        (None, None) => Err(Error::Protocol(
            "a JSON-RPC response with neither result nor error".to_owned(),
        )),
    }
}

impl RpcClient {
    pub(crate) fn new(http: HttpClient, endpoint: Endpoint) -> Self {
        Self {
            http,
            endpoint,
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    fn request(&self, method: &str, mut params: Value) -> oxiscope_http::reqwest::RequestBuilder {
        if !self.endpoint.tenant.is_empty()
            && let Some(map) = params.as_object_mut()
        {
            map.insert(
                "tenant".to_owned(),
                Value::String(self.endpoint.tenant.clone()),
            );
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.http
            .post(self.endpoint.url.clone())
            .header("A2A-Version", PROTOCOL_VERSION)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value> {
        let request = self
            .request(method, params)
            .header(header::ACCEPT, "application/json");
        let response = self.http.send(request).await?;
        let body = self
            .http
            .body(response)
            .collect_bounded(MAX_RESPONSE_BYTES)
            .await?;
        parse_envelope(&body)
    }

    /// `SendMessage`: the whole answer as one payload.
    pub(crate) async fn send(&self, message: &Message) -> Result<Payload> {
        let result = self
            .call("SendMessage", json!({ "message": message }))
            .await?;
        Payload::from_value(result)
    }

    /// `SendStreamingMessage`: the answer as server-sent events. A server
    /// that answers with plain JSON instead (an error, or one payload) is
    /// read as such.
    pub(crate) async fn stream(&self, message: &Message) -> Result<PayloadStream> {
        let request = self
            .request("SendStreamingMessage", json!({ "message": message }))
            .header(header::ACCEPT, "text/event-stream");
        let response = self.http.send(request).await?;
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"));
        if is_json {
            let body = self
                .http
                .body(response)
                .collect_bounded(MAX_RESPONSE_BYTES)
                .await?;
            let payload = parse_envelope(&body).and_then(Payload::from_value)?;
            return Ok(futures_util::stream::once(future::ready(Ok(payload))).boxed());
        }
        let events = SseStream::new(self.http.body(response));
        let payloads = events.filter_map(|event| {
            future::ready(match event {
                Err(e) => Some(Err(Error::Http(e))),
                Ok(e) if e.data.trim().is_empty() => None,
                Ok(e) => Some(parse_envelope(e.data.as_bytes()).and_then(Payload::from_value)),
            })
        });
        // Nothing after the first error: it is the stream's last item.
        let mut failed = false;
        let payloads = payloads.take_while(move |item| {
            let go = !failed;
            failed = item.is_err();
            future::ready(go)
        });
        Ok(payloads.boxed())
    }

    /// `GetTask`.
    pub(crate) async fn get_task(&self, task_id: &str) -> Result<Task> {
        let result = self.call("GetTask", json!({ "id": task_id })).await?;
        serde_json::from_value(result).map_err(|e| Error::Protocol(format!("bad task: {e}")))
    }

    /// `CancelTask`.
    pub(crate) async fn cancel_task(&self, task_id: &str) -> Result<Task> {
        let result = self.call("CancelTask", json!({ "id": task_id })).await?;
        serde_json::from_value(result).map_err(|e| Error::Protocol(format!("bad task: {e}")))
    }
}
