//! [`FileEmbeddingCache`] and [`CachedEmbeddingModel`]: vectors kept on
//! disk so the same text is not embedded twice.

use std::collections::HashMap;
use std::io;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::cache_file;
use super::model::{
    EmbeddingModel, EmbeddingRequest, EmbeddingResponse, EmbeddingSource, EmbeddingUsage,
};
use crate::ModelError;

/// The cache key of one text: the SHA-256 (64 lower-case hex digits) of the
/// canonical request, `{"model":...,"dimensions":...,"text":...}` as
/// compact JSON (`dimensions` is `null` when not set).
///
/// ```
/// use oxiscope_model::embedding_cache_key;
///
/// let a = embedding_cache_key("text-embedding-v4", None, "hello");
/// assert_eq!(a.len(), 64);
/// assert_ne!(a, embedding_cache_key("text-embedding-v3", None, "hello"));
/// assert_ne!(a, embedding_cache_key("text-embedding-v4", std::num::NonZeroU32::new(512), "hello"));
/// ```
#[must_use]
pub fn embedding_cache_key(model: &str, dimensions: Option<NonZeroU32>, text: &str) -> String {
    #[derive(Serialize)]
    struct Canonical<'a> {
        model: &'a str,
        dimensions: Option<u32>,
        text: &'a str,
    }
    let canonical = Canonical {
        model,
        dimensions: dimensions.map(NonZeroU32::get),
        text,
    };
    // Serialising strings and integers cannot fail.
    let json = serde_json::to_vec(&canonical).unwrap_or_default();
    let digest = Sha256::digest(&json);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    hex
}

/// A cache of embedding vectors in a directory, one file per vector named
/// by its [key](embedding_cache_key), as AgentScope's `FileEmbeddingCache`.
///
/// Writes go to a temporary file renamed into place, so concurrent writers
/// (tasks or processes sharing the directory) never leave a partial entry;
/// every file carries a checksum, so a damaged or foreign file is a miss
/// (and is removed). After each store, the oldest entries (by modification
/// time) are removed until the limits hold: at most
/// [`with_max_files`](Self::with_max_files) entries taking at most
/// [`with_max_bytes`](Self::with_max_bytes). Symbolic links and other
/// files in the directory are never read, counted or removed. The file
/// work runs on tokio's blocking pool, so a tokio runtime is required.
#[derive(Debug, Clone)]
pub struct FileEmbeddingCache {
    dir: Arc<Path>,
    max_files: Option<usize>,
    max_bytes: Option<u64>,
}

impl FileEmbeddingCache {
    /// A cache in `dir` (created on the first store), without limits.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Arc::from(dir.into()),
            max_files: None,
            max_bytes: None,
        }
    }

    /// Keeps at most `max_files` entries.
    #[must_use]
    pub fn with_max_files(mut self, max_files: usize) -> Self {
        self.max_files = Some(max_files);
        self
    }

    /// Keeps at most `max_bytes` bytes of entries.
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = Some(max_bytes);
        self
    }

    /// The cache directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Path) -> io::Result<T> + Send + 'static,
    ) -> io::Result<T> {
        let dir = Arc::clone(&self.dir);
        tokio::task::spawn_blocking(move || work(&dir))
            .await
            .map_err(io::Error::other)?
    }

    /// The vectors stored under `keys`, in order; `None` for a miss (no
    /// entry, a damaged one, or a key that is not a cache key).
    pub async fn get_many(&self, keys: Vec<String>) -> Vec<Option<Vec<f32>>> {
        let count = keys.len();
        self.blocking(move |dir| Ok(keys.iter().map(|k| cache_file::read(dir, k)).collect()))
            .await
            .unwrap_or_else(|_| vec![None; count])
    }

    /// The vector stored under `key`, if any.
    pub async fn get(&self, key: &str) -> Option<Vec<f32>> {
        self.get_many(vec![key.to_owned()]).await.pop().flatten()
    }

    /// Stores each vector under its key (replacing an existing entry), then
    /// evicts the oldest entries past the limits.
    ///
    /// # Errors
    /// When the directory cannot be created or written, or a key is not a
    /// cache key ([`io::ErrorKind::InvalidInput`]); the entries stored
    /// before the failure are kept.
    pub async fn put_many(&self, entries: Vec<(String, Vec<f32>)>) -> io::Result<()> {
        let (max_files, max_bytes) = (self.max_files, self.max_bytes);
        self.blocking(move |dir| {
            std::fs::create_dir_all(dir)?;
            for (key, vector) in &entries {
                cache_file::write(dir, key, vector)?;
            }
            cache_file::evict(dir, max_files, max_bytes)
        })
        .await
    }

    /// Stores one vector; see [`put_many`](Self::put_many).
    ///
    /// # Errors
    /// As [`put_many`](Self::put_many).
    pub async fn put(&self, key: &str, vector: Vec<f32>) -> io::Result<()> {
        self.put_many(vec![(key.to_owned(), vector)]).await
    }

    /// Removes the entry of `key`; whether there was one.
    ///
    /// # Errors
    /// When the file exists but cannot be removed.
    pub async fn remove(&self, key: &str) -> io::Result<bool> {
        let key = key.to_owned();
        self.blocking(move |dir| cache_file::remove(dir, &key))
            .await
    }

    /// Removes every entry.
    ///
    /// # Errors
    /// When the directory cannot be listed or an entry removed.
    pub async fn clear(&self) -> io::Result<()> {
        self.blocking(cache_file::clear).await
    }

    /// How many entries the cache holds, and their size in bytes.
    ///
    /// # Errors
    /// When the directory cannot be listed.
    pub async fn usage(&self) -> io::Result<(usize, u64)> {
        self.blocking(cache_file::usage).await
    }
}

/// An embedding model behind a [`FileEmbeddingCache`]: only the texts
/// without a cached vector are sent to the model (each distinct text once),
/// and the answer keeps input order. Keys use the request's dimensions, or
/// the model's configured ones.
///
/// The answer's `source` is [`EmbeddingSource::Cache`] when every vector
/// came from the cache (its usage is then zero tokens). Failing to store
/// new vectors does not fail the call: the cache only saves work.
#[derive(Debug, Clone)]
pub struct CachedEmbeddingModel<M> {
    model: M,
    cache: FileEmbeddingCache,
}

impl<M> CachedEmbeddingModel<M> {
    /// `model` behind `cache`.
    pub fn new(model: M, cache: FileEmbeddingCache) -> Self {
        Self { model, cache }
    }

    /// The cache.
    pub fn cache(&self) -> &FileEmbeddingCache {
        &self.cache
    }

    /// The model behind the cache.
    pub fn model(&self) -> &M {
        &self.model
    }
}

impl<M: EmbeddingModel> EmbeddingModel for CachedEmbeddingModel<M> {
    fn model_name(&self) -> &str {
        self.model.model_name()
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        self.model.dimensions()
    }

    async fn embed(&self, request: EmbeddingRequest<'_>) -> Result<EmbeddingResponse, ModelError> {
        let started = Instant::now();
        let name = self.model.model_name();
        let dimensions = request.dimensions.or_else(|| self.model.dimensions());
        let keys: Vec<String> = request
            .texts
            .iter()
            .map(|t| embedding_cache_key(name, dimensions, t))
            .collect();
        let mut found = self.cache.get_many(keys.clone()).await;
        if let Some(size) = dimensions {
            // A vector of another size is not this request's answer.
            for hit in &mut found {
                if hit.as_ref().is_some_and(|v| v.len() != size.get() as usize) {
                    *hit = None;
                }
            }
        }
        let mut misses: Vec<String> = Vec::new();
        let mut miss_of: HashMap<&str, usize> = HashMap::new();
        for (i, hit) in found.iter().enumerate() {
            if hit.is_none() && !miss_of.contains_key(keys[i].as_str()) {
                miss_of.insert(keys[i].as_str(), misses.len());
                misses.push(request.texts[i].clone());
            }
        }
        if misses.is_empty() {
            return Ok(EmbeddingResponse {
                embeddings: found.into_iter().flatten().collect(),
                model: name.to_owned(),
                usage: EmbeddingUsage {
                    tokens: Some(0),
                    time: started.elapsed(),
                },
                source: EmbeddingSource::Cache,
            });
        }
        let inner = EmbeddingRequest {
            texts: &misses,
            dimensions: request.dimensions,
        };
        let answer = self.model.embed(inner).await?;
        if answer.embeddings.len() != misses.len() {
            return Err(ModelError::Stream {
                message: format!(
                    "the embedding model answered {} vectors for {} texts",
                    answer.embeddings.len(),
                    misses.len()
                ),
            });
        }
        let mut fresh: Vec<(String, Vec<f32>)> = Vec::with_capacity(misses.len());
        for (key, slot) in &miss_of {
            if let Some(vector) = answer.embeddings.get(*slot) {
                fresh.push(((*key).to_owned(), vector.clone()));
            }
        }
        // Best effort: a cache that cannot be written only costs work.
        let _ = self.cache.put_many(fresh).await;
        let mut embeddings = Vec::with_capacity(found.len());
        for (i, hit) in found.into_iter().enumerate() {
            let vector = match hit {
                Some(vector) => vector,
                None => miss_of
                    .get(keys[i].as_str())
                    .and_then(|slot| answer.embeddings.get(*slot))
                    .cloned()
                    .unwrap_or_default(),
            };
            embeddings.push(vector);
        }
        Ok(EmbeddingResponse {
            embeddings,
            model: answer.model,
            usage: EmbeddingUsage {
                tokens: answer.usage.tokens,
                time: started.elapsed(),
            },
            source: EmbeddingSource::Api,
        })
    }
}
