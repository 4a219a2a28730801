//! Read on PDF files: page text in order, page ranges, empty pages, and
//! damaged, encrypted or text-free files as error results.

use lopdf::content::{Content, Operation};
use lopdf::{
    Dictionary, Document, EncryptionState, EncryptionVersion, Object, Permissions, Stream,
    dictionary,
};
use oxiscope_message::ToolResultState;
use oxiscope_tool::{SessionState, ToolResponse, Toolkit};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{builtin_toolkit, ctx, expect, run};

struct Env {
    dir: tempfile::TempDir,
    toolkit: Toolkit,
    session: SessionState,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let toolkit = builtin_toolkit(dir.path());
        Self {
            dir,
            toolkit,
            session: SessionState::default(),
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn write(&self, name: &str, bytes: &[u8]) {
        std::fs::write(self.path(name), bytes).unwrap();
    }

    async fn call(&self, input: Value) -> ToolResponse {
        run(
            &self.toolkit,
            "Read",
            input,
            ctx(self.dir.path(), &self.session),
        )
        .await
    }

    async fn read(&self, name: &str) -> ToolResponse {
        self.call(json!({"file_path": self.path(name)})).await
    }

    async fn read_pages(&self, name: &str, pages: &str) -> ToolResponse {
        self.call(json!({"file_path": self.path(name), "pages": pages}))
            .await
    }
}

/// A document whose pages show the given lines, one text object per line,
/// in Helvetica; a page without lines has an empty content stream.
fn document(pages: &[&[&str]]) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for lines in pages {
        let mut operations = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let y = 760 - 14 * i64::try_from(i).unwrap();
            operations.extend([
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), y.into()]),
                Operation::new("Tj", vec![Object::string_literal(*line)]),
                Operation::new("ET", vec![]),
            ]);
        }
        let content = Content { operations }.encode().unwrap();
        let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(page_id.into());
    }
    let count = i64::try_from(kids.len()).unwrap();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    doc
}

fn save(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

fn pdf(pages: &[&[&str]]) -> Vec<u8> {
    save(document(pages))
}

#[tokio::test]
async fn read_shows_each_page_under_its_header_in_order() {
    let env = Env::new();
    env.write(
        "two.pdf",
        &pdf(&[&["Alpha one", "Alpha two"], &["Beta one"]]),
    );
    let response = env.read("two.pdf").await;
    let text = expect(&response, ToolResultState::Success);
    assert_eq!(
        text,
        "--- Page 1/2 ---\nAlpha one\nAlpha two\n\n--- Page 2/2 ---\nBeta one"
    );
    assert_eq!(response.metadata["total_pages"], json!(2));
    assert_eq!(response.metadata["start_page"], json!(1));
    assert_eq!(response.metadata["end_page"], json!(2));
    assert_eq!(response.metadata["file_path"], json!(env.path("two.pdf")));
}

#[tokio::test]
async fn read_marks_a_page_without_text() {
    let env = Env::new();
    env.write("gap.pdf", &pdf(&[&["First"], &[], &["Third"]]));
    let text = expect(&env.read("gap.pdf").await, ToolResultState::Success);
    // As AgentScope, a page without text is its header alone.
    assert_eq!(
        text,
        "--- Page 1/3 ---\nFirst\n\n--- Page 2/3 ---\n\n\n--- Page 3/3 ---\nThird"
    );

    env.write("blank.pdf", &pdf(&[&[], &[]]));
    let blank = env.read("blank.pdf").await;
    let error = expect(&blank, ToolResultState::Error);
    assert!(
        error.contains("no extractable text on pages 1-2 of 2"),
        "{error}"
    );
}

#[tokio::test]
async fn read_picks_pages_and_refuses_bad_ranges() {
    let env = Env::new();
    env.write("three.pdf", &pdf(&[&["One"], &["Two"], &["Three"]]));

    let tail = env.read_pages("three.pdf", "2-3").await;
    let text = expect(&tail, ToolResultState::Success);
    assert_eq!(text, "--- Page 2/3 ---\nTwo\n\n--- Page 3/3 ---\nThree");
    assert_eq!(tail.metadata["start_page"], json!(2));

    let one = env.read_pages("three.pdf", "2").await;
    assert_eq!(
        expect(&one, ToolResultState::Success),
        "--- Page 2/3 ---\nTwo"
    );

    // A range past the end is clipped to the pages there are.
    for clipped in ["3-9", "3-21"] {
        let response = env.read_pages("three.pdf", clipped).await;
        assert_eq!(
            expect(&response, ToolResultState::Success),
            "--- Page 3/3 ---\nThree"
        );
    }

    for (bad, error) in [
        ("4", "Error: Invalid pages '4'. PDF has 3 page(s)."),
        ("0", "Error: Invalid pages '0'. PDF has 3 page(s)."),
        ("3-1", "Error: Invalid pages '3-1'. PDF has 3 page(s)."),
        (
            "x",
            "Error: Invalid pages 'x'. Expected a page number or range like \"3\" or \"1-5\".",
        ),
    ] {
        let response = env.read_pages("three.pdf", bad).await;
        assert_eq!(expect(&response, ToolResultState::Error), error, "{bad}");
    }

    std::fs::write(env.path("notes.txt"), "text\n").unwrap();
    let text_file = env.read_pages("notes.txt", "1").await;
    let error = expect(&text_file, ToolResultState::Error);
    assert!(error.contains("applies only to PDF files"), "{error}");
}

#[tokio::test]
async fn read_needs_pages_for_a_long_pdf() {
    let env = Env::new();
    let names: Vec<String> = (1..=22).map(|i| format!("Page text {i}")).collect();
    let lines: Vec<[&str; 1]> = names.iter().map(|n| [n.as_str()]).collect();
    let pages: Vec<&[&str]> = lines.iter().map(<[&str; 1]>::as_slice).collect();
    env.write("long.pdf", &pdf(&pages));

    let whole = env.read("long.pdf").await;
    assert_eq!(
        expect(&whole, ToolResultState::Error),
        "Error: PDF has 22 pages, more than 10. You must provide the pages parameter (e.g. \
         \"1-5\") to read specific pages, max 20 pages per request."
    );

    let end = env.read_pages("long.pdf", "21-22").await;
    assert_eq!(
        expect(&end, ToolResultState::Success),
        "--- Page 21/22 ---\nPage text 21\n\n--- Page 22/22 ---\nPage text 22"
    );
    // Counted over the pages there are: 3-30 is 20 pages, 1-30 is 22.
    let twenty = env.read_pages("long.pdf", "3-30").await;
    expect(&twenty, ToolResultState::Success);
    let too_many = env.read_pages("long.pdf", "1-30").await;
    assert_eq!(
        expect(&too_many, ToolResultState::Error),
        "Error: Requested 22 pages, at most 20 pages can be read per request."
    );
}

#[tokio::test]
async fn read_caps_the_output_between_pages() {
    let env = Env::new();
    let line = "x".repeat(1_000);
    let page: Vec<&str> = vec![line.as_str(); 150];
    env.write("big.pdf", &pdf(&[&page, &page, &["Last"]]));
    let response = env.read("big.pdf").await;
    let text = expect(&response, ToolResultState::Success);
    assert!(text.starts_with("--- Page 1/3 ---\nxxx"), "{}", &text[..40]);
    assert!(!text.contains("--- Page 2/3 ---"));
    assert!(
        text.ends_with(
            "\n\n[Output cut at 262144 bytes: showing pages 1-1 of 3. Use pages=\"2-3\" to \
             read on.]"
        ),
        "{}",
        &text[text.len() - 200..]
    );
    assert_eq!(response.metadata["end_page"], json!(1));
}

#[tokio::test]
async fn read_reports_damaged_and_encrypted_pdfs_as_errors() {
    let env = Env::new();
    let mut corrupt = b"%PDF-1.7\n".to_vec();
    let mut seed: u32 = 0x1234_5678;
    corrupt.extend((0..4096).map(|_| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        seed.to_be_bytes()[0]
    }));
    env.write("corrupt.pdf", &corrupt);
    let response = env.read("corrupt.pdf").await;
    let error = expect(&response, ToolResultState::Error);
    assert!(error.starts_with("Error reading PDF: "), "{error}");

    env.write("header.pdf", b"%PDF-1.4");
    let header = env.read("header.pdf").await;
    let error = expect(&header, ToolResultState::Error);
    assert!(error.contains("not a readable PDF"), "{error}");

    let mut doc = document(&[&["Secret text"]]);
    doc.trailer.set(
        "ID",
        vec![
            Object::string_literal("0123456789abcdef"),
            Object::string_literal("0123456789abcdef"),
        ],
    );
    let state = EncryptionState::try_from(EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password: "user",
        key_length: 128,
        permissions: Permissions::all(),
    })
    .unwrap();
    doc.encrypt(&state).unwrap();
    env.write("locked.pdf", &save(doc));
    let locked = env.read("locked.pdf").await;
    let error = expect(&locked, ToolResultState::Error);
    assert!(error.contains("needs a password"), "{error}");
}
