//! Knowledge bases: create, list, rename, delete, search.

use oxiscope_model::DynEmbeddingModel;
use oxiscope_rag::{ApproxTokenChunker, ApproxTokenParameters, VectorStore as _};
use oxiscope_storage::{KnowledgeBaseRecord, KnowledgeDocumentRecord, new_id, now};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{OFFLINE_CREDENTIAL_ID, SessionError, SessionResult, embedding_model, settings_of};
use crate::Engine;
use crate::api::{
    ChunkerConfig, CreateKnowledgeBaseRequest, KbEmbeddingModelConfig, KnowledgeBaseStatusCounts,
    KnowledgeBaseView, ListKnowledgeBasesQuery, ListKnowledgeBasesResponse,
    SearchKnowledgeBaseRequest, SearchKnowledgeBaseResponse, UpdateKnowledgeBaseRequest,
};

/// What a knowledge base record's `data` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Settings {
    #[serde(default)]
    pub(super) description: String,
    pub(super) embedding_model_config: KbEmbeddingModelConfig,
    #[serde(default)]
    pub(super) chunker_config: Option<ChunkerConfig>,
}

/// The chunker `config` describes (the default without one).
///
/// # Errors
/// 422 for an unknown chunker or parameters out of range.
pub(super) fn chunker(config: Option<&ChunkerConfig>) -> SessionResult<ApproxTokenChunker> {
    let Some(config) = config else {
        return Ok(ApproxTokenChunker::default());
    };
    let invalid =
        |msg: String| SessionError::invalid(&["body", "chunker_config"], msg, "value_error");
    if config.kind != ApproxTokenChunker::CHUNKER_TYPE {
        return Err(invalid(format!("Unknown chunker type {:?}", config.kind)));
    }
    let parameters: ApproxTokenParameters =
        serde_json::from_value(Value::Object(config.parameters.clone()))
            .map_err(|e| invalid(e.to_string()))?;
    ApproxTokenChunker::new(parameters).map_err(|e| invalid(e.to_string()))
}

/// The longest name, in characters.
const MAX_NAME_CHARS: usize = 256;
/// The longest description, in characters (it becomes part of an agent's
/// prompt).
const MAX_DESCRIPTION_CHARS: usize = 8192;

/// 422 for a name or description longer than allowed.
fn check_lengths(name: Option<&str>, description: Option<&str>) -> SessionResult<()> {
    let long = |field: &str, most: usize| {
        SessionError::invalid(
            &["body", field],
            format!("String should have at most {most} characters"),
            "string_too_long",
        )
    };
    if name.is_some_and(|n| n.chars().count() > MAX_NAME_CHARS) {
        return Err(long("name", MAX_NAME_CHARS));
    }
    if description.is_some_and(|d| d.chars().count() > MAX_DESCRIPTION_CHARS) {
        return Err(long("description", MAX_DESCRIPTION_CHARS));
    }
    Ok(())
}

/// One of the user's knowledge bases.
///
/// # Errors
/// 404 when the user has none with that id.
pub async fn find_base(state: &Engine, user: &str, id: &str) -> SessionResult<KnowledgeBaseRecord> {
    state
        .storage()
        .get_knowledge_base(user, id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Knowledge base {id} not found")))
}

/// Creates a knowledge base; returns its id.
///
/// # Errors
/// 422 for an empty name, a bad chunker or a size the model cannot give;
/// 404 for a missing credential; 403 when the user has as many knowledge
/// bases as allowed.
pub async fn create_base(
    state: &Engine,
    user: &str,
    request: CreateKnowledgeBaseRequest,
) -> SessionResult<String> {
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(SessionError::invalid(
            &["body", "name"],
            "The name is empty",
            "value_error",
        ));
    }
    check_lengths(Some(&name), Some(&request.description))?;
    chunker(request.chunker_config.as_ref())?;
    let most = state.config().knowledge.max_bases_per_user;
    if state.storage().list_knowledge_bases(user).await?.len() >= most {
        return Err(SessionError::Forbidden(format!(
            "You have {most} knowledge bases, the most allowed; delete one first."
        )));
    }
    let config = request.embedding_model_config;
    if config.dimensions == 0 {
        return Err(SessionError::invalid(
            &["body", "embedding_model_config", "dimensions"],
            "Input should be greater than 0",
            "greater_than",
        ));
    }
    let model = embedding_model(state, user, &config).await?;
    if let Some(d) = DynEmbeddingModel::dimensions(&*model)
        && d.get() != config.dimensions
    {
        return Err(SessionError::invalid(
            &["body", "embedding_model_config", "dimensions"],
            format!("The model gives vectors of {d} dimensions"),
            "value_error",
        ));
    }
    let settings = Settings {
        description: request.description,
        embedding_model_config: config,
        chunker_config: request.chunker_config,
    };
    let at = now();
    let record = KnowledgeBaseRecord {
        id: new_id(),
        user_id: user.to_owned(),
        name,
        data: serde_json::to_value(&settings)
            .map_err(|e| SessionError::Internal(format!("knowledge base settings: {e}")))?,
        created_at: at.clone(),
        updated_at: at,
    };
    state.storage().create_knowledge_base(&record).await?;
    Ok(record.id)
}

/// The name of the credential a knowledge base embeds with.
async fn credential_name(state: &Engine, user: &str, credential_id: &str) -> Option<String> {
    if credential_id == OFFLINE_CREDENTIAL_ID {
        return Some("Offline (built in)".to_owned());
    }
    let record = state
        .storage()
        .get_credential(user, credential_id)
        .await
        .ok()
        .flatten()?;
    let credential = state.unseal_credential(&record).ok()?;
    serde_json::to_value(&credential)
        .ok()?
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// How the documents of a knowledge base stand.
fn counts(docs: &[KnowledgeDocumentRecord]) -> (KnowledgeBaseStatusCounts, u64) {
    let mut counts = KnowledgeBaseStatusCounts::default();
    let mut chunks = 0;
    for d in docs {
        match d.status.as_str() {
            "pending" => counts.pending += 1,
            "parsing" => counts.parsing += 1,
            "chunking" => counts.chunking += 1,
            "indexing" => counts.indexing += 1,
            "ready" => {
                counts.ready += 1;
                chunks += u64::try_from(d.chunk_count).unwrap_or(0);
            }
            _ => counts.error += 1,
        }
    }
    (counts, chunks)
}

/// A knowledge base as answered.
pub(crate) async fn view(
    state: &Engine,
    kb: KnowledgeBaseRecord,
) -> SessionResult<KnowledgeBaseView> {
    let settings = settings_of(&kb)?;
    let docs = state
        .storage()
        .list_knowledge_documents(&kb.user_id, &kb.id)
        .await?;
    let (status_counts, chunk_count) = counts(&docs);
    let credential_name = credential_name(
        state,
        &kb.user_id,
        &settings.embedding_model_config.credential_id,
    )
    .await;
    Ok(KnowledgeBaseView {
        id: kb.id,
        name: kb.name,
        description: settings.description,
        embedding_model_config: settings.embedding_model_config,
        chunker_config: settings.chunker_config,
        created_at: kb.created_at,
        updated_at: kb.updated_at,
        editable: true,
        document_count: docs.len() as u64,
        chunk_count,
        credential_name,
        status_counts,
    })
}

/// Checks `page` / `page_size` / `orderby` as AgentScope's query models do.
pub(super) fn check_page(page: u32, page_size: u32, orderby: Option<&str>) -> SessionResult<()> {
    if page < 1 {
        return Err(SessionError::invalid(
            &["query", "page"],
            "Input should be greater than or equal to 1",
            "greater_than_equal",
        ));
    }
    if !(1..=128).contains(&page_size) {
        return Err(SessionError::invalid(
            &["query", "page_size"],
            "Input should be between 1 and 128",
            "less_than_equal",
        ));
    }
    if let Some(o) = orderby
        && o != "create_time"
        && o != "update_time"
    {
        return Err(SessionError::invalid(
            &["query", "orderby"],
            "String should match pattern '^(create_time|update_time)$'",
            "string_pattern_mismatch",
        ));
    }
    Ok(())
}

/// Sorts `items` by the chosen time and returns one page, with the total.
pub(super) fn paginate<T>(
    mut items: Vec<T>,
    times: impl Fn(&T) -> (&str, &str),
    orderby: &str,
    desc: bool,
    page: u32,
    page_size: u32,
) -> (Vec<T>, usize) {
    items.sort_by(|a, b| {
        let (ca, ua) = times(a);
        let (cb, ub) = times(b);
        let ord = if orderby == "update_time" {
            ua.cmp(ub)
        } else {
            ca.cmp(cb)
        };
        if desc { ord.reverse() } else { ord }
    });
    let total = items.len();
    let skip = (page as usize - 1).saturating_mul(page_size as usize);
    let page = items
        .into_iter()
        .skip(skip)
        .take(page_size as usize)
        .collect();
    (page, total)
}

/// The user's knowledge bases, filtered and paged.
///
/// # Errors
/// 422 for paging out of range.
pub async fn list_bases(
    state: &Engine,
    user: &str,
    q: ListKnowledgeBasesQuery,
) -> SessionResult<ListKnowledgeBasesResponse> {
    check_page(q.page, q.page_size, Some(&q.orderby))?;
    let needle = q.name.as_deref().map(str::to_lowercase);
    let all: Vec<KnowledgeBaseRecord> = state
        .storage()
        .list_knowledge_bases(user)
        .await?
        .into_iter()
        .filter(|kb| q.id.as_ref().is_none_or(|id| &kb.id == id))
        .filter(|kb| {
            needle
                .as_ref()
                .is_none_or(|n| kb.name.to_lowercase().contains(n))
        })
        .collect();
    let (page, total) = paginate(
        all,
        |kb| (kb.created_at.as_str(), kb.updated_at.as_str()),
        &q.orderby,
        q.desc,
        q.page,
        q.page_size,
    );
    let mut knowledge_bases = Vec::with_capacity(page.len());
    for kb in page {
        knowledge_bases.push(view(state, kb).await?);
    }
    Ok(ListKnowledgeBasesResponse {
        knowledge_bases,
        total,
        page: q.page,
        page_size: q.page_size,
    })
}

/// Renames a knowledge base.
///
/// # Errors
/// 404 when the user has none with that id; 422 for an empty name.
pub async fn update_base(
    state: &Engine,
    user: &str,
    id: &str,
    request: UpdateKnowledgeBaseRequest,
) -> SessionResult<KnowledgeBaseView> {
    check_lengths(request.name.as_deref(), request.description.as_deref())?;
    let mut kb = find_base(state, user, id).await?;
    if request.name.is_none() && request.description.is_none() {
        return view(state, kb).await;
    }
    if let Some(name) = request.name {
        let name = name.trim().to_owned();
        if name.is_empty() {
            return Err(SessionError::invalid(
                &["body", "name"],
                "The name is empty",
                "value_error",
            ));
        }
        kb.name = name;
    }
    if let Some(description) = request.description {
        let mut settings = settings_of(&kb)?;
        settings.description = description;
        kb.data = serde_json::to_value(&settings)
            .map_err(|e| SessionError::Internal(format!("knowledge base settings: {e}")))?;
    }
    kb.updated_at = now();
    state.storage().update_knowledge_base(&kb).await?;
    view(state, kb).await
}

/// Deletes a knowledge base: its records, its vectors and its files.
///
/// # Errors
/// 404 when the user has none with that id.
pub async fn delete_base(state: &Engine, user: &str, id: &str) -> SessionResult<()> {
    let kb = find_base(state, user, id).await?;
    state.storage().delete_knowledge_base(user, &kb.id).await?;
    let store = super::vector_store(state).await?;
    store
        .delete_collection(&super::collection(&kb.id))
        .await
        .map_err(|e| SessionError::Internal(format!("the vector store: {e}")))?;
    let dir = super::root(state).join(&kb.id);
    if let Err(e) = tokio::fs::remove_dir_all(&dir).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), "cannot remove a knowledge base's files: {e}");
    }
    Ok(())
}

/// Searches a knowledge base.
///
/// # Errors
/// 404 for another user's knowledge base, 422 for `top_k` out of range,
/// 502 when the embedding model fails.
pub async fn search(
    state: &Engine,
    user: &str,
    id: &str,
    request: SearchKnowledgeBaseRequest,
) -> SessionResult<SearchKnowledgeBaseResponse> {
    if !(1..=50).contains(&request.top_k) {
        return Err(SessionError::invalid(
            &["body", "top_k"],
            "Input should be between 1 and 50",
            "less_than_equal",
        ));
    }
    let kb = find_base(state, user, id).await?;
    let handle = super::handle(state, &kb).await?;
    let hits = handle
        .search(&[request.query], request.top_k, None)
        .await
        .map_err(|e| SessionError::Invalid(format!("The search failed: {e}")))?;
    let results = hits
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SessionError::Internal(format!("a search hit: {e}")))?;
    Ok(SearchKnowledgeBaseResponse {
        total: results.len(),
        results,
    })
}
