//! Integration tests of oxiscope-rag: real documents, hostile inputs, knowledge bases and the RAG middleware in agent runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod suite;
