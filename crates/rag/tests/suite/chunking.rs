//! Parsing then chunking a real document.

use oxiscope_message::MediaBlock;
use oxiscope_rag::parser::{PptParser, WordParser};
use oxiscope_rag::{ApproxTokenChunker, ApproxTokenParameters, Parser};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::fixture;

#[test]
fn word_chunks_keep_section_boundaries_and_images_whole() {
    let sections = WordParser::default()
        .parse(&fixture("sample.docx"), "sample.docx")
        .unwrap();
    let chunker = ApproxTokenChunker::new(ApproxTokenParameters {
        chunk_size: 16,
        overlap: 4,
    })
    .unwrap();
    let chunks = chunker.chunk(&sections);
    // The first section (178 bytes) is cut into 64-byte windows stepping by 48.
    let first = sections[0].as_text().unwrap();
    let first_chunks: Vec<_> = chunks
        .iter()
        .take_while(|c| c.as_text().is_some())
        .collect();
    assert_eq!(first_chunks.len(), 4);
    assert_eq!(first_chunks[0].as_text(), Some(&first[..64]));
    assert_eq!(first_chunks[1].as_text(), Some(&first[48..112]));
    assert_eq!(first_chunks[3].as_text(), Some(&first[144..]));
    let image = &chunks[first_chunks.len()];
    assert_eq!(image.content, sections[1].content);
    assert_eq!(chunks.last().unwrap().as_text(), Some("After the picture."));
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!((c.chunk_index, c.total_chunks), (i, chunks.len()));
    }
}

#[test]
fn slide_metadata_reaches_every_chunk() {
    let sections = PptParser::default()
        .parse(&fixture("sample.pptx"), "sample.pptx")
        .unwrap();
    let chunks = ApproxTokenChunker::default().chunk(&sections);
    assert_eq!(chunks.len(), sections.len());
    let slides: Vec<_> = chunks.iter().map(|c| c.metadata["slide"].clone()).collect();
    assert_eq!(
        slides,
        vec![json!(1), json!(2), json!(3), json!(3), json!(3)]
    );
    assert!(matches!(chunks[3].content, MediaBlock::Data(_)));
}
