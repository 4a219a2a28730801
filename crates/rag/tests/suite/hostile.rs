//! Bad and hostile files end in typed errors with bounded memory.

use std::io::{Cursor, Write};

use flate2::{Compress, Compression, FlushCompress};
use oxiscope_rag::parser::{ExcelParser, PdfParser, PptParser, TextParser, WordParser};
use oxiscope_rag::{Error, ParseLimits, Parser};
use zip::write::SimpleFileOptions;

use super::fixture;

const GIB: u32 = 1 << 30;
const MIB: usize = 1 << 20;

/// A raw deflate stream of `GIB` zero bytes, about 1 MB long, built without
/// ever holding more than 1 MiB of zeros: after a full flush the
/// compressor's output for the next identical MiB is the same bytes again.
fn deflated_gib_of_zeros() -> Vec<u8> {
    let zeros = vec![0u8; MIB];
    let mut c = Compress::new(Compression::best(), false);
    let mut block = |input: &[u8], flush| {
        let mut out = Vec::with_capacity(MIB);
        let before = c.total_in();
        c.compress_vec(input, &mut out, flush).unwrap();
        assert_eq!(c.total_in() - before, input.len() as u64);
        out
    };
    let first = block(&zeros, FlushCompress::Full);
    let second = block(&zeros, FlushCompress::Full);
    assert_eq!(first, second, "full-flushed blocks of zeros repeat");
    let end = block(&[], FlushCompress::Finish);
    let mut stream = first;
    for _ in 1..(GIB as usize / MIB) {
        stream.extend_from_slice(&second);
    }
    stream.extend_from_slice(&end);
    stream
}

/// A zip archive with one deflated entry whose headers declare `size`
/// uncompressed bytes (CRC left 0: a reader that stops at its limit never
/// gets to check it).
fn zip_with_raw_entry(name: &str, deflated: &[u8], size: u32) -> Vec<u8> {
    let compressed = u32::try_from(deflated.len()).unwrap();
    let name_len = u16::try_from(name.len()).unwrap();
    let mut out = Vec::new();
    // Local file header.
    out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
    out.extend_from_slice(&[20, 0, 0, 0, 8, 0, 0, 0, 0, 0]); // version, flags, deflate, time, date
    out.extend_from_slice(&0u32.to_le_bytes()); // crc
    out.extend_from_slice(&compressed.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(deflated);
    let central = u32::try_from(out.len()).unwrap();
    // Central directory header.
    out.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    out.extend_from_slice(&[20, 0, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&compressed.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&[0; 12]); // extra, comment, disk, attributes
    out.extend_from_slice(&0u32.to_le_bytes()); // local header offset
    out.extend_from_slice(name.as_bytes());
    let central_len = u32::try_from(out.len()).unwrap() - central;
    // End of central directory.
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
    out.extend_from_slice(&central_len.to_le_bytes());
    out.extend_from_slice(&central.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A zip archive of `entries` (name, text), deflated by the zip crate.
fn zip_of(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, text) in entries {
        w.start_file(*name, SimpleFileOptions::default()).unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn a_gigabyte_zip_bomb_stops_at_the_decompression_limit() {
    let deflated = deflated_gib_of_zeros();
    assert!(
        deflated.len() < 2 * MIB,
        "the bomb is {} bytes",
        deflated.len()
    );
    let bomb = zip_with_raw_entry("word/document.xml", &deflated, GIB);
    let limits = ParseLimits {
        max_decompressed_bytes: 8 * MIB as u64,
        ..ParseLimits::default()
    };
    let err = WordParser::default()
        .with_limits(limits)
        .parse(&bomb, "bomb.docx")
        .unwrap_err();
    assert!(
        matches!(err, Error::DecompressedTooLarge { limit } if limit == 8 * MIB as u64),
        "{err}"
    );
}

#[test]
fn too_many_entries_are_refused_before_reading_any() {
    let names: Vec<String> = (0..20).map(|i| format!("f{i}.xml")).collect();
    let entries: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    let limits = ParseLimits {
        max_entries: 10,
        ..ParseLimits::default()
    };
    let err = PptParser::default()
        .with_limits(limits)
        .parse(&zip_of(&entries), "x.pptx")
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooManyEntries {
                count: 20,
                limit: 10
            }
        ),
        "{err}"
    );
}

#[test]
fn truncated_and_non_zip_office_files_are_malformed() {
    let docx = fixture("sample.docx");
    let err = WordParser::default()
        .parse(&docx[..docx.len() / 2], "cut.docx")
        .unwrap_err();
    assert!(
        matches!(err, Error::Malformed { format: "DOCX", .. }),
        "{err}"
    );
    let err = WordParser::default()
        .parse(b"just some text", "fake.docx")
        .unwrap_err();
    assert!(
        matches!(err, Error::Malformed { format: "DOCX", .. }),
        "{err}"
    );
    let err = ExcelParser::default()
        .parse(&docx, "word-as.xlsx")
        .unwrap_err();
    assert!(
        matches!(err, Error::Malformed { format: "XLSX", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("not a `workbook` part"), "{err}");
    let err = PptParser::default()
        .parse(&docx, "word-as.pptx")
        .unwrap_err();
    assert!(
        matches!(err, Error::Malformed { format: "PPTX", .. }),
        "{err}"
    );
}

#[test]
fn garbage_pdf_is_malformed() {
    let err = PdfParser::new()
        .parse(b"%PDF-1.7\n1 0 obj << /Type /Catalog", "bad.pdf")
        .unwrap_err();
    assert!(
        matches!(err, Error::Malformed { format: "PDF", .. }),
        "{err}"
    );
    // A cut PDF is recovered as far as the reader can (its text is lost
    // with the content streams), or refused; never a panic.
    let pdf = fixture("sample.pdf");
    for cut in [pdf.len() / 3, pdf.len() / 2, pdf.len() - 10] {
        match PdfParser::new().parse(&pdf[..cut], "cut.pdf") {
            Ok(pages) => assert!(pages.len() <= 2),
            Err(err) => assert!(matches!(err, Error::Malformed { .. }), "{err}"),
        }
    }
}

#[test]
fn deeply_nested_xml_is_refused() {
    let depth = 100_000;
    let doc = format!(
        "<w:document><w:body>{}{}</w:body></w:document>",
        "<w:p>".repeat(depth),
        "</w:p>".repeat(depth)
    );
    let err = WordParser::default()
        .parse(&zip_of(&[("word/document.xml", &doc)]), "deep.docx")
        .unwrap_err();
    assert!(matches!(err, Error::XmlTooDeep { limit: 256, .. }), "{err}");
}

#[test]
fn a_sparse_sheet_cannot_render_a_huge_grid() {
    let workbook =
        r#"<workbook xmlns:r="r"><sheets><sheet name="S" r:id="rId1"/></sheets></workbook>"#;
    let rels = r#"<Relationships><Relationship Id="rId1" Type="x/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#;
    let sheet = r#"<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row>
        <row r="1048576"><c r="XFD1048576"><v>1</v></c></row></sheetData></worksheet>"#;
    let xlsx = zip_of(&[
        ("xl/workbook.xml", workbook),
        ("xl/_rels/workbook.xml.rels", rels),
        ("xl/worksheets/sheet1.xml", sheet),
    ]);
    let err = ExcelParser::default()
        .parse(&xlsx, "sparse.xlsx")
        .unwrap_err();
    assert!(matches!(err, Error::SectionTooLarge { .. }), "{err}");
}

#[test]
fn input_section_and_count_limits_are_typed_errors() {
    let small = ParseLimits {
        max_input_bytes: 4,
        ..ParseLimits::default()
    };
    let err = TextParser::new()
        .with_limits(small)
        .parse(b"hello", "a.txt")
        .unwrap_err();
    assert!(
        matches!(err, Error::InputTooLarge { size: 5, limit: 4 }),
        "{err}"
    );

    let short = ParseLimits {
        max_section_bytes: 3,
        ..ParseLimits::default()
    };
    let err = TextParser::new()
        .with_limits(short)
        .parse(b"hello", "a.txt")
        .unwrap_err();
    assert!(matches!(err, Error::SectionTooLarge { limit: 3 }), "{err}");

    let one = ParseLimits {
        max_sections: 1,
        ..ParseLimits::default()
    };
    let err = PdfParser::new()
        .with_limits(one)
        .parse(&fixture("sample.pdf"), "p.pdf")
        .unwrap_err();
    assert!(matches!(err, Error::TooManySections { limit: 1 }), "{err}");
}

mod mutations {
    use oxiscope_rag::ParserRegistry;
    use proptest::prelude::*;

    use super::fixture;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Damaged copies of every fixture parse or fail with an error, and
        /// never panic.
        #[test]
        fn damaged_fixtures_never_panic(
            file in prop::sample::select(vec![
                "sample.docx", "sample.xlsx", "sample.pptx", "sample.pdf", "dot.png",
            ]),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        ) {
            let mut bytes = fixture(file);
            for (at, value) in flips {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            let _ = ParserRegistry::default().parse(&bytes, file, None);
        }
    }
}
