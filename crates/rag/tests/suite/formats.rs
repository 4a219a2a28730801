//! Text, Markdown, HTML, PDF and image parsing, and the registry.

use oxiscope_message::{DataSource, MediaBlock};
use oxiscope_rag::parser::{HtmlParser, ImageParser, PdfParser, TextParser};
use oxiscope_rag::{Error, Metadata, Parser, ParserRegistry};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::fixture;

fn texts_and_meta(sections: &[oxiscope_rag::Section]) -> Vec<(Option<&str>, serde_json::Value)> {
    sections
        .iter()
        .map(|s| (s.as_text(), serde_json::Value::Object(s.metadata.clone())))
        .collect()
}

#[test]
fn markdown_is_one_section_with_the_file_name_as_source() {
    let sections = TextParser::new()
        .parse(b"# Cats\nCats sleep.\n", "cats.md")
        .unwrap();
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0].as_text(), Some("# Cats\nCats sleep.\n"));
    assert_eq!(sections[0].source, "cats.md");
    assert_eq!(sections[0].metadata, Metadata::new());
}

#[test]
fn invalid_utf8_text_is_an_error_naming_the_offset() {
    let err = TextParser::new()
        .parse(b"ok \xff\xfe bad", "bad.txt")
        .unwrap_err();
    assert!(
        matches!(err, Error::InvalidUtf8 { valid_up_to: 3, .. }),
        "{err}"
    );
}

#[test]
fn pdf_yields_one_section_per_page_numbered_from_one() {
    let sections = PdfParser::new()
        .parse(&fixture("sample.pdf"), "sample.pdf")
        .unwrap();
    assert_eq!(
        texts_and_meta(&sections),
        vec![
            (Some("First page text."), json!({"page": 1})),
            (Some("Second page text."), json!({"page": 2})),
        ]
    );
    assert!(sections.iter().all(|s| s.source == "sample.pdf"));
}

#[test]
fn image_is_one_data_section_with_its_media_type() {
    let png = fixture("dot.png");
    let sections = ImageParser::new().parse(&png, "dot.png").unwrap();
    assert_eq!(sections.len(), 1);
    assert_eq!(
        sections[0].metadata,
        json!({"media_type": "image/png"})
            .as_object()
            .cloned()
            .unwrap()
    );
    let MediaBlock::Data(block) = &sections[0].content else {
        panic!("expected a data block");
    };
    assert_eq!(block.name.as_deref(), Some("dot.png"));
    let DataSource::Base64(source) = &block.source else {
        panic!("expected base64");
    };
    assert_eq!(source.media_type, "image/png");
    use base64::Engine as _;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&source.data)
            .unwrap(),
        png
    );
}

#[test]
fn bytes_that_are_no_known_image_are_refused() {
    let err = ImageParser::new()
        .parse(b"not an image", "x.png")
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Malformed {
                format: "image",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn html_keeps_visible_text_and_structure() {
    let html = br#"<!DOCTYPE html><html><head><title>Guide</title>
        <script>var x = "<p>no</p>";</script></head>
        <body><h2>Feeding</h2><p>Twice a day.</p><ul><li>wet</li><li>dry</li></ul></body></html>"#;
    let sections = HtmlParser::new().parse(html, "guide.html").unwrap();
    assert_eq!(
        sections[0].as_text(),
        Some("Guide\n\n## Feeding\n\nTwice a day.\n\n- wet\n- dry")
    );
}

#[test]
fn registry_picks_parsers_by_media_type_then_extension() {
    let r = ParserRegistry::default();
    let html = r
        .parse(b"<p>a</p>", "page.bin", Some("text/html; charset=utf-8"))
        .unwrap();
    assert_eq!(html[0].as_text(), Some("a"));
    let md = r.parse(b"<p>a</p>", "notes.MD", None).unwrap();
    assert_eq!(md[0].as_text(), Some("<p>a</p>"));
    assert!(r.for_media_type("application/pdf").is_some());
    assert!(r.for_filename("deck.pptx").is_some());
    assert!(r.media_types().contains(&"image/webp"));
    let err = r.parse(b"x", "archive.tar", None).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    let err = r.parse(b"x", "a.txt", Some("video/mp4")).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}
