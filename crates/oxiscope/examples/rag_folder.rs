//! Retrieval-augmented generation over a folder: every file in it is
//! parsed (Markdown, text, PDF, Office, ...), chunked, embedded and stored;
//! the agent searches the knowledge base with the `search_knowledge` tool
//! the RAG middleware offers.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p oxiscope --example rag_folder -- ./docs "How do I install it?"
//! ```
//!
//! The embedding model here is the offline hashing embedder, so the example
//! needs nothing else; in practice use `oxiscope::providers::embedding_model`
//! (or the local MiniLM model) and `SqliteVectorStore::open(dir)` to keep
//! the index between runs.
// An example shows its results on stdout (the workspace lints deny that in libraries).
#![allow(clippy::print_stdout)]

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;

use oxiscope::prelude::*;
use oxiscope::rag::{
    ApproxTokenChunker, HashingEmbedder, InMemoryVectorStore, KnowledgeBase, ParserRegistry,
    RagMiddleware, RagParameters,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let folder = PathBuf::from(args.next().unwrap_or_else(|| ".".to_owned()));
    let question = args
        .next()
        .unwrap_or_else(|| "What is in these documents?".to_owned());

    let dims = NonZeroU32::new(256).ok_or("zero dimensions")?;
    let kb = KnowledgeBase::new(
        "docs",
        "The documents of the folder.",
        Arc::new(HashingEmbedder::new(dims)),
        Arc::new(InMemoryVectorStore::new()),
        "docs",
    );
    let (parsers, chunker) = (ParserRegistry::default(), ApproxTokenChunker::default());
    let mut names: Vec<PathBuf> = std::fs::read_dir(&folder)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file())
        .collect();
    names.sort();
    for path in names {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("file")
            .to_owned();
        match kb
            .insert_file(
                &parsers,
                &chunker,
                &std::fs::read(&path)?,
                &name,
                None,
                None,
            )
            .await
        {
            Ok(_) => println!("indexed {name}"),
            Err(e) => println!("skipped {name}: {e}"),
        }
    }

    let rag = RagMiddleware::new(vec![kb], RagParameters::default())?;
    let agent = Agent::builder("Librarian", oxiscope::chat_model_from_env()?)
        .system_prompt("Answer from the knowledge base and name your sources.")
        .middleware(rag)
        .build()?;
    let reply = agent.reply(Msg::user("user", question)?).await?;
    println!("{}", reply.text("\n"));
    Ok(())
}
