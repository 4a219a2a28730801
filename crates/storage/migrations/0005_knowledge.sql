-- Knowledge bases and their documents. A knowledge base's settings
-- (embedding model, chunker) are a JSON document; a document row tracks
-- one uploaded file through indexing (`pending`, `parsing`, `chunking`,
-- `indexing`, `ready`, `error` with its `error` text). The vectors
-- themselves live in the vector store, not here. Counters are BIGINT so
-- the SQL stays portable.
CREATE TABLE IF NOT EXISTS knowledge_bases (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS knowledge_bases_user ON knowledge_bases (user_id);

CREATE TABLE IF NOT EXISTS knowledge_documents (
    id TEXT PRIMARY KEY,
    knowledge_base_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT,
    size BIGINT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    chunk_count BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS knowledge_documents_base
    ON knowledge_documents (knowledge_base_id);
CREATE INDEX IF NOT EXISTS knowledge_documents_status ON knowledge_documents (status);
