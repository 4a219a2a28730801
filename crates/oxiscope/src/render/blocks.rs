//! Whole blocks as text: tool calls, tool results, hint panels, data
//! placeholders, usage lines. Pure functions over the rebuilt message.

use oxiscope_message::{
    DataBlock, DataSource, MediaBlock, ModelCallEndEvent, RichContent, ToolCallBlock,
    ToolResultBlock, ToolResultState,
};
use oxiscope_permission::format_rule;
use serde_json::Value;

use super::style::{Painter, Tone};

/// The longest one-line summary of a tool call's input.
const SUMMARY_CHARS: usize = 160;

/// Arguments that say best what a call does, in order of preference.
const KEY_ARGUMENTS: &[&str] = &["command", "file_path", "path", "pattern", "query", "url"];

/// `Bash(git status)`: the tool name and its key argument, or its whole
/// input as compact JSON.
pub(crate) fn call_title(call: &ToolCallBlock) -> String {
    let summary = match serde_json::from_str::<Value>(&call.input) {
        Ok(Value::Object(map)) => KEY_ARGUMENTS
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| Value::Object(map).to_string()),
        Ok(other) => other.to_string(),
        Err(_) => call.input.clone(),
    };
    let summary = one_line(&summary);
    format!("{}({})", call.name, truncate(&summary, SUMMARY_CHARS))
}

/// The lines printed when a tool call's arguments are complete.
pub(crate) fn call_block(p: Painter, call: &ToolCallBlock) -> String {
    format!("{} {}\n", p.paint(Tone::Bold, "●"), call_title(call))
}

/// The lines of a finished tool result, collapsed after `max_lines`.
/// Notes the agent wrote for the model (`<system-reminder>`) show only
/// with `metadata` (debug verbosity).
pub(crate) fn result_block(
    p: Painter,
    result: &ToolResultBlock,
    max_lines: Option<usize>,
    metadata: bool,
) -> String {
    let mut body = rich_text(&result.output);
    if !metadata {
        body = without_reminders(&body);
    }
    let mut lines: Vec<&str> = body.lines().collect();
    let (tone, status) = match result.state {
        ToolResultState::Success => (None, ""),
        ToolResultState::Error => (Some(Tone::Red), " (error)"),
        ToolResultState::Denied => (Some(Tone::Yellow), " (denied)"),
        ToolResultState::Interrupted => (Some(Tone::Dim), " (interrupted)"),
        ToolResultState::Running => (Some(Tone::Dim), " (running)"),
    };
    let mut hidden = 0;
    if let Some(max) = max_lines
        && lines.len() > max
    {
        hidden = lines.len() - max;
        lines.truncate(max);
    }
    let head = format!("{}{status}", result.name);
    let mut out = format!("  ⎿ {}\n", paint_opt(p, tone, &head));
    for line in lines {
        out.push_str("    ");
        out.push_str(&paint_opt(p, tone, line));
        out.push('\n');
    }
    if hidden > 0 {
        let hint = format!("… {hidden} more line{}", if hidden == 1 { "" } else { "s" });
        out.push_str(&format!("    {}\n", p.paint(Tone::Dim, &hint)));
    }
    if metadata && !result.metadata.is_empty() {
        let meta = serde_json::to_string(&result.metadata).unwrap_or_default();
        out.push_str(&format!(
            "    {}\n",
            p.paint(Tone::Dim, &format!("metadata: {meta}"))
        ));
    }
    out
}

/// `text` without its `<system-reminder>…</system-reminder>` notes (an
/// unclosed one runs to the end), and without the blank lines they leave.
pub(crate) fn without_reminders(text: &str) -> String {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    if !text.contains(OPEN) {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        out.push_str(&rest[..start]);
        rest = &rest[start + OPEN.len()..];
        rest = match rest.find(CLOSE) {
            Some(end) => &rest[end + CLOSE.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out.trim().to_owned()
}

fn paint_opt(p: Painter, tone: Option<Tone>, text: &str) -> String {
    match tone {
        Some(t) => p.paint(t, text),
        None => text.to_owned(),
    }
}

/// Text of rich content: text blocks as they are, data blocks as
/// placeholders, one per line.
pub(crate) fn rich_text(content: &RichContent) -> String {
    match content {
        RichContent::Text(t) => t.clone(),
        RichContent::Blocks(blocks) => {
            let parts: Vec<String> = blocks
                .iter()
                .map(|b| match b {
                    MediaBlock::Text(t) => t.text.clone(),
                    MediaBlock::Data(d) => data_placeholder(d),
                })
                .collect();
            parts.join("\n")
        }
    }
}

/// `[data: image/png, ~34KB]`, `[data: image/png, chart.png, ~2KB]` or
/// `[data: audio/wav, https://...]`.
pub(crate) fn data_placeholder(block: &DataBlock) -> String {
    let what = match &block.source {
        DataSource::Base64(b) => approx_size(decoded_len(&b.data)),
        DataSource::Url(u) => u.url.clone(),
    };
    match &block.name {
        Some(name) => format!("[data: {}, {name}, {what}]", block.source.media_type()),
        None => format!("[data: {}, {what}]", block.source.media_type()),
    }
}

/// Bytes encoded by a base64 string (padding excluded).
fn decoded_len(b64: &str) -> usize {
    let trimmed = b64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

/// `~512B`, `~34KB`, `~1.5MB`.
fn approx_size(bytes: usize) -> String {
    const KB: usize = 1024;
    const MB: usize = 1024 * 1024;
    if bytes < KB {
        format!("~{bytes}B")
    } else if bytes < MB {
        format!("~{}KB", (bytes + KB / 2) / KB)
    } else {
        let tenths = (bytes * 10 + MB / 2) / MB;
        format!("~{}.{}MB", tenths / 10, tenths % 10)
    }
}

/// A bordered panel around a hint.
pub(crate) fn hint_panel(p: Painter, source: Option<&str>, hint: &RichContent) -> String {
    let label = source.map(source_label).unwrap_or_default();
    let title = if label.is_empty() {
        "hint".to_owned()
    } else {
        format!("hint · {label}")
    };
    let mut out = format!("{}\n", p.paint(Tone::Cyan, &format!("╭─ {title}")));
    for line in rich_text(hint).lines() {
        out.push_str(&format!("{} {line}\n", p.paint(Tone::Cyan, "│")));
    }
    out.push_str(&format!("{}\n", p.paint(Tone::Cyan, "╰─")));
    out
}

/// A hint source: AgentScope writes `{"label": .., "sublabel": ..}` as a
/// string; anything else is shown as it is.
fn source_label(source: &str) -> String {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(source) else {
        return source.to_owned();
    };
    let parts: Vec<&str> = ["label", "sublabel"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_str))
        .collect();
    if parts.is_empty() {
        source.to_owned()
    } else {
        parts.join(" / ")
    }
}

/// `tokens: 1234 in · 56 out · 1000 cached`.
pub(crate) fn usage_line(p: Painter, e: &ModelCallEndEvent, debug: bool) -> String {
    let mut text = format!("tokens: {} in · {} out", e.input_tokens, e.output_tokens);
    if e.cache_input_tokens > 0 {
        text.push_str(&format!(" · {} cached", e.cache_input_tokens));
    }
    if e.cache_creation_input_tokens > 0 {
        text.push_str(&format!(
            " · {} cache writes",
            e.cache_creation_input_tokens
        ));
    }
    if debug {
        let reason = serde_json::to_value(e.finished_reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        text.push_str(&format!(" · {reason}"));
    }
    format!("{}\n", p.paint(Tone::Dim, &text))
}

/// The notice for calls waiting for the user: each call and the rules that
/// would allow similar calls.
pub(crate) fn confirm_notice(p: Painter, calls: &[ToolCallBlock]) -> String {
    let mut out = format!(
        "{}\n",
        p.paint(Tone::Yellow, "? permission needed for these tool calls:")
    );
    for call in calls {
        out.push_str(&format!("  {}\n", call_title(call)));
        if !call.suggested_rules.is_empty() {
            let rules: Vec<String> = call.suggested_rules.iter().map(format_rule).collect();
            let text = format!("suggested rules: {}", rules.join(", "));
            out.push_str(&format!("    {}\n", p.paint(Tone::Dim, &text)));
        }
    }
    out
}

/// The notice for calls the caller must run.
pub(crate) fn external_notice(p: Painter, calls: &[ToolCallBlock]) -> String {
    let mut out = format!(
        "{}\n",
        p.paint(Tone::Yellow, "? waiting for external execution of:")
    );
    for call in calls {
        out.push_str(&format!("  {}\n", call_title(call)));
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
