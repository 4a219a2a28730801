//! What a client chooses from: embedding models per credential, chunkers,
//! uploadable types, the RAG middleware's parameters.

use oxiscope_rag::ApproxTokenChunker;
use oxiscope_rag::parser::{
    ExcelOptions, ExcelParser, HtmlParser, ImageParser, PdfParser, PptOptions, PptParser,
    TextParser, WordOptions, WordParser,
};
use serde_json::{Map, Value, json};

use super::{OFFLINE_CREDENTIAL_ID, SessionResult};
use crate::Engine;
use crate::api::{
    ChunkerInfo, CredentialView, DimensionPolicy, KbEmbeddingProvider,
    KbMiddlewareParametersSchemaResponse, ListChunkersResponse, ListKbEmbeddingModelsResponse,
    ListSupportedContentTypesResponse,
};
use crate::error::SessionError;

/// The cards as JSON values.
fn cards<T: serde::Serialize>(cards: &[T]) -> SessionResult<Vec<Value>> {
    cards
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| SessionError::Internal(format!("a model card: {e}")))
}

/// The offline model first, then every credential of the user that drives
/// embedding models, with its cards.
///
/// # Errors
/// The store or a credential cannot be read.
pub async fn embedding_models(
    state: &Engine,
    user: &str,
) -> SessionResult<ListKbEmbeddingModelsResponse> {
    let mut providers = Vec::new();
    let offline = oxiscope_providers::local_embedding_models()
        .map_err(|e| SessionError::Internal(e.to_string()))?;
    let mut data = Map::new();
    data.insert("type".into(), Value::from(OFFLINE_CREDENTIAL_ID));
    data.insert("name".into(), Value::from("Offline (built in)"));
    providers.push(KbEmbeddingProvider {
        credential: CredentialView {
            id: OFFLINE_CREDENTIAL_ID.to_owned(),
            updated_at: String::new(),
            created_at: String::new(),
            user_id: user.to_owned(),
            data,
            editable: false,
        },
        models: cards(&offline)?,
    });
    for record in state.storage().list_credentials(user).await? {
        let credential = state.unseal_credential(&record)?;
        let models = credential
            .credential_type()
            .list_embedding_models()
            .map_err(|e| SessionError::Internal(e.to_string()))?;
        if models.is_empty() {
            continue;
        }
        let data = match serde_json::to_value(&credential) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        providers.push(KbEmbeddingProvider {
            credential: CredentialView {
                id: record.id,
                updated_at: record.updated_at,
                created_at: record.created_at,
                user_id: record.user_id,
                data,
                editable: true,
            },
            models: cards(&models)?,
        });
    }
    Ok(ListKbEmbeddingModelsResponse {
        providers,
        policy: DimensionPolicy {
            kind: "any",
            dimension: None,
        },
    })
}

/// The one chunker and its parameters.
pub fn chunkers() -> ListChunkersResponse {
    ListChunkersResponse {
        chunkers: vec![ChunkerInfo {
            kind: ApproxTokenChunker::CHUNKER_TYPE,
            parameter_schema: json!({
                "type": "object",
                "properties": {
                    "chunk_size": {
                        "type": "integer", "minimum": 1, "default": 512,
                        "title": "Chunk Size",
                        "description": "Most approximate tokens (UTF-8 bytes / 4) in one chunk.",
                    },
                    "overlap": {
                        "type": "integer", "minimum": 0, "default": 50,
                        "title": "Overlap",
                        "description": "Approximate tokens consecutive chunks share; less than chunk_size.",
                    },
                },
            }),
        }],
    }
}

/// The media types and extensions the parsers read.
pub fn content_types(state: &Engine) -> ListSupportedContentTypesResponse {
    let media_types = state
        .knowledge()
        .parsers()
        .media_types()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let parsers: [&dyn oxiscope_rag::Parser; 7] = [
        &TextParser::new(),
        &HtmlParser::new(),
        &PdfParser::new(),
        &WordParser::new(WordOptions::default()),
        &ExcelParser::new(ExcelOptions::default()),
        &PptParser::new(PptOptions::default()),
        &ImageParser::new(),
    ];
    let mut extensions: Vec<String> = parsers
        .iter()
        .flat_map(|p| p.supported_extensions().iter().map(|e| (*e).to_owned()))
        .collect();
    extensions.sort_unstable();
    extensions.dedup();
    ListSupportedContentTypesResponse {
        media_types,
        extensions,
    }
}

/// The JSON schema of a session's `knowledge_config.parameters`.
pub fn middleware_schema() -> KbMiddlewareParametersSchemaResponse {
    KbMiddlewareParametersSchemaResponse {
        parameter_schema: json!({
            "type": "object",
            "title": "RAGMiddlewareParameters",
            "properties": {
                "mode": {
                    "type": "string", "enum": ["static", "agentic"], "default": "agentic",
                    "title": "Mode",
                    "description": "static: search with the user's input before the first reasoning step and give the hits as a hint; agentic: offer the search_knowledge tool.",
                },
                "top_k": {
                    "type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                    "title": "Top K",
                },
                "score_threshold": {
                    "anyOf": [{"type": "number"}, {"type": "null"}], "default": null,
                    "title": "Score Threshold",
                },
                "rerank_candidate_k": {
                    "anyOf": [{"type": "integer", "minimum": 1, "maximum": 50}, {"type": "null"}],
                    "default": null,
                    "title": "Rerank Candidate K",
                },
                "emit_hint_event": {
                    "type": "boolean", "default": true, "title": "Emit Hint Event",
                },
                "persist_hint": {
                    "type": "boolean", "default": false, "title": "Persist Hint",
                },
            },
        }),
    }
}
