//! Documents of a knowledge base: upload (streamed to disk under the size
//! limit, its type checked against the parsers), list, status, delete,
//! chunks, download.

use std::path::Path;

use oxiscope_rag::{ParserRegistry, VectorStore as _};
use oxiscope_storage::{KnowledgeDocumentRecord, new_id, now};
use tokio::io::AsyncWriteExt as _;

use super::bases::{check_page, find_base, paginate};
use super::{SessionError, SessionResult, collection, document_path, vector_store};
use crate::Engine;
use crate::api::{
    KnowledgeDocumentView, ListDocumentChunksResponse, ListDocumentsQuery,
    ListKnowledgeDocumentStatusResponse, ListKnowledgeDocumentsResponse, PageQuery,
    UploadKnowledgeDocumentResponse,
};
use crate::upload::{Upload, UploadError};

/// The statuses a document can have, as the wire spells them.
const STATUSES: &[&str] = &[
    "pending", "parsing", "chunking", "indexing", "ready", "error",
];
/// The most bytes of a form field other than the file.
const MAX_FIELD_BYTES: usize = 1024;
/// The most ids one status query may name.
const MAX_STATUS_IDS: usize = 256;
/// The most parts one upload form may have (`file`, `content_type` and a
/// few a client adds): an endless stream of small parts is refused.
const MAX_FIELDS: usize = 16;

pub(super) fn doc_view(d: KnowledgeDocumentRecord) -> KnowledgeDocumentView {
    KnowledgeDocumentView {
        id: d.id,
        filename: d.filename,
        size: d.size,
        content_type: d.content_type,
        status: d.status,
        error: d.error,
        chunk_count: d.chunk_count,
        created_at: d.created_at,
        updated_at: d.updated_at,
    }
}

/// One document of one of the user's knowledge bases.
pub async fn find_document(
    state: &Engine,
    user: &str,
    kb_id: &str,
    id: &str,
) -> SessionResult<KnowledgeDocumentRecord> {
    find_base(state, user, kb_id).await?;
    state
        .storage()
        .get_knowledge_document(user, kb_id, id)
        .await?
        .ok_or_else(|| SessionError::NotFound(format!("Document {id} not found")))
}

fn upload_error(e: &UploadError) -> SessionError {
    match e {
        UploadError::TooLarge(_) => SessionError::TooLarge(e.to_string()),
        UploadError::Malformed(_) => SessionError::Invalid(e.to_string()),
    }
}

/// The last path component of an uploaded file name, without control
/// characters, at most 255 characters.
fn clean_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let name: String = base.chars().filter(|c| !c.is_control()).take(255).collect();
    let name = name.trim();
    if name.is_empty() || name == "." || name == ".." {
        "document".to_owned()
    } else {
        name.to_owned()
    }
}

/// The media type the document is parsed as: the form's `content_type`
/// (which must be supported), else the part's own type when a parser
/// reads it, else the parser for the file name's extension.
fn media_type(
    parsers: &ParserRegistry,
    declared: Option<&str>,
    part: Option<&str>,
    filename: &str,
) -> SessionResult<String> {
    let essence = |m: &str| {
        m.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_lowercase()
    };
    if let Some(m) = declared.filter(|m| !m.trim().is_empty()) {
        return if parsers.for_media_type(m).is_some() {
            Ok(essence(m))
        } else {
            Err(SessionError::Unsupported(format!(
                "The content type {m} is not supported."
            )))
        };
    }
    if let Some(m) = part
        && parsers.for_media_type(m).is_some()
        && essence(m) != "application/octet-stream"
    {
        return Ok(essence(m));
    }
    parsers
        .for_filename(filename)
        .and_then(|p| p.supported_media_types().first())
        .map(|m| (*m).to_owned())
        .ok_or_else(|| {
            SessionError::Unsupported(format!("The file type of {filename} is not supported."))
        })
}

/// How many bytes a file part may have: the upload limit, or what is left
/// of the user's storage quota when that is less.
#[derive(Debug, Clone, Copy)]
enum Limit {
    Upload(usize),
    Quota(usize),
}

impl Limit {
    fn bytes(self) -> usize {
        match self {
            Self::Upload(n) | Self::Quota(n) => n,
        }
    }

    fn exceeded(self) -> SessionError {
        match self {
            Self::Upload(n) => SessionError::TooLarge(format!(
                "The document is larger than the limit of {n} bytes."
            )),
            Self::Quota(n) => SessionError::TooLarge(format!(
                "The document is larger than the {n} bytes left of your knowledge-base storage \
                 quota; delete documents first."
            )),
        }
    }
}

/// What the user keeps now, over all their knowledge bases: documents and
/// bytes of uploaded files.
async fn usage(state: &Engine, user: &str) -> SessionResult<(usize, u64)> {
    let (mut documents, mut bytes) = (0_usize, 0_u64);
    for kb in state.storage().list_knowledge_bases(user).await? {
        for d in state
            .storage()
            .list_knowledge_documents(user, &kb.id)
            .await?
        {
            documents += 1;
            bytes = bytes.saturating_add(u64::try_from(d.size).unwrap_or(0));
        }
    }
    Ok((documents, bytes))
}

/// How much the user may upload now.
///
/// # Errors
/// 403 when the user's document or storage quota is reached.
async fn upload_limit(state: &Engine, user: &str) -> SessionResult<Limit> {
    let settings = &state.config().knowledge;
    let (documents, bytes) = usage(state, user).await?;
    if documents >= settings.max_documents_per_user {
        return Err(SessionError::Forbidden(format!(
            "You keep {documents} documents, the most allowed; delete some first."
        )));
    }
    let left = settings.max_bytes_per_user.saturating_sub(bytes);
    if left == 0 {
        return Err(SessionError::Forbidden(
            "Your knowledge-base storage quota is used up; delete documents first.".to_owned(),
        ));
    }
    let left = usize::try_from(left).unwrap_or(usize::MAX);
    Ok(if left < settings.max_upload_bytes {
        Limit::Quota(left)
    } else {
        Limit::Upload(settings.max_upload_bytes)
    })
}

/// Streams the `file` part to `path`, at most `limit` bytes; its size.
async fn save_file(upload: &mut Upload, path: &Path, limit: Limit) -> SessionResult<u64> {
    let fail = |e: std::io::Error| SessionError::Internal(format!("an uploaded document: {e}"));
    let mut file = tokio::fs::File::create(path).await.map_err(fail)?;
    let mut size: usize = 0;
    while let Some(chunk) = upload.chunk().await.map_err(|e| upload_error(&e))? {
        size = size.saturating_add(chunk.len());
        if size > limit.bytes() {
            return Err(limit.exceeded());
        }
        file.write_all(&chunk).await.map_err(fail)?;
    }
    file.flush().await.map_err(fail)?;
    Ok(size as u64)
}

/// A small text field.
async fn read_text(upload: &mut Upload) -> SessionResult<String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = upload.chunk().await.map_err(|e| upload_error(&e))? {
        if bytes.len() + chunk.len() > MAX_FIELD_BYTES {
            return Err(SessionError::invalid(
                &["body"],
                "A form field is too long",
                "value_error",
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes)
        .map_err(|_| SessionError::invalid(&["body"], "A form field is not UTF-8", "value_error"))
}

/// Removes a file on drop unless kept.
struct Partial<'a>(&'a Path, bool);

impl Drop for Partial<'_> {
    fn drop(&mut self) {
        if !self.1
            && let Err(e) = std::fs::remove_file(self.0)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(path = %self.0.display(), "cannot remove a partial upload: {e}");
        }
    }
}

/// Stores an uploaded document and queues its indexing.
///
/// # Errors
/// 404 for another user's knowledge base (or one deleted meanwhile), 403
/// when the user's quota is reached, 413 over the size limit (or what is
/// left of the quota), 415 for a type no parser reads, 422 without a file
/// or with too many form parts.
///
/// One upload of a user at a time runs (in a process the next waits; on
/// another replica it gets a 409 after a few seconds' wait), so concurrent uploads
/// cannot each spend what is left of the same quota.
pub async fn upload_document(
    state: &Engine,
    user: &str,
    kb_id: &str,
    upload: Upload,
) -> SessionResult<UploadKnowledgeDocumentResponse> {
    let runtime = state.knowledge();
    let gate = runtime.upload_gate(user);
    let outcome = match gate.acquire().await {
        Ok(_permit) => {
            crate::lease::under(
                state,
                &format!("uploads-of:{user}"),
                "Another upload of this user is in progress; try again when it is done.",
                upload_one(state, user, kb_id, upload),
            )
            .await
        }
        Err(e) => Err(SessionError::Internal(format!("the upload gate: {e}"))),
    };
    drop(gate);
    runtime.forget_upload_gate(user);
    outcome
}

/// [`upload_document`], holding the user's upload gate.
async fn upload_one(
    state: &Engine,
    user: &str,
    kb_id: &str,
    mut upload: Upload,
) -> SessionResult<UploadKnowledgeDocumentResponse> {
    let kb = find_base(state, user, kb_id).await?;
    let limit = upload_limit(state, user).await?;
    let id = new_id();
    let path = document_path(state, &kb.id, &id)?;
    let dir = path.parent().unwrap_or(&path).to_path_buf();
    create_private_dir(&dir).await?;
    let partial_path = dir.join(format!("{id}.part"));
    let mut partial = Partial(&partial_path, false);
    let (mut file, mut declared) = (None, None);
    let mut fields = 0_usize;
    while let Some(part) = upload.next_part().await.map_err(|e| upload_error(&e))? {
        fields += 1;
        if fields > MAX_FIELDS {
            return Err(SessionError::invalid(
                &["body"],
                format!("At most {MAX_FIELDS} form fields"),
                "value_error",
            ));
        }
        match part.name.as_deref() {
            Some("file") if file.is_none() => {
                let filename = clean_filename(part.file_name.as_deref().unwrap_or_default());
                let part_type = part.content_type;
                let size = save_file(&mut upload, &partial_path, limit).await?;
                file = Some((filename, part_type, size));
            }
            Some("content_type") => declared = Some(read_text(&mut upload).await?),
            _ => {
                read_text(&mut upload).await?;
            }
        }
    }
    let Some((filename, part_type, size)) = file else {
        return Err(SessionError::invalid(
            &["body", "file"],
            "Field required",
            "missing",
        ));
    };
    let content_type = media_type(
        state.knowledge().parsers(),
        declared.as_deref(),
        part_type.as_deref(),
        &filename,
    )?;
    tokio::fs::rename(&partial_path, &path)
        .await
        .map_err(|e| SessionError::Internal(format!("an uploaded document: {e}")))?;
    partial.1 = true;
    let at = now();
    let record = KnowledgeDocumentRecord {
        id,
        knowledge_base_id: kb.id,
        user_id: user.to_owned(),
        filename,
        content_type: Some(content_type),
        size: i64::try_from(size).unwrap_or(i64::MAX),
        status: "pending".to_owned(),
        error: None,
        chunk_count: 0,
        created_at: at.clone(),
        updated_at: at,
    };
    if let Err(e) = state.storage().create_knowledge_document(&record).await {
        let _ = tokio::fs::remove_file(&path).await;
        return Err(e.into());
    }
    // The knowledge base may have been deleted while the file streamed in:
    // then nothing of the upload is kept (no route could reach it).
    if let Err(e) = find_base(state, user, &record.knowledge_base_id).await {
        let _ = state
            .storage()
            .delete_knowledge_document(user, &record.knowledge_base_id, &record.id)
            .await;
        let _ = tokio::fs::remove_file(&path).await;
        let _ = tokio::fs::remove_dir(&dir).await;
        return Err(e);
    }
    super::index::spawn(state.clone(), record.clone());
    Ok(UploadKnowledgeDocumentResponse {
        document_id: record.id,
        filename: record.filename,
        status: record.status,
    })
}

async fn create_private_dir(dir: &Path) -> SessionResult<()> {
    let fail = |e: std::io::Error| SessionError::Internal(format!("the knowledge directory: {e}"));
    let mut builder = tokio::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder.create(dir).await.map_err(fail)
}

/// The documents of a knowledge base, filtered and paged.
///
/// # Errors
/// 404 for another user's knowledge base, 422 for bad paging or status.
pub async fn list_documents(
    state: &Engine,
    user: &str,
    kb_id: &str,
    q: ListDocumentsQuery,
) -> SessionResult<ListKnowledgeDocumentsResponse> {
    check_page(q.page, q.page_size, Some(&q.orderby))?;
    if let Some(s) = &q.status
        && !STATUSES.contains(&s.as_str())
    {
        return Err(SessionError::invalid(
            &["query", "status"],
            "String should match pattern '^(pending|parsing|chunking|indexing|ready|error)$'",
            "string_pattern_mismatch",
        ));
    }
    find_base(state, user, kb_id).await?;
    let needle = q.keywords.as_deref().map(str::to_lowercase);
    let docs: Vec<KnowledgeDocumentRecord> = state
        .storage()
        .list_knowledge_documents(user, kb_id)
        .await?
        .into_iter()
        .filter(|d| q.id.as_ref().is_none_or(|id| &d.id == id))
        .filter(|d| q.status.as_ref().is_none_or(|s| &d.status == s))
        .filter(|d| {
            needle
                .as_ref()
                .is_none_or(|n| d.filename.to_lowercase().contains(n))
        })
        .collect();
    let (page, total) = paginate(
        docs,
        |d| (d.created_at.as_str(), d.updated_at.as_str()),
        &q.orderby,
        q.desc,
        q.page,
        q.page_size,
    );
    Ok(ListKnowledgeDocumentsResponse {
        documents: page.into_iter().map(doc_view).collect(),
        total,
        page: q.page,
        page_size: q.page_size,
    })
}

/// The named documents that exist, in the order asked.
///
/// # Errors
/// 404 for another user's knowledge base, 422 for too many ids.
pub async fn document_statuses(
    state: &Engine,
    user: &str,
    kb_id: &str,
    ids: &str,
) -> SessionResult<ListKnowledgeDocumentStatusResponse> {
    let wanted: Vec<&str> = ids
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if wanted.len() > MAX_STATUS_IDS {
        return Err(SessionError::invalid(
            &["query", "ids"],
            format!("At most {MAX_STATUS_IDS} ids"),
            "value_error",
        ));
    }
    find_base(state, user, kb_id).await?;
    let docs = state
        .storage()
        .list_knowledge_documents(user, kb_id)
        .await?;
    let items = wanted
        .iter()
        .filter_map(|id| docs.iter().find(|d| d.id == *id).cloned())
        .map(doc_view)
        .collect();
    Ok(ListKnowledgeDocumentStatusResponse { items })
}

/// Deletes a document: its record, its chunks and its file.
///
/// # Errors
/// 404 when the user has no such document.
pub async fn delete_document(
    state: &Engine,
    user: &str,
    kb_id: &str,
    id: &str,
) -> SessionResult<()> {
    let doc = find_document(state, user, kb_id, id).await?;
    state
        .storage()
        .delete_knowledge_document(user, kb_id, &doc.id)
        .await?;
    remove_chunks(state, kb_id, &doc.id).await?;
    let path = document_path(state, kb_id, &doc.id)?;
    if let Err(e) = tokio::fs::remove_file(&path).await
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), "cannot remove a document's file: {e}");
    }
    Ok(())
}

/// Removes a document's chunks from the vector store.
pub(super) async fn remove_chunks(state: &Engine, kb_id: &str, doc_id: &str) -> SessionResult<()> {
    let store = vector_store(state).await?;
    let name = collection(kb_id);
    let fail = |e: oxiscope_rag::Error| SessionError::Internal(format!("the vector store: {e}"));
    if store.has_collection(&name).await.map_err(fail)? {
        store.delete(&name, doc_id).await.map_err(fail)?;
    }
    Ok(())
}

/// A page of a document's chunks.
///
/// # Errors
/// 404 when the user has no such document, 422 for bad paging.
pub async fn document_chunks(
    state: &Engine,
    user: &str,
    kb_id: &str,
    id: &str,
    q: PageQuery,
) -> SessionResult<ListDocumentChunksResponse> {
    check_page(q.page, q.page_size, None)?;
    let doc = find_document(state, user, kb_id, id).await?;
    let store = vector_store(state).await?;
    let name = collection(kb_id);
    let fail = |e: oxiscope_rag::Error| SessionError::Internal(format!("the vector store: {e}"));
    let offset = (q.page as usize - 1).saturating_mul(q.page_size as usize);
    let chunks = if store.has_collection(&name).await.map_err(fail)? {
        store
            .list_chunks(&name, &doc.id, offset, q.page_size as usize, None)
            .await
            .map_err(fail)?
    } else {
        Vec::new()
    };
    let chunks = chunks
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| SessionError::Internal(format!("a chunk: {e}")))?;
    Ok(ListDocumentChunksResponse {
        chunks,
        total: usize::try_from(doc.chunk_count).unwrap_or(0),
        page: q.page,
        page_size: q.page_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploaded_file_names_lose_paths_and_control_characters() {
        assert_eq!(clean_filename("../../etc/passwd"), "passwd");
        assert_eq!(clean_filename("C:\\Users\\me\\notes.txt"), "notes.txt");
        assert_eq!(clean_filename("a\u{0}b\nc.md"), "abc.md");
        assert_eq!(clean_filename(".."), "document");
        assert_eq!(clean_filename(""), "document");
        assert_eq!(clean_filename(&"x".repeat(400)).len(), 255);
    }

    #[test]
    fn the_media_type_comes_from_the_form_the_part_or_the_extension() {
        let parsers = ParserRegistry::default();
        let pick = |declared, part, name| media_type(&parsers, declared, part, name);
        assert_eq!(
            pick(Some("Application/PDF; x=1"), None, "a.bin").unwrap(),
            "application/pdf"
        );
        assert!(matches!(
            pick(Some("application/x-msdownload"), None, "a.pdf"),
            Err(SessionError::Unsupported(_))
        ));
        assert_eq!(
            pick(None, Some("text/markdown"), "notes").unwrap(),
            "text/markdown"
        );
        // An octet-stream part falls back to the extension.
        assert_eq!(
            pick(None, Some("application/octet-stream"), "r.pdf").unwrap(),
            "application/pdf"
        );
        assert!(matches!(
            pick(None, None, "tool.exe"),
            Err(SessionError::Unsupported(_))
        ));
    }
}

#[cfg(test)]
#[path = "documents_tests.rs"]
mod replica_tests;
