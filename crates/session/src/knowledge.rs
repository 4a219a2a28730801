//! Knowledge bases: the records (owner-scoped, in the [`Storage`]), the
//! uploaded files (`<data_dir>/knowledge/<kb id>/<document id>`), the
//! vectors (one embedded [`SqliteVectorStore`] at
//! `<data_dir>/knowledge/vectors.sqlite`, a collection per knowledge base)
//! and the background indexing of uploads.
//!
//! An upload is stored, recorded as `pending` and indexed by a background
//! task (parse → chunk → embed and store), at most
//! [`KnowledgeSettings::indexing_concurrency`] at a time; the client polls
//! the document's status. Documents a stopped server left unfinished are
//! indexed again by [`resume`] when the next one starts.
//!
//! A tenant is bounded (see [`KnowledgeSettings`]): knowledge bases,
//! documents and stored bytes per user (403, or 413 for an upload larger
//! than what is left), form parts per upload, at most half of the
//! indexing slots for one user's documents, and a time limit per document
//! once it holds a slot ([`KnowledgeSettings::document_time_limit`]).
//!
//! The default vector store is a file in the data directory: replicas that
//! share one database must then also share the data directory (or run
//! knowledge-base routes on one replica only); otherwise each replica sees
//! only the vectors it indexed. With `serve --vector-store-url
//! postgres://…` the vectors live in PostgreSQL (pgvector) and every
//! replica sees them all.
//!
//! [`Storage`]: oxiscope_storage::Storage

mod attach;
mod bases;
mod catalogue;
mod documents;
mod index;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oxiscope_model::DynEmbeddingModel;
use oxiscope_rag::{
    DynVectorStore, KnowledgeBase, ParseLimits, ParserRegistry, PgVectorStore, QdrantVectorStore,
    SqliteVectorStore, VectorStore,
};
use oxiscope_storage::KnowledgeBaseRecord;
use tokio::sync::{OnceCell, Semaphore};

pub use attach::{SessionKnowledgeConfig, session_middleware};
pub use bases::{create_base, delete_base, find_base, list_bases, search, update_base};
pub use catalogue::{chunkers, content_types, embedding_models, middleware_schema};
pub use documents::{
    delete_document, document_chunks, document_statuses, find_document, list_documents,
    upload_document,
};
pub use index::resume;

use crate::Engine;
use crate::api::KbEmbeddingModelConfig;
use crate::error::{SessionError, SessionResult};

/// The credential id that names the built-in offline embedding model.
pub const OFFLINE_CREDENTIAL_ID: &str = "local";

/// How knowledge bases are served.
#[derive(Debug, Clone)]
pub struct KnowledgeSettings {
    /// The largest document upload, in bytes (default 32 MiB).
    pub max_upload_bytes: usize,
    /// Documents indexed at once (default 2); one user's documents take at
    /// most half of these slots (at least one), so a user who uploads many
    /// does not hold up everyone else's.
    pub indexing_concurrency: usize,
    /// How long one document's indexing (parse, chunk, embed, store) may
    /// hold its slot (default 30 minutes): past it the document is marked
    /// `error`, saying so, its chunks are removed and the slot goes to the
    /// next document. A hung embedding endpoint holds a slot no longer.
    pub document_time_limit: Duration,
    /// The embedding model of the `local` credential; `None`: the offline
    /// all-MiniLM-L6-v2, from `<data_dir>/models` (fetched on first use
    /// when missing).
    pub offline_model: Option<Arc<dyn DynEmbeddingModel>>,
    /// What a parser may read from one file (archive inflation, sections,
    /// XML depth): the defaults of [`ParseLimits`].
    pub parse_limits: ParseLimits,
    /// The most knowledge bases one user may have (default 100).
    pub max_bases_per_user: usize,
    /// The most documents one user may keep, over all their knowledge
    /// bases (default 1,000).
    pub max_documents_per_user: usize,
    /// The most bytes of uploaded files one user may keep, over all their
    /// knowledge bases (default 1 GiB).
    pub max_bytes_per_user: u64,
    /// Where vectors are kept; `None` (the default): the embedded store,
    /// `<data_dir>/knowledge/vectors.sqlite`. Replicas sharing a database
    /// share vectors through a server store (`PgVectorStore`).
    pub vector_store: Option<Arc<dyn DynVectorStore>>,
}

impl Default for KnowledgeSettings {
    fn default() -> Self {
        Self {
            max_upload_bytes: 32 << 20,
            indexing_concurrency: 2,
            document_time_limit: Duration::from_secs(30 * 60),
            offline_model: None,
            parse_limits: ParseLimits::default(),
            max_bases_per_user: 100,
            max_documents_per_user: 1000,
            max_bytes_per_user: 1 << 30,
            vector_store: None,
        }
    }
}

impl KnowledgeSettings {
    /// Keeps vectors in `store` instead of the embedded default.
    #[must_use]
    pub fn with_vector_store(mut self, store: Arc<dyn DynVectorStore>) -> Self {
        self.vector_store = Some(store);
        self
    }

    /// Another offline embedding model (tests use a hashing embedder).
    #[must_use]
    pub fn with_offline_model(mut self, model: Arc<dyn DynEmbeddingModel>) -> Self {
        self.offline_model = Some(model);
        self
    }

    /// Other parser limits.
    #[must_use]
    pub fn with_parse_limits(mut self, limits: ParseLimits) -> Self {
        self.parse_limits = limits;
        self
    }

    /// Another time limit per document (see
    /// [`KnowledgeSettings::document_time_limit`]).
    #[must_use]
    pub fn with_document_time_limit(mut self, limit: Duration) -> Self {
        self.document_time_limit = limit;
        self
    }

    /// Another upload limit.
    #[must_use]
    pub fn with_max_upload_bytes(mut self, bytes: usize) -> Self {
        self.max_upload_bytes = bytes;
        self
    }

    /// Other per-user quotas: knowledge bases, documents, and bytes of
    /// uploaded files.
    #[must_use]
    pub fn with_quotas(mut self, bases: usize, documents: usize, bytes: u64) -> Self {
        self.max_bases_per_user = bases;
        self.max_documents_per_user = documents;
        self.max_bytes_per_user = bytes;
        self
    }
}

/// What the knowledge-base routes share in a process.
#[derive(Debug)]
pub struct Runtime {
    store: OnceCell<Arc<dyn DynVectorStore>>,
    slots: Arc<Semaphore>,
    /// Per user: the slots one user's documents may take.
    user_slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    per_user: usize,
    /// How long one document may hold its slot.
    time_limit: Duration,
    offline: OnceCell<Arc<dyn DynEmbeddingModel>>,
    parsers: ParserRegistry,
    /// Documents being indexed by this process (so a resume does not
    /// start a second task for one).
    running: Mutex<HashSet<String>>,
    /// Per user: one upload at a time in this process, so concurrent
    /// uploads cannot each spend what is left of one quota.
    uploads: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Runtime {
    /// The runtime for `settings`.
    #[must_use]
    pub fn new(settings: &KnowledgeSettings) -> Self {
        let offline = OnceCell::new();
        if let Some(model) = &settings.offline_model {
            let _ = offline.set(Arc::clone(model));
        }
        Self {
            store: OnceCell::new(),
            slots: Arc::new(Semaphore::new(settings.indexing_concurrency.max(1))),
            user_slots: Mutex::new(HashMap::new()),
            per_user: (settings.indexing_concurrency / 2).max(1),
            time_limit: settings.document_time_limit,
            offline,
            parsers: ParserRegistry::with_limits(settings.parse_limits),
            running: Mutex::new(HashSet::new()),
            uploads: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn parsers(&self) -> &ParserRegistry {
        &self.parsers
    }

    /// Marks `id` as being indexed; `false` when it already was.
    fn claim(&self, id: &str) -> bool {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.insert(id.to_owned())
    }

    fn release(&self, id: &str) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        running.remove(id);
    }

    /// The semaphore of `user`'s indexing slots.
    fn user_slots(&self, user: &str) -> Arc<Semaphore> {
        keyed(&self.user_slots, user, self.per_user)
    }

    /// Forgets `user`'s semaphore once no task holds or waits for it.
    fn forget_user_slots(&self, user: &str) {
        forget_keyed(&self.user_slots, user);
    }

    /// The gate that lets one upload of `user` at a time through.
    fn upload_gate(&self, user: &str) -> Arc<Semaphore> {
        keyed(&self.uploads, user, 1)
    }

    /// Forgets `user`'s upload gate once no upload holds or waits for it.
    fn forget_upload_gate(&self, user: &str) {
        forget_keyed(&self.uploads, user);
    }
}

/// `user`'s semaphore in `map`, made with `permits` when missing.
fn keyed(
    map: &Mutex<HashMap<String, Arc<Semaphore>>>,
    user: &str,
    permits: usize,
) -> Arc<Semaphore> {
    let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(
        map.entry(user.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(permits))),
    )
}

/// Drops `user`'s semaphore from `map` once nobody else holds it.
fn forget_keyed(map: &Mutex<HashMap<String, Arc<Semaphore>>>, user: &str) {
    let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
    if map.get(user).is_some_and(|s| Arc::strong_count(s) == 1) {
        map.remove(user);
    }
}

/// `<data_dir>/knowledge`.
fn root(state: &Engine) -> PathBuf {
    state.data_dir().join("knowledge")
}

/// Where a document's file is kept. Both ids are the server's own
/// (checked against the records before any path is built), so they name
/// no other directory.
pub fn document_path(state: &Engine, kb_id: &str, doc_id: &str) -> SessionResult<PathBuf> {
    let safe = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
    if !safe(kb_id) || !safe(doc_id) {
        return Err(SessionError::NotFound("Document not found".to_owned()));
    }
    Ok(root(state).join(kb_id).join(doc_id))
}

/// Connects to the vector store `url` names, for
/// [`KnowledgeSettings::with_vector_store`]: `postgres://…` or
/// `postgresql://…` is PostgreSQL with the pgvector extension; `http://…`
/// or `https://…` is a Qdrant server (REST), sent `qdrant_api_key` when
/// given.
///
/// # Errors
/// [`oxiscope_rag::Error::InvalidParameters`] for another scheme (the
/// message names the scheme only: a URL may carry a password);
/// [`oxiscope_rag::Error::Storage`] when the store cannot be reached or
/// prepared.
pub async fn open_vector_store(
    url: &str,
    qdrant_api_key: Option<String>,
) -> Result<Arc<dyn DynVectorStore>, oxiscope_rag::Error> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    match scheme {
        "postgres" | "postgresql" => Ok(Arc::new(PgVectorStore::connect(url).await?)),
        "http" | "https" => {
            let store = QdrantVectorStore::new(url, qdrant_api_key)?;
            // Reach it now, so a wrong URL or key fails at start.
            store.has_collection("oxiscope-probe").await?;
            Ok(Arc::new(store))
        }
        _ => Err(oxiscope_rag::Error::InvalidParameters(format!(
            "a vector store URL starts with postgres://, postgresql://, http:// or https://, \
             not {scheme:?}"
        ))),
    }
}

/// The shared vector store: the configured one, or the embedded one
/// opened on first use.
async fn vector_store(state: &Engine) -> SessionResult<Arc<dyn DynVectorStore>> {
    if let Some(store) = &state.config().knowledge.vector_store {
        return Ok(Arc::clone(store));
    }
    let runtime = state.knowledge();
    let store = runtime
        .store
        .get_or_try_init(|| async {
            SqliteVectorStore::open(root(state))
                .await
                .map(|s| Arc::new(s) as Arc<dyn DynVectorStore>)
                .map_err(|e| SessionError::Internal(format!("the vector store: {e}")))
        })
        .await?;
    Ok(Arc::clone(store))
}

/// The collection of a knowledge base.
fn collection(kb_id: &str) -> String {
    format!("kb_{kb_id}")
}

/// The embedding model `config` names, for the user's credential.
///
/// # Errors
/// 404 for a missing credential, 400 for a model that cannot be built.
async fn embedding_model(
    state: &Engine,
    user: &str,
    config: &KbEmbeddingModelConfig,
) -> SessionResult<Arc<dyn DynEmbeddingModel>> {
    if config.credential_id == OFFLINE_CREDENTIAL_ID {
        let model = state
            .knowledge()
            .offline
            .get_or_init(|| async {
                let locator = oxiscope_providers::local_embedding::ModelLocator::new()
                    .with_data_dir(state.data_dir());
                oxiscope_providers::local_embedding_model(locator)
            })
            .await;
        return Ok(Arc::clone(model));
    }
    let record = state
        .storage()
        .get_credential(user, &config.credential_id)
        .await?
        .ok_or_else(|| {
            SessionError::NotFound(format!("Credential {} not found", config.credential_id))
        })?;
    let credential = state.unseal_credential(&record)?;
    let endpoints = if state.config().policy.private_model_endpoints {
        oxiscope_providers::Endpoints::Any
    } else {
        oxiscope_providers::Endpoints::PublicOnly
    };
    let mut model_config = oxiscope_providers::EmbeddingModelConfig::new(config.model.clone());
    model_config.dimensions = std::num::NonZeroU32::new(config.dimensions);
    model_config.parameters.clone_from(&config.parameters);
    oxiscope_providers::embedding_model_with(&credential, &model_config, endpoints)
        .map_err(|e| SessionError::Invalid(format!("Cannot build the embedding model: {e}")))
}

/// The settings stored with a knowledge base.
fn settings_of(kb: &KnowledgeBaseRecord) -> SessionResult<bases::Settings> {
    serde_json::from_value(kb.data.clone())
        .map_err(|e| SessionError::Internal(format!("knowledge base {}: {e}", kb.id)))
}

/// A search handle on a stored knowledge base.
///
/// # Errors
/// As `embedding_model`; 500 when the vector store cannot be opened.
pub async fn handle(state: &Engine, kb: &KnowledgeBaseRecord) -> SessionResult<KnowledgeBase> {
    let settings = settings_of(kb)?;
    let model = embedding_model(state, &kb.user_id, &settings.embedding_model_config).await?;
    let store = vector_store(state).await?;
    let description = if settings.description.trim().is_empty() {
        format!("The knowledge base \"{}\".", kb.name)
    } else {
        settings.description.clone()
    };
    Ok(KnowledgeBase::new(
        kb.name.clone(),
        description,
        model,
        store,
        collection(&kb.id),
    ))
}
