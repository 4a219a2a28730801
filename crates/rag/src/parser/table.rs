//! Tables as text: Markdown pipe tables or a JSON array, as AgentScope
//! renders them for Word and PowerPoint.

use serde::{Deserialize, Serialize};

/// How tables are written into text sections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// A Markdown pipe table; the first row is the header.
    #[default]
    Markdown,
    /// A JSON array of rows after a one-line `<system-info>` marker.
    Json,
}

/// The marker line before a JSON table.
pub(crate) const JSON_TABLE_MARKER: &str =
    "<system-info>A table loaded as a JSON array:</system-info>";

/// `rows` rendered in `format`; empty when there is nothing to render.
pub(crate) fn render(rows: &[Vec<String>], format: TableFormat) -> String {
    match format {
        TableFormat::Markdown => markdown(rows),
        TableFormat::Json => json(rows),
    }
}

/// A Markdown pipe table: pipes and backslashes escaped, line breaks in a
/// cell as `<br>`, short rows padded to the header's width.
pub(crate) fn markdown(rows: &[Vec<String>]) -> String {
    let Some(header) = rows.first() else {
        return String::new();
    };
    if header.is_empty() {
        return String::new();
    }
    let width = header.len();
    let mut lines = Vec::with_capacity(rows.len() + 1);
    lines.push(row_line(header.iter().map(|c| markdown_cell(c))));
    lines.push(row_line((0..width).map(|_| "---".to_owned())));
    for row in &rows[1..] {
        lines.push(row_line(
            (0..width).map(|i| markdown_cell(row.get(i).map_or("", String::as_str))),
        ));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn row_line(cells: impl Iterator<Item = String>) -> String {
    format!("| {} |", cells.collect::<Vec<_>>().join(" | "))
}

fn markdown_cell(cell: &str) -> String {
    cell.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', "<br>")
}

fn json(rows: &[Vec<String>]) -> String {
    let body = serde_json::to_string(rows).unwrap_or_default();
    format!("{JSON_TABLE_MARKER}\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&[&str]]) -> Vec<Vec<String>> {
        r.iter()
            .map(|row| row.iter().map(|c| (*c).to_owned()).collect())
            .collect()
    }

    #[test]
    fn markdown_escapes_pipes_and_breaks_and_pads_rows() {
        let t = rows(&[&["a|b", "c"], &["x\ny"]]);
        assert_eq!(
            markdown(&t),
            "| a\\|b | c |\n| --- | --- |\n| x<br>y |  |\n"
        );
        assert_eq!(markdown(&[]), "");
    }

    #[test]
    fn json_has_the_marker_line() {
        let t = rows(&[&["a", "é"]]);
        assert_eq!(
            render(&t, TableFormat::Json),
            format!("{JSON_TABLE_MARKER}\n[[\"a\",\"é\"]]")
        );
    }
}
