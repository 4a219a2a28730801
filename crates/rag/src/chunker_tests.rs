#![allow(clippy::unwrap_used, clippy::expect_used)]

use oxiscope_message::{Base64Source, DataBlock, DataSource};
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::section::{Metadata, meta};

fn chunker(chunk_size: usize, overlap: usize) -> ApproxTokenChunker {
    ApproxTokenChunker::new(ApproxTokenParameters {
        chunk_size,
        overlap,
    })
    .unwrap()
}

fn texts(chunks: &[Chunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.as_text().unwrap()).collect()
}

#[test]
fn defaults_match_agentscope() {
    let p = ApproxTokenChunker::default().parameters();
    assert_eq!((p.chunk_size, p.overlap), (512, 50));
    let parsed: ApproxTokenParameters = serde_json::from_value(json!({"chunk_size": 8})).unwrap();
    assert_eq!(
        parsed,
        ApproxTokenParameters {
            chunk_size: 8,
            overlap: 50
        }
    );
}

#[test]
fn overlap_not_below_chunk_size_is_rejected() {
    let err = ApproxTokenChunker::new(ApproxTokenParameters {
        chunk_size: 4,
        overlap: 4,
    });
    assert!(matches!(err, Err(Error::InvalidParameters(_))));
    let err = ApproxTokenChunker::new(ApproxTokenParameters {
        chunk_size: 0,
        overlap: 0,
    });
    assert!(matches!(err, Err(Error::InvalidParameters(_))));
}

#[test]
fn short_text_stays_whole_up_to_four_bytes_per_token_plus_three() {
    // 11 bytes: 11 / 4 = 2 tokens <= 2.
    let c = chunker(2, 0);
    assert_eq!(c.split_ranges("abcdefghijk"), vec![0..11]);
    // 12 bytes: 3 tokens > 2, cut into 8-byte pieces.
    assert_eq!(c.split_ranges("abcdefghijkl"), vec![0..8, 8..12]);
}

#[test]
fn overlap_steps_back_by_four_bytes_per_token() {
    let c = chunker(2, 1);
    let sections = [Section::text("abcdefghijklmnop", "a.txt", meta("page", 1))];
    let chunks = c.chunk(&sections);
    assert_eq!(texts(&chunks), vec!["abcdefgh", "efghijkl", "ijklmnop"]);
    assert!(
        chunks
            .iter()
            .all(|ch| ch.total_chunks == 3 && ch.source == "a.txt")
    );
    assert_eq!(chunks[2].chunk_index, 2);
    assert_eq!(chunks[1].metadata, meta("page", 1));
}

#[test]
fn cuts_never_fall_inside_a_character() {
    // "é" is 2 bytes, "😀" is 4.
    let c = chunker(1, 0);
    let text = "aé😀éa😀";
    let chunks = c.chunk(&[Section::text(text, "x", Metadata::new())]);
    assert_eq!(texts(&chunks), vec!["aé", "😀", "éa", "😀"]);
}

#[test]
fn data_sections_pass_through_and_sections_never_merge() {
    let data = DataBlock::new(DataSource::Base64(Base64Source {
        data: "iVBORw0KGgo=".into(),
        media_type: "image/png".into(),
    }));
    let sections = [
        Section::text("abcd", "f", meta("slide", 1)),
        Section::data(data.clone(), "f", meta("media_type", "image/png")),
        Section::text("efgh", "f", meta("slide", 2)),
        Section::text("", "f", Metadata::new()),
    ];
    let chunks = chunker(8, 2).chunk(&sections);
    assert_eq!(chunks.len(), 4);
    assert_eq!(chunks[0].as_text(), Some("abcd"));
    assert_eq!(chunks[1].content, MediaBlock::Data(data));
    assert_eq!(chunks[2].as_text(), Some("efgh"));
    assert_eq!(chunks[3].as_text(), Some(""));
    let indexes: Vec<_> = chunks
        .iter()
        .map(|c| (c.chunk_index, c.total_chunks))
        .collect();
    assert_eq!(indexes, vec![(0, 4), (1, 4), (2, 4), (3, 4)]);
}

#[test]
fn chunk_serialises_with_agentscope_field_names() {
    let chunks = chunker(8, 2).chunk(&[Section::text("hi", "a.md", meta("page", 2))]);
    let v = serde_json::to_value(&chunks[0]).unwrap();
    assert_eq!(v["content"]["type"], "text");
    assert_eq!(v["content"]["text"], "hi");
    assert_eq!(v["source"], "a.md");
    assert_eq!(v["chunk_index"], 0);
    assert_eq!(v["total_chunks"], 1);
    assert_eq!(v["metadata"], json!({"page": 2}));
    let back: Chunk = serde_json::from_value(v).unwrap();
    assert_eq!(back, chunks[0]);
}

proptest! {
    #[test]
    fn chunks_minus_overlaps_rebuild_the_text(
        text in "\\PC{0,300}",
        chunk_size in 1usize..20,
        overlap_frac in 0usize..100,
    ) {
        let overlap = overlap_frac * chunk_size / 100;
        let c = chunker(chunk_size, overlap);
        let ranges = c.split_ranges(&text);
        prop_assert!(!ranges.is_empty());
        prop_assert_eq!(ranges[0].start, 0);
        prop_assert_eq!(ranges.last().unwrap().end, text.len());
        let mut rebuilt = String::new();
        let mut covered = 0;
        let mut last_start = None;
        for r in &ranges {
            // No gap, and every chunk starts after the one before.
            prop_assert!(r.start <= covered);
            prop_assert!(last_start.is_none_or(|s| r.start > s));
            last_start = Some(r.start);
            let piece = &text[r.clone()];
            prop_assert!(ApproxTokenChunker::approx_tokens(piece) <= chunk_size);
            // Near multi-byte characters a chunk may lie inside the one
            // before (as in AgentScope); it then adds nothing new.
            if r.end > covered {
                rebuilt.push_str(&text[covered..r.end]);
                covered = r.end;
            }
        }
        prop_assert_eq!(rebuilt, text);
    }

    #[test]
    fn chunking_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400), size in 1usize..9) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let chunks = chunker(size, size - 1).chunk(&[Section::text(text, "x", Metadata::new())]);
        prop_assert!(!chunks.is_empty());
    }
}
