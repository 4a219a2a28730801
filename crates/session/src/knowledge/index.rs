//! Background indexing: one task per document, a bounded number at a
//! time, each within a time limit once it holds its slot; a restarted
//! server picks up what the last one left unfinished.

use oxiscope_rag::VectorStore as _;
use oxiscope_storage::KnowledgeDocumentRecord;
use serde_json::{Map, Value};

use super::bases::chunker;
use super::{SessionError, SessionResult, document_path, find_base, handle, settings_of};
use crate::Engine;

/// Indexes `doc` in the background (unless this process already is).
pub(super) fn spawn(state: Engine, doc: KnowledgeDocumentRecord) {
    if !state.knowledge().claim(&doc.id) {
        return;
    }
    tokio::spawn(async move {
        let id = doc.id.clone();
        run(&state, doc).await;
        state.knowledge().release(&id);
    });
}

/// Queues every document a previous process left pending or half done;
/// returns how many.
///
/// # Errors
/// The store cannot be read.
pub async fn resume(state: &Engine) -> Result<usize, oxiscope_storage::Error> {
    let docs = state.storage().unfinished_knowledge_documents().await?;
    let count = docs.len();
    for doc in docs {
        tracing::info!(document = %doc.id, status = %doc.status, "indexing a document again");
        spawn(state.clone(), doc);
    }
    Ok(count)
}

/// Indexes one document, recording how far it got.
async fn run(state: &Engine, doc: KnowledgeDocumentRecord) {
    let runtime = state.knowledge();
    // The user's own slot first, then a shared one: the shared queue holds
    // at most a few documents of any one user.
    let mine = runtime.user_slots(&doc.user_id);
    let Ok(own) = mine.acquire().await else {
        return;
    };
    let slots = std::sync::Arc::clone(&runtime.slots);
    let Ok(permit) = slots.acquire_owned().await else {
        return;
    };
    work(state, &doc).await;
    drop(permit);
    drop(own);
    drop(mine);
    runtime.forget_user_slots(&doc.user_id);
}

/// Indexes one document holding its slots, within the time limit.
async fn work(state: &Engine, doc: &KnowledgeDocumentRecord) {
    let limit = state.knowledge().time_limit;
    match tokio::time::timeout(limit, index(state, doc)).await {
        Ok(Ok(Some(chunks))) => {
            let done = set(state, &doc.id, "ready", None, chunks).await;
            if !done {
                // Deleted while it was being indexed: leave nothing behind.
                remove_chunks(state, doc).await;
                drop_orphan_collection(state, doc).await;
            }
        }
        Ok(Ok(None)) => {}
        Ok(Err(e)) => {
            tracing::warn!(document = %doc.id, "indexing failed: {e}");
            set(state, &doc.id, "error", Some(&shown(&e)), 0).await;
        }
        Err(_) => {
            tracing::warn!(document = %doc.id, "indexing ran past its time limit of {limit:?}");
            // What an insert cut off midway stored is not searchable.
            remove_chunks(state, doc).await;
            let message = format!(
                "Indexing did not finish within the server's time limit of {} per document; \
                 the document was not indexed. A slow or unresponsive embedding model is the \
                 usual cause.",
                shown_limit(limit)
            );
            if !set(state, &doc.id, "error", Some(&message), 0).await {
                drop_orphan_collection(state, doc).await;
            }
        }
    }
}

/// `limit` in the largest whole unit (`30 min`, `90 s`).
fn shown_limit(limit: std::time::Duration) -> String {
    let secs = limit.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else if secs > 0 {
        format!("{secs} s")
    } else {
        format!("{} ms", limit.as_millis())
    }
}

/// Removes the document's chunks, logging a failure.
async fn remove_chunks(state: &Engine, doc: &KnowledgeDocumentRecord) {
    if let Err(e) = super::documents::remove_chunks(state, &doc.knowledge_base_id, &doc.id).await {
        tracing::warn!(document = %doc.id, "cannot remove a document's chunks: {e}");
    }
}

/// Drops the collection of a knowledge base deleted while one of its
/// documents was being indexed (the insert made it again).
async fn drop_orphan_collection(state: &Engine, doc: &KnowledgeDocumentRecord) {
    if find_base(state, &doc.user_id, &doc.knowledge_base_id)
        .await
        .is_ok()
    {
        return;
    }
    let dropped = match super::vector_store(state).await {
        Ok(store) => store
            .delete_collection(&super::collection(&doc.knowledge_base_id))
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = dropped {
        tracing::warn!(knowledge_base = %doc.knowledge_base_id, "cannot drop a deleted knowledge base's vectors: {e}");
    }
}

/// The failure as the document's owner reads it: the server's own
/// failures (paths, database errors) stay in the log.
fn shown(e: &SessionError) -> String {
    match e {
        crate::error::SessionError::Internal(_) => {
            "The server failed to index the document.".to_owned()
        }
        other => other.to_string(),
    }
}

/// Sets the status; `false` when the document is gone.
async fn set(state: &Engine, id: &str, status: &str, error: Option<&str>, chunks: i64) -> bool {
    match state
        .storage()
        .set_knowledge_document_status(id, status, error, chunks)
        .await
    {
        Ok(found) => found,
        Err(e) => {
            tracing::error!(document = %id, "cannot record a document's status: {e}");
            true
        }
    }
}

/// Parses, chunks, embeds and stores the document; its chunk count, or
/// `None` when it (or its knowledge base) was deleted meanwhile.
async fn index(state: &Engine, doc: &KnowledgeDocumentRecord) -> SessionResult<Option<i64>> {
    let Ok(kb) = find_base(state, &doc.user_id, &doc.knowledge_base_id).await else {
        return Ok(None);
    };
    if !set(state, &doc.id, "parsing", None, 0).await {
        return Ok(None);
    }
    let path = document_path(state, &kb.id, &doc.id)?;
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|e| crate::error::SessionError::Invalid(format!("The file is missing: {e}")))?;
    let parsers = state.knowledge().parsers().clone();
    let (filename, media) = (doc.filename.clone(), doc.content_type.clone());
    let sections =
        tokio::task::spawn_blocking(move || parsers.parse(&bytes, &filename, media.as_deref()))
            .await
            .map_err(|e| crate::error::SessionError::Internal(format!("the parser task: {e}")))?
            .map_err(|e| {
                crate::error::SessionError::Invalid(format!("The document cannot be read: {e}"))
            })?;
    if !set(state, &doc.id, "chunking", None, 0).await {
        return Ok(None);
    }
    let settings = settings_of(&kb)?;
    let chunks = chunker(settings.chunker_config.as_ref())?.chunk(&sections);
    let count = chunks.iter().filter(|c| c.as_text().is_some()).count();
    if !set(state, &doc.id, "indexing", None, 0).await {
        return Ok(None);
    }
    let handle = handle(state, &kb).await?;
    // A document indexed again (after a restart) starts from nothing.
    super::documents::remove_chunks(state, &kb.id, &doc.id).await?;
    let mut metadata = Map::new();
    metadata.insert("filename".into(), Value::from(doc.filename.clone()));
    handle
        .insert_document(chunks, Some(doc.id.clone()), Some(metadata))
        .await
        .map_err(|e| crate::error::SessionError::Invalid(format!("Indexing failed: {e}")))?;
    Ok(Some(i64::try_from(count).unwrap_or(i64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SessionError;

    #[test]
    fn the_owner_reads_no_internal_detail_of_a_failed_indexing() {
        let internal = SessionError::Internal(
            "the vector store: disk I/O error at /srv/data/knowledge/vectors.sqlite".to_owned(),
        );
        let text = shown(&internal);
        assert!(!text.contains("/srv"), "{text}");
        assert!(!text.contains("vector store"), "{text}");
        let theirs = SessionError::Invalid("The document cannot be read: not a PDF".to_owned());
        assert_eq!(shown(&theirs), "The document cannot be read: not a PDF");
    }

    #[test]
    fn time_limits_are_shown_in_their_largest_whole_unit() {
        use std::time::Duration;
        assert_eq!(shown_limit(Duration::from_secs(30 * 60)), "30 min");
        assert_eq!(shown_limit(Duration::from_secs(90)), "90 s");
        assert_eq!(shown_limit(Duration::from_millis(300)), "300 ms");
    }
}
