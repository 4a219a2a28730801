//! [`QdrantVectorStore`]: vectors in a Qdrant server, over its REST API.
//!
//! # Layout
//! A collection is a Qdrant collection named `oxiscope_<hex of the name>`
//! (Qdrant restricts collection names; hex is always accepted), with dot
//! product distance over vectors normalised at insert, as the embedded
//! store does: a score is the cosine similarity, higher is better, and a
//! zero vector scores 0. A point has a fresh UUID and the payload
//! `{document_id, chunk_index, chunk (the chunk as JSON text), metadata}`.
//!
//! # Filters
//! A metadata filter becomes `must` conditions on `metadata.<key>` with
//! Qdrant's exact `match`, which compares strings, integers and booleans.
//! A filter with another kind of value (a float, `null`, an array or an
//! object), or a key Qdrant would read as a path (`.`, `[`, `]`), is
//! refused with [`Error::InvalidParameters`](crate::Error) before any
//! request: it could not be matched exactly.
//!
//! # Verification
//! No Qdrant server is obtainable from the package registries the tests
//! may use, so the tests check this store's requests and its reading of
//! answers against a scripted server written from Qdrant's published API
//! (v1.x); the shared store contract runs against a real server only when
//! `OXISCOPE_TEST_QDRANT_URL` names one.

use std::collections::HashMap;
use std::time::Duration;

use oxiscope_http::HttpClient;
use oxiscope_http::reqwest::Method;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::matrix::normalised;
use super::{DocumentSummary, VectorRecord, VectorSearchResult, VectorStore};
use crate::error::{Error, Result};
use crate::section::{Chunk, Metadata};

/// Points per upsert request.
const UPSERT_BATCH: usize = 256;

/// Points per scroll page.
const SCROLL_PAGE: usize = 256;

/// A vector store in a Qdrant server (scores in `[-1, 1]`, higher is
/// better). See the module docs.
#[derive(Debug, Clone)]
pub struct QdrantVectorStore {
    http: HttpClient,
    base: String,
    api_key: Option<String>,
}

/// Qdrant's answer envelope.
#[derive(Debug, Deserialize)]
struct Answer<T> {
    result: T,
}

#[derive(Debug, Deserialize)]
struct CollectionInfo {
    config: CollectionConfig,
}

#[derive(Debug, Deserialize)]
struct CollectionConfig {
    params: CollectionParams,
}

#[derive(Debug, Deserialize)]
struct CollectionParams {
    vectors: Value,
}

#[derive(Debug, Deserialize)]
struct ScoredPoint {
    score: f32,
    #[serde(default)]
    payload: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
struct ScrollPage {
    points: Vec<PayloadPoint>,
    #[serde(default)]
    next_page_offset: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct PayloadPoint {
    #[serde(default)]
    payload: Map<String, Value>,
}

impl QdrantVectorStore {
    /// A store on the server at `base_url` (`http://host:6333`), sending
    /// `api_key` in the `api-key` header when given. Nothing is requested
    /// until the first call.
    ///
    /// # Errors
    /// [`Error::InvalidParameters`] for a URL that is not `http(s)://`;
    /// [`Error::Storage`] when the HTTP client cannot be built.
    pub fn new(base_url: &str, api_key: Option<String>) -> Result<Self> {
        let base = base_url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(Error::InvalidParameters(
                "a Qdrant URL starts with http:// or https://".into(),
            ));
        }
        let http = HttpClient::builder()
            .with_response_timeout(Duration::from_secs(60))
            .build()
            .map_err(storage)?;
        Ok(Self {
            http,
            base,
            api_key,
        })
    }

    fn url(&self, collection: &str, tail: &str) -> String {
        format!(
            "{}/collections/{}{tail}",
            self.base,
            qdrant_name(collection)
        )
    }

    /// Sends `body` (if any) with `method` to `url`; `Ok(None)` for 404.
    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Option<T>> {
        let mut request = self.http.request(method, url);
        if let Some(key) = &self.api_key {
            request = request.header("api-key", key);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        match self.http.send_json::<Answer<T>>(request).await {
            Ok(answer) => Ok(Some(answer.result)),
            Err(e) if e.status().is_some_and(|s| s.as_u16() == 404) => Ok(None),
            Err(oxiscope_http::Error::Status(status)) => Err(Error::Storage(format!(
                "Qdrant answered {}: {}",
                status.status,
                qdrant_message(&status.body)
            ))),
            Err(e) => Err(Error::Storage(format!("Qdrant: {e}"))),
        }
    }

    /// Like [`Self::call`], with 404 meaning collection `name` is missing.
    async fn call_in<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        name: &str,
        tail: &str,
        body: &Value,
    ) -> Result<T> {
        self.call(method, &self.url(name, tail), Some(body))
            .await?
            .ok_or_else(|| Error::CollectionNotFound {
                name: name.to_owned(),
            })
    }

    /// The size of collection `name`, `None` when it does not exist.
    async fn dimensions_of(&self, name: &str) -> Result<Option<usize>> {
        let info: Option<CollectionInfo> =
            self.call(Method::GET, &self.url(name, ""), None).await?;
        let Some(info) = info else {
            return Ok(None);
        };
        info.config
            .params
            .vectors
            .get("size")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                Error::Storage(format!(
                    "Qdrant collection for {name:?} has no single unnamed vector size"
                ))
            })
    }

    async fn require(&self, name: &str) -> Result<usize> {
        self.dimensions_of(name)
            .await?
            .ok_or_else(|| Error::CollectionNotFound {
                name: name.to_owned(),
            })
    }

    /// Every point of `collection` matching `filter`, scrolled page by page.
    async fn scroll(&self, collection: &str, filter: &Value) -> Result<Vec<Map<String, Value>>> {
        let mut out = Vec::new();
        let mut offset = Value::Null;
        loop {
            let mut body = json!({
                "filter": filter,
                "limit": SCROLL_PAGE,
                "with_payload": true,
                "with_vector": false,
            });
            if !offset.is_null() {
                body["offset"] = offset;
            }
            let page: ScrollPage = self
                .call_in(Method::POST, collection, "/points/scroll", &body)
                .await?;
            out.extend(page.points.into_iter().map(|p| p.payload));
            match page.next_page_offset {
                Some(next) if !next.is_null() => offset = next,
                _ => return Ok(out),
            }
        }
    }
}

fn storage(e: impl std::fmt::Display) -> Error {
    Error::Storage(e.to_string())
}

/// The Qdrant collection that holds collection `name`.
fn qdrant_name(name: &str) -> String {
    let mut out = String::with_capacity(9 + name.len() * 2);
    out.push_str("oxiscope_");
    for b in name.bytes() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The error text of a Qdrant error body (`{"status": {"error": "…"}}`).
fn qdrant_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/status/error")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.chars().take(300).collect())
}

/// The `must` conditions of a metadata filter (see the module docs).
fn conditions(filter: Option<&Metadata>) -> Result<Vec<Value>> {
    let mut must = Vec::new();
    for (key, value) in filter.into_iter().flatten() {
        if key.is_empty() || key.contains(['.', '[', ']']) {
            return Err(Error::InvalidParameters(format!(
                "the Qdrant store cannot filter on metadata key {key:?}"
            )));
        }
        let exact = value.is_string() || value.is_boolean() || value.is_i64() || value.is_u64();
        if !exact {
            return Err(Error::InvalidParameters(format!(
                "the Qdrant store filters metadata on strings, integers and booleans, not {value}"
            )));
        }
        must.push(json!({"key": format!("metadata.{key}"), "match": {"value": value}}));
    }
    Ok(must)
}

fn document_condition(document_id: &str) -> Value {
    json!({"key": "document_id", "match": {"value": document_id}})
}

fn payload_chunk(payload: &Map<String, Value>) -> Result<Chunk> {
    let text = payload
        .get("chunk")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::Storage("a Qdrant point has no chunk".into()))?;
    serde_json::from_str(text)
        .map_err(|e| Error::Storage(format!("a stored chunk is unreadable: {e}")))
}

fn payload_document(payload: &Map<String, Value>) -> Result<String> {
    payload
        .get("document_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::Storage("a Qdrant point has no document_id".into()))
}

impl VectorStore for QdrantVectorStore {
    async fn create_collection(&self, name: &str, dimensions: usize) -> Result<()> {
        if dimensions == 0 {
            return Err(Error::InvalidParameters(
                "dimensions must be at least 1".into(),
            ));
        }
        let check = |d: usize| {
            if d == dimensions {
                Ok(())
            } else {
                Err(Error::DimensionMismatch {
                    expected: d,
                    actual: dimensions,
                })
            }
        };
        if let Some(d) = self.dimensions_of(name).await? {
            return check(d);
        }
        let body = json!({"vectors": {"size": dimensions, "distance": "Dot"}});
        let created: Result<Option<Value>> = self
            .call(Method::PUT, &self.url(name, ""), Some(&body))
            .await;
        match created {
            Ok(_) => Ok(()),
            // Created by someone else in between: same size or a mismatch.
            Err(e) => match self.dimensions_of(name).await? {
                Some(d) => check(d),
                None => Err(e),
            },
        }
    }

    async fn delete_collection(&self, name: &str) -> Result<()> {
        let _: Option<Value> = self.call(Method::DELETE, &self.url(name, ""), None).await?;
        Ok(())
    }

    async fn has_collection(&self, name: &str) -> Result<bool> {
        Ok(self.dimensions_of(name).await?.is_some())
    }

    async fn insert(&self, collection: &str, records: Vec<VectorRecord>) -> Result<()> {
        let dimensions = self.require(collection).await?;
        // Check everything before writing anything.
        let mut points = Vec::with_capacity(records.len());
        for r in &records {
            let vector = normalised(&r.vector, dimensions)?;
            let chunk = serde_json::to_string(&r.chunk).map_err(storage)?;
            points.push(json!({
                "id": uuid::Uuid::new_v4().to_string(),
                "vector": vector,
                "payload": {
                    "document_id": r.document_id,
                    "chunk_index": r.chunk.chunk_index,
                    "chunk": chunk,
                    "metadata": r.chunk.metadata,
                },
            }));
        }
        for batch in points.chunks(UPSERT_BATCH) {
            let body = json!({ "points": batch });
            let _: Value = self
                .call_in(Method::PUT, collection, "/points?wait=true", &body)
                .await?;
        }
        Ok(())
    }

    async fn delete(&self, collection: &str, document_id: &str) -> Result<()> {
        let body = json!({"filter": {"must": [document_condition(document_id)]}});
        let _: Value = self
            .call_in(Method::POST, collection, "/points/delete?wait=true", &body)
            .await?;
        Ok(())
    }

    async fn search(
        &self,
        collection: &str,
        query: &[f32],
        top_k: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<VectorSearchResult>> {
        let must = conditions(metadata_filter)?;
        let dimensions = self.require(collection).await?;
        let vector = normalised(query, dimensions)?;
        if top_k == 0 {
            return Ok(Vec::new());
        }
        let mut body = json!({"vector": vector, "limit": top_k, "with_payload": true});
        if !must.is_empty() {
            body["filter"] = json!({ "must": must });
        }
        let hits: Vec<ScoredPoint> = self
            .call_in(Method::POST, collection, "/points/search", &body)
            .await?;
        hits.into_iter()
            .map(|hit| {
                Ok(VectorSearchResult {
                    score: hit.score,
                    document_id: payload_document(&hit.payload)?,
                    chunk: payload_chunk(&hit.payload)?,
                })
            })
            .collect()
    }

    async fn list_documents(
        &self,
        collection: &str,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<DocumentSummary>> {
        let must = conditions(metadata_filter)?;
        let points = self.scroll(collection, &json!({ "must": must })).await?;
        // Per document: the chunk with the lowest index, and the count.
        let mut docs: HashMap<String, (Chunk, usize)> = HashMap::new();
        for payload in &points {
            let id = payload_document(payload)?;
            let chunk = payload_chunk(payload)?;
            match docs.get_mut(&id) {
                Some((first, count)) => {
                    *count += 1;
                    if chunk.chunk_index < first.chunk_index {
                        *first = chunk;
                    }
                }
                None => {
                    docs.insert(id, (chunk, 1));
                }
            }
        }
        Ok(docs
            .into_iter()
            .map(|(document_id, (first, chunk_count))| DocumentSummary {
                document_id,
                source: first.source,
                chunk_count,
                metadata: first.metadata,
            })
            .collect())
    }

    async fn list_chunks(
        &self,
        collection: &str,
        document_id: &str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&Metadata>,
    ) -> Result<Vec<Chunk>> {
        let mut must = conditions(metadata_filter)?;
        must.push(document_condition(document_id));
        must.push(json!({
            "key": "chunk_index",
            "range": {"gte": offset, "lt": offset.saturating_add(limit)},
        }));
        let points = self.scroll(collection, &json!({ "must": must })).await?;
        let mut chunks = points
            .iter()
            .map(payload_chunk)
            .collect::<Result<Vec<_>>>()?;
        chunks.sort_by_key(|c| c.chunk_index);
        Ok(chunks)
    }
}

#[cfg(test)]
#[path = "qdrant_tests.rs"]
mod tests;
