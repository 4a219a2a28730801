//! `/knowledge_bases/` bodies, with AgentScope's wire names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::CredentialView;

/// `embedding_model_config`: which model embeds a knowledge base's chunks.
/// The credential id `local` names the built-in offline model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KbEmbeddingModelConfig {
    /// The credential type (`openai_credential`, ..., `local`).
    #[serde(rename = "type")]
    pub kind: String,
    /// The credential the model is called with (`local`: offline).
    pub credential_id: String,
    /// The model name.
    pub model: String,
    /// The vector size.
    pub dimensions: u32,
    /// Provider parameters.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// `chunker_config`: how documents are cut into chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChunkerConfig {
    /// The chunker (`approx_token`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its parameters.
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// `POST /knowledge_bases/`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateKnowledgeBaseRequest {
    /// The name.
    pub name: String,
    /// What it holds (shown to agents that search it).
    #[serde(default)]
    pub description: String,
    /// The embedding model.
    pub embedding_model_config: KbEmbeddingModelConfig,
    /// The chunker (`None`: the default).
    #[serde(default)]
    pub chunker_config: Option<ChunkerConfig>,
}

/// The answer to a create.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CreateKnowledgeBaseResponse {
    /// The new knowledge base's id.
    pub knowledge_base_id: String,
}

/// `PATCH /knowledge_bases/{id}`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct UpdateKnowledgeBaseRequest {
    /// A new name.
    #[serde(default)]
    pub name: Option<String>,
    /// A new description.
    #[serde(default)]
    pub description: Option<String>,
}

/// How many documents are in each indexing state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct KnowledgeBaseStatusCounts {
    /// Waiting for indexing.
    pub pending: u64,
    /// Being parsed.
    pub parsing: u64,
    /// Being chunked.
    pub chunking: u64,
    /// Being embedded and stored.
    pub indexing: u64,
    /// Searchable.
    pub ready: u64,
    /// Failed.
    pub error: u64,
}

/// A knowledge base as answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KnowledgeBaseView {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it holds.
    pub description: String,
    /// Its embedding model.
    pub embedding_model_config: KbEmbeddingModelConfig,
    /// Its chunker.
    pub chunker_config: Option<ChunkerConfig>,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// Whether the caller may change it (always, for the owner).
    pub editable: bool,
    /// How many documents it has.
    pub document_count: u64,
    /// How many chunks its ready documents have.
    pub chunk_count: u64,
    /// The name of its embedding credential.
    pub credential_name: Option<String>,
    /// Documents per indexing state.
    pub status_counts: KnowledgeBaseStatusCounts,
}

/// `GET /knowledge_bases/` parameters.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ListKnowledgeBasesQuery {
    /// Only this knowledge base.
    #[serde(default)]
    pub id: Option<String>,
    /// Case-insensitive substring of the name.
    #[serde(default)]
    pub name: Option<String>,
    /// 1-based page.
    #[serde(default = "one")]
    pub page: u32,
    /// Page size (1..=128).
    #[serde(default = "thirty")]
    pub page_size: u32,
    /// `create_time` or `update_time`.
    #[serde(default = "create_time")]
    pub orderby: String,
    /// Newest first (default).
    #[serde(default = "yes")]
    pub desc: bool,
}

/// `GET /knowledge_bases/{id}/documents` parameters.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ListDocumentsQuery {
    /// Only this document.
    #[serde(default)]
    pub id: Option<String>,
    /// Case-insensitive substring of the file name.
    #[serde(default)]
    pub keywords: Option<String>,
    /// Only documents in this state.
    #[serde(default)]
    pub status: Option<String>,
    /// 1-based page.
    #[serde(default = "one")]
    pub page: u32,
    /// Page size (1..=128).
    #[serde(default = "thirty")]
    pub page_size: u32,
    /// `create_time` or `update_time`.
    #[serde(default = "create_time")]
    pub orderby: String,
    /// Newest first (default).
    #[serde(default = "yes")]
    pub desc: bool,
}

/// A page query (`page`, `page_size`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PageQuery {
    /// 1-based page.
    #[serde(default = "one")]
    pub page: u32,
    /// Page size (1..=128).
    #[serde(default = "thirty")]
    pub page_size: u32,
}

/// `GET .../documents/status?ids=a,b`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentStatusQuery {
    /// Comma-separated document ids.
    pub ids: String,
}

/// `GET .../documents/{document_id}` parameters.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentDownloadQuery {
    /// Force an attachment.
    #[serde(default)]
    pub download: bool,
    /// A download token (instead of the caller's identity).
    #[serde(default)]
    pub token: Option<String>,
}

fn one() -> u32 {
    1
}
fn thirty() -> u32 {
    30
}
fn yes() -> bool {
    true
}
fn create_time() -> String {
    "create_time".to_owned()
}

/// A page of knowledge bases.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListKnowledgeBasesResponse {
    /// This page.
    pub knowledge_bases: Vec<KnowledgeBaseView>,
    /// How many match in all.
    pub total: usize,
    /// The page.
    pub page: u32,
    /// The page size.
    pub page_size: u32,
}

/// A document as answered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KnowledgeDocumentView {
    /// Its id.
    pub id: String,
    /// The uploaded file's name.
    pub filename: String,
    /// Its size in bytes.
    pub size: i64,
    /// Its media type.
    pub content_type: Option<String>,
    /// Its indexing state.
    pub status: String,
    /// Why indexing failed.
    pub error: Option<String>,
    /// How many chunks it has.
    pub chunk_count: i64,
    /// When it was uploaded.
    pub created_at: String,
    /// When its state last changed.
    pub updated_at: String,
}

/// A page of documents.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListKnowledgeDocumentsResponse {
    /// This page.
    pub documents: Vec<KnowledgeDocumentView>,
    /// How many match in all.
    pub total: usize,
    /// The page.
    pub page: u32,
    /// The page size.
    pub page_size: u32,
}

/// The states of the documents asked for.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListKnowledgeDocumentStatusResponse {
    /// The documents that exist, in the order asked.
    pub items: Vec<KnowledgeDocumentView>,
}

/// The answer to an upload.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UploadKnowledgeDocumentResponse {
    /// The new document's id.
    pub document_id: String,
    /// Its file name.
    pub filename: String,
    /// Its state (`pending`).
    pub status: String,
}

/// `POST .../search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchKnowledgeBaseRequest {
    /// What to look for.
    pub query: String,
    /// Most hits (1..=50, default 5).
    #[serde(default = "five")]
    pub top_k: usize,
}

fn five() -> usize {
    5
}

/// Search hits, best first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchKnowledgeBaseResponse {
    /// The hits (`score`, `document_id`, `chunk`).
    pub results: Vec<Value>,
    /// How many.
    pub total: usize,
}

/// A page of a document's chunks.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListDocumentChunksResponse {
    /// The chunks, in order.
    pub chunks: Vec<Value>,
    /// How many the document has.
    pub total: usize,
    /// The page.
    pub page: u32,
    /// The page size.
    pub page_size: u32,
}

/// A short-lived download token for one document.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentDownloadTokenResponse {
    /// The token (for `?token=`).
    pub token: String,
    /// When it expires (Unix seconds).
    pub expires_at: f64,
}

/// One credential and the embedding models it can drive.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KbEmbeddingProvider {
    /// The credential (`id` `local` for the offline model).
    pub credential: CredentialView,
    /// The embedding model cards.
    pub models: Vec<Value>,
}

/// Which vector sizes new knowledge bases may use.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DimensionPolicy {
    /// `any`, `fixed` or `locked_by_existing`.
    pub kind: &'static str,
    /// The size, when fixed.
    pub dimension: Option<u32>,
}

/// `GET /knowledge_bases/embedding_models`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListKbEmbeddingModelsResponse {
    /// The usable credentials and their models.
    pub providers: Vec<KbEmbeddingProvider>,
    /// The size policy.
    pub policy: DimensionPolicy,
}

/// One chunker and its parameters.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChunkerInfo {
    /// Its type.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The JSON schema of its parameters.
    pub parameter_schema: Value,
}

/// `GET /knowledge_bases/chunkers`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListChunkersResponse {
    /// The chunkers.
    pub chunkers: Vec<ChunkerInfo>,
}

/// `GET /knowledge_bases/supported_content_types`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListSupportedContentTypesResponse {
    /// Media types an upload may have.
    pub media_types: Vec<String>,
    /// File extensions (with the dot).
    pub extensions: Vec<String>,
}

/// `GET /knowledge_bases/middleware/parameters_schema`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KbMiddlewareParametersSchemaResponse {
    /// The JSON schema of a session's `knowledge_config.parameters`.
    pub parameter_schema: Value,
}

/// The multipart form of an upload.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UploadKnowledgeDocumentForm {
    /// The file (binary).
    pub file: String,
    /// Its media type, when the file name's extension does not tell.
    #[serde(default)]
    pub content_type: Option<String>,
}
