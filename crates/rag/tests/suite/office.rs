//! Word, Excel and PowerPoint files made by real tools (see
//! `tests/fixtures/generate.py`).

use oxiscope_message::MediaBlock;
use oxiscope_rag::parser::{
    ExcelOptions, ExcelParser, PptOptions, PptParser, TableFormat, WordOptions, WordParser,
};
use oxiscope_rag::{Parser, Section};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fixture;

fn shape(sections: &[Section]) -> Vec<(String, Value)> {
    sections
        .iter()
        .map(|s| {
            let content = match &s.content {
                MediaBlock::Text(t) => t.text.clone(),
                MediaBlock::Data(d) => format!("<data {}>", d.source.media_type()),
            };
            (content, Value::Object(s.metadata.clone()))
        })
        .collect()
}

fn pair(text: &str, meta: Value) -> (String, Value) {
    (text.to_owned(), meta)
}

#[test]
fn word_merges_paragraphs_and_tables_and_splits_at_images() {
    let sections = WordParser::default()
        .parse(&fixture("sample.docx"), "sample.docx")
        .unwrap();
    assert_eq!(
        shape(&sections),
        vec![
            pair(
                "Cats\nCats sleep 12-16 hours per day.\nThey purr | sometimes.\n\
                 | Name | Age | Color |\n| --- | --- | --- |\n| Tom | 3 | grey |\n\
                 | Felix and<br>friends |  | black |\n\nBefore the picture.",
                json!({}),
            ),
            pair("<data image/png>", json!({"media_type": "image/png"})),
            pair("After the picture.", json!({})),
        ]
    );
    assert!(sections.iter().all(|s| s.source == "sample.docx"));
}

#[test]
fn word_separate_json_tables_without_images() {
    let parser = WordParser::new(WordOptions {
        include_image: false,
        separate_table: true,
        table_format: TableFormat::Json,
    });
    let sections = parser
        .parse(&fixture("sample.docx"), "sample.docx")
        .unwrap();
    assert_eq!(
        shape(&sections),
        vec![
            pair(
                "Cats\nCats sleep 12-16 hours per day.\nThey purr | sometimes.",
                json!({})
            ),
            pair(
                "<system-info>A table loaded as a JSON array:</system-info>\n\
                 [[\"Name\",\"Age\",\"Color\"],[\"Tom\",\"3\",\"grey\"],\
                 [\"Felix and\\nfriends\",\"\",\"black\"]]",
                json!({}),
            ),
            pair("Before the picture.\nAfter the picture.", json!({})),
        ]
    );
}

#[test]
fn excel_merges_sheets_by_default_and_skips_empty_ones() {
    let sections = ExcelParser::default()
        .parse(&fixture("sample.xlsx"), "sample.xlsx")
        .unwrap();
    assert_eq!(
        shape(&sections),
        vec![pair(
            "Sheet: Sales\n| Region | Units | Price | Paid |\n| --- | --- | --- | --- |\n\
             | North | 12 | 2.5 | TRUE |\n| South\\|East | 7 | 3 | FALSE |\n\n\
             Sheet: Notes\n| Topic | Note |\n| --- | --- |\n| Cats | sleep a lot |\n",
            json!({}),
        )]
    );
}

#[test]
fn excel_separate_sheets_with_images_and_coordinates() {
    let parser = ExcelParser::new(ExcelOptions {
        include_sheet_names: false,
        include_cell_coordinates: true,
        include_image: true,
        separate_sheet: true,
        table_format: TableFormat::Markdown,
    });
    let sections = parser
        .parse(&fixture("sample.xlsx"), "sample.xlsx")
        .unwrap();
    assert_eq!(
        shape(&sections),
        vec![
            pair(
                "| [A1] Region | [B1] Units | [C1] Price | [D1] Paid |\n| --- | --- | --- | --- |\n\
                 | [A2] North | [B2] 12 | [C2] 2.5 | [D2] TRUE |\n\
                 | [A3] South\\|East | [B3] 7 | [C3] 3 | [D3] FALSE |\n",
                json!({"sheet": "Sales"}),
            ),
            pair(
                "<data image/png>",
                json!({"sheet": "Sales", "media_type": "image/png"})
            ),
            pair(
                "| [B2] Topic | [C2] Note |\n| --- | --- |\n| [B3] Cats | [C3] sleep a lot |\n",
                json!({"sheet": "Notes"}),
            ),
        ]
    );
}

#[test]
fn excel_json_rows() {
    let parser = ExcelParser::new(ExcelOptions {
        table_format: TableFormat::Json,
        separate_sheet: true,
        ..ExcelOptions::default()
    });
    let sections = parser
        .parse(&fixture("sample.xlsx"), "sample.xlsx")
        .unwrap();
    assert_eq!(
        sections[1].as_text(),
        Some(
            "Sheet: Notes\n<system-info>A table loaded as a JSON array:</system-info>\n\
             [\"Topic\",\"Note\"]\n[\"Cats\",\"sleep a lot\"]"
        )
    );
}

#[test]
fn powerpoint_follows_presentation_order_and_wraps_slides() {
    let sections = PptParser::default()
        .parse(&fixture("sample.pptx"), "sample.pptx")
        .unwrap();
    assert_eq!(
        shape(&sections),
        vec![
            pair(
                "<slide index=1>\nDeck title\nSubtitle line\n</slide>",
                json!({"slide": 1})
            ),
            pair(
                "<slide index=2>\n| Key | Value |\n| --- | --- |\n| a\\|b | 1 |\n\n\
                 First line\nSecond line\n</slide>",
                json!({"slide": 2}),
            ),
            pair("<slide index=3>\nPictures", json!({"slide": 3})),
            pair(
                "<data image/png>",
                json!({"slide": 3, "media_type": "image/png"})
            ),
            pair("Caption\n</slide>", json!({"slide": 3})),
        ]
    );
}

#[test]
fn powerpoint_without_wrapping_images_or_merged_tables() {
    let parser = PptParser::new(PptOptions {
        include_image: false,
        separate_table: true,
        slide_prefix: None,
        slide_suffix: None,
        ..PptOptions::default()
    });
    let sections = parser
        .parse(&fixture("sample.pptx"), "sample.pptx")
        .unwrap();
    assert_eq!(
        shape(&sections),
        vec![
            pair("Deck title\nSubtitle line", json!({"slide": 1})),
            pair(
                "| Key | Value |\n| --- | --- |\n| a\\|b | 1 |\n",
                json!({"slide": 2})
            ),
            pair("First line\nSecond line", json!({"slide": 2})),
            pair("Pictures\nCaption", json!({"slide": 3})),
        ]
    );
}
