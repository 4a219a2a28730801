//! The multi-agent variant: runs of plain messages folded into one
//! `<history>` transcript, tool exchanges kept in the chat shape.

use oxiscope_message::{BlockKind, ContentBlock, Msg, Role};
use oxiscope_model::ModelError;
use serde_json::{Value, json};

use super::{OpenAiChatFormatter, Part, chat};

/// The transcript being collected.
#[derive(Default)]
struct Group {
    lines: Vec<String>,
    media: Vec<Part>,
}

pub(super) async fn format(
    fmt: &OpenAiChatFormatter,
    msgs: &[Msg],
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::new();
    let mut group = Group::default();
    let mut first_group = true;
    for msg in msgs {
        if msg.role == Role::System {
            flush(fmt, &mut group, &mut first_group, &mut out);
            out.push(json!({"role": "system", "content": msg.text("\n")}));
        } else if msg.has_blocks(BlockKind::ToolCall) || msg.has_blocks(BlockKind::ToolResult) {
            flush(fmt, &mut group, &mut first_group, &mut out);
            chat::format_msg(fmt, msg, &mut out).await?;
        } else {
            // Only what was said counts here: thinking and hints are dropped.
            group
                .lines
                .push(format!("{}: {}", msg.name, msg.text("\n")));
            for block in &msg.content {
                if let ContentBlock::Data(d) = block
                    && let Some(part) = fmt.media_part(d).await?
                {
                    group.media.push(Part::Media(part));
                }
            }
        }
    }
    flush(fmt, &mut group, &mut first_group, &mut out);
    Ok(out)
}

fn flush(fmt: &OpenAiChatFormatter, group: &mut Group, first: &mut bool, out: &mut Vec<Value>) {
    if group.lines.is_empty() && group.media.is_empty() {
        return;
    }
    let group = std::mem::take(group);
    let prompt = if *first {
        fmt.history_prompt.as_str()
    } else {
        ""
    };
    *first = false;
    let transcript = format!("{prompt}<history>\n{}\n</history>", group.lines.join("\n"));
    let mut parts = vec![Part::Text(transcript)];
    parts.extend(group.media);
    out.push(json!({"role": "user", "content": fmt.content(parts)}));
}
