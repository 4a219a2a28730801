//! The static HTML report: one page, no script, its style inline; the
//! figures table, then every run with its grades and a link to its tape.

use std::fmt::Write as _;

use super::report::{EvalReport, Totals, money, percent};

/// `text` safe in HTML text and in a quoted attribute.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A link target for a tape path: relative paths as they are, each
/// segment percent-encoded where it needs to be; absolute ones as
/// `file://` URLs.
fn href(path: &str) -> String {
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' | b'~' => {
                out.push(char::from(byte));
            }
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;\
text-align:right}th:first-child,td:first-child{text-align:left}thead th{background:#f0f0f0}\
tr.total td{font-weight:bold}.pass{color:#0a6b0a}.fail{color:#b00020}\
.detail{text-align:left}td.detail{white-space:pre-wrap}";

/// The page of `report`.
pub(super) fn page(report: &EvalReport) -> String {
    let ks: Vec<&String> = report.total.pass_at.keys().collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <title>Evaluation: {name}</title><style>{STYLE}</style></head><body>\
         <h1>Evaluation: {name}</h1><p id=\"summary\">{mode} run, k = {k}, {runs} runs, \
         {passed} passed, {seconds:.1} s</p>",
        name = esc(&report.suite),
        mode = esc(&report.mode),
        k = report.k,
        runs = report.total.runs,
        passed = report.total.passed,
        seconds = report.seconds,
    );
    out.push_str("<table id=\"figures\"><thead><tr><th>task</th><th>passed</th><th>pass rate</th>");
    for k in &ks {
        let _ = write!(out, "<th>{}</th>", esc(k));
    }
    out.push_str(
        "<th>tokens in</th><th>tokens out</th><th>cost</th><th>s/run</th></tr></thead><tbody>",
    );
    let row = |out: &mut String, class: &str, name: &str, f: &Totals| {
        let _ = write!(
            out,
            "<tr class=\"{class}\"><td>{}</td><td>{}/{}</td><td>{}</td>",
            esc(name),
            f.passed,
            f.runs,
            percent(f.pass_rate)
        );
        for k in &ks {
            let cell = f.pass_at.get(*k).map_or(String::new(), |p| percent(*p));
            let _ = write!(out, "<td>{cell}</td>");
        }
        let cost = f.cost.map_or(String::new(), money);
        let _ = write!(
            out,
            "<td>{}</td><td>{}</td><td>{cost}</td><td>{:.2}</td></tr>",
            f.input_tokens, f.output_tokens, f.mean_seconds
        );
    };
    for task in &report.tasks {
        row(&mut out, "task", &task.id, &task.figures);
    }
    row(&mut out, "total", "total", &report.total);
    out.push_str(
        "</tbody></table><h2>Runs</h2><table id=\"runs\"><thead><tr><th>task</th>\
        <th>run</th><th>result</th><th>tokens</th><th>s</th><th>tape</th><th class=\"detail\">details</th></tr>\
        </thead><tbody>",
    );
    for run in report.tasks.iter().flat_map(|t| &t.runs) {
        let (class, word) = if run.passed {
            ("pass", "pass")
        } else {
            ("fail", "FAIL")
        };
        let tape = run.tape.as_deref().map_or(String::new(), |t| {
            format!("<a href=\"{}\">tape</a>", esc(&href(t)))
        });
        let mut details = String::new();
        if let Some(error) = &run.error {
            let _ = writeln!(details, "error: {error}");
        }
        if let Some(divergence) = &run.divergence {
            let _ = writeln!(details, "diverged from its tape: {divergence}");
        }
        for grade in &run.grades {
            let mark = if grade.passed { "✓" } else { "✗" };
            let _ = writeln!(details, "{mark} {}: {}", grade.grader, grade.detail);
        }
        let _ = write!(
            out,
            "<tr class=\"run\"><td>{}</td><td>{}</td><td class=\"{class}\">{word}</td>\
             <td>{}</td><td>{:.2}</td><td>{tape}</td><td class=\"detail\">{}</td></tr>",
            esc(&run.task),
            run.run,
            run.input_tokens + run.output_tokens,
            run.seconds,
            esc(details.trim_end()),
        );
    }
    out.push_str("</tbody></table></body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_names_is_escaped_and_links_are_encoded() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(href("tapes/t 1/0.jsonl"), "tapes/t%201/0.jsonl");
        assert_eq!(href("/tmp/a\"b"), "file:///tmp/a%22b");
    }
}
