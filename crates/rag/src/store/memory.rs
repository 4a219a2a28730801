//! [`InMemoryVectorStore`]: exact cosine search over records kept in
//! memory.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{PoisonError, RwLock};

use super::{DocumentSummary, VectorRecord, VectorSearchResult, VectorStore, matches_filter};
use crate::error::{Error, Result};
use crate::section::{Chunk, Metadata};

/// A brute-force cosine-similarity store (scores in `[-1, 1]`, higher is
/// better), for tests and small corpora. Nothing is persisted.
#[derive(Debug, Default)]
pub struct InMemoryVectorStore {
    collections: RwLock<HashMap<String, Collection>>,
}

#[derive(Debug)]
struct Collection {
    dimensions: usize,
    records: Vec<VectorRecord>,
}

impl InMemoryVectorStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn read<T>(&self, name: &str, f: impl FnOnce(&Collection) -> Result<T>) -> Result<T> {
        let guard = self
            .collections
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let collection = guard.get(name).ok_or_else(|| Error::CollectionNotFound {
            name: name.to_owned(),
        })?;
        f(collection)
    }

    fn write<T>(&self, name: &str, f: impl FnOnce(&mut Collection) -> Result<T>) -> Result<T> {
        let mut guard = self
            .collections
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let collection = guard
            .get_mut(name)
            .ok_or_else(|| Error::CollectionNotFound {
                name: name.to_owned(),
            })?;
        f(collection)
    }
}

fn check_vector(vector: &[f32], dimensions: usize) -> Result<()> {
    if vector.len() != dimensions {
        return Err(Error::DimensionMismatch {
            expected: dimensions,
            actual: vector.len(),
        });
    }
    if !vector.iter().all(|x| x.is_finite()) {
        return Err(Error::InvalidVector);
    }
    Ok(())
}

/// Cosine similarity; 0 when either vector is all zeros.
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        dot += f64::from(*x) * f64::from(*y);
        na += f64::from(*x) * f64::from(*x);
        nb += f64::from(*y) * f64::from(*y);
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    #[allow(clippy::cast_possible_truncation)]
    let score = (dot / (na.sqrt() * nb.sqrt())) as f32;
    score
}

impl VectorStore for InMemoryVectorStore {
    fn create_collection(
        &self,
        name: &str,
        dimensions: usize,
    ) -> impl Future<Output = Result<()>> + Send {
        let result = (|| {
            if dimensions == 0 {
                return Err(Error::InvalidParameters(
                    "dimensions must be at least 1".into(),
                ));
            }
            let mut guard = self
                .collections
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            match guard.get(name) {
                Some(c) if c.dimensions != dimensions => Err(Error::DimensionMismatch {
                    expected: c.dimensions,
                    actual: dimensions,
                }),
                Some(_) => Ok(()),
                None => {
                    guard.insert(
                        name.to_owned(),
                        Collection {
                            dimensions,
                            records: Vec::new(),
                        },
                    );
                    Ok(())
                }
            }
        })();
        std::future::ready(result)
    }

    fn delete_collection(&self, name: &str) -> impl Future<Output = Result<()>> + Send {
        self.collections
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
        std::future::ready(Ok(()))
    }

    fn has_collection(&self, name: &str) -> impl Future<Output = Result<bool>> + Send {
        let has = self
            .collections
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(name);
        std::future::ready(Ok(has))
    }

    fn insert(
        &self,
        collection: &str,
        records: Vec<VectorRecord>,
    ) -> impl Future<Output = Result<()>> + Send {
        std::future::ready(self.write(collection, |c| {
            for r in &records {
                check_vector(&r.vector, c.dimensions)?;
            }
            c.records.extend(records);
            Ok(())
        }))
    }

    fn delete(
        &self,
        collection: &str,
        document_id: &str,
    ) -> impl Future<Output = Result<()>> + Send {
        std::future::ready(self.write(collection, |c| {
            c.records.retain(|r| r.document_id != document_id);
            Ok(())
        }))
    }

    fn search(
        &self,
        collection: &str,
        query: &[f32],
        top_k: usize,
        metadata_filter: Option<&Metadata>,
    ) -> impl Future<Output = Result<Vec<VectorSearchResult>>> + Send {
        std::future::ready(self.read(collection, |c| {
            check_vector(query, c.dimensions)?;
            let mut hits: Vec<(f32, &VectorRecord)> = c
                .records
                .iter()
                .filter(|r| matches_filter(&r.chunk.metadata, metadata_filter))
                .map(|r| (cosine(query, &r.vector), r))
                .collect();
            hits.sort_by(|a, b| b.0.total_cmp(&a.0));
            Ok(hits
                .into_iter()
                .take(top_k)
                .map(|(score, r)| VectorSearchResult {
                    score,
                    document_id: r.document_id.clone(),
                    chunk: r.chunk.clone(),
                })
                .collect())
        }))
    }

    fn list_documents(
        &self,
        collection: &str,
        metadata_filter: Option<&Metadata>,
    ) -> impl Future<Output = Result<Vec<DocumentSummary>>> + Send {
        std::future::ready(self.read(collection, |c| {
            let mut order: Vec<DocumentSummary> = Vec::new();
            let mut index: HashMap<&str, usize> = HashMap::new();
            for r in c
                .records
                .iter()
                .filter(|r| matches_filter(&r.chunk.metadata, metadata_filter))
            {
                match index.get(r.document_id.as_str()) {
                    Some(&i) => order[i].chunk_count += 1,
                    None => {
                        index.insert(&r.document_id, order.len());
                        order.push(DocumentSummary {
                            document_id: r.document_id.clone(),
                            source: r.chunk.source.clone(),
                            chunk_count: 1,
                            metadata: r.chunk.metadata.clone(),
                        });
                    }
                }
            }
            Ok(order)
        }))
    }

    fn list_chunks(
        &self,
        collection: &str,
        document_id: &str,
        offset: usize,
        limit: usize,
        metadata_filter: Option<&Metadata>,
    ) -> impl Future<Output = Result<Vec<Chunk>>> + Send {
        std::future::ready(self.read(collection, |c| {
            let end = offset.saturating_add(limit);
            let mut chunks: Vec<Chunk> = c
                .records
                .iter()
                .filter(|r| {
                    r.document_id == document_id
                        && (offset..end).contains(&r.chunk.chunk_index)
                        && matches_filter(&r.chunk.metadata, metadata_filter)
                })
                .map(|r| r.chunk.clone())
                .collect();
            chunks.sort_by_key(|c| c.chunk_index);
            Ok(chunks)
        }))
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
