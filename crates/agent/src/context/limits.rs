//! Per-item limits: tool results above `tool_result_limit` tokens are cut,
//! and images beyond `max_image_num` leave the context.

use oxiscope_message::{
    ContentBlock, DataBlock, MediaBlock, Msg, RichContent, TextBlock, ToolResultBlock,
};
use oxiscope_model::TokenCounter;
use oxiscope_tool::Offloader;

/// The marker that ends a cut tool result.
const TRUNCATED: &str = "<<<TRUNCATED>>>";

fn marker(path: Option<&str>) -> String {
    let mut text = format!(
        "\n{TRUNCATED}\n<system-reminder>The remaining content has been omitted for limited \
         context."
    );
    if let Some(path) = path {
        text.push_str(&format!(
            " You can refer to the file in '{path}' for the truncated content if needed."
        ));
    }
    text.push_str("</system-reminder>");
    text
}

/// Cuts `result` to `limit` tokens when it is longer, offloading the full
/// result first when an offloader is set. Returns whether it was cut.
pub(crate) async fn limit_tool_result(
    result: &mut ToolResultBlock,
    limit: usize,
    counter: &dyn TokenCounter,
    offloader: Option<&dyn Offloader>,
    session_id: &str,
) -> bool {
    if counter.count_rich(&result.output) <= limit {
        return false;
    }
    let path = match offloader {
        Some(o) => match o.offload_tool_result(session_id, result).await {
            Ok(path) => Some(path),
            Err(e) => {
                tracing::warn!(error = %e, call = %result.id, "offloading a tool result failed");
                None
            }
        },
        None => None,
    };
    let end = marker(path.as_deref());
    result.output = match std::mem::replace(&mut result.output, RichContent::Text(String::new())) {
        RichContent::Text(t) => RichContent::Text(format!("{}{end}", cut_text(counter, &t, limit))),
        RichContent::Blocks(blocks) => {
            let mut kept = Vec::new();
            let mut budget = limit;
            for b in blocks {
                let cost = match &b {
                    MediaBlock::Text(t) => counter.count_text(&t.text),
                    MediaBlock::Data(_) => counter.data_block_tokens(),
                };
                if cost <= budget {
                    budget -= cost;
                    kept.push(b);
                    continue;
                }
                if let MediaBlock::Text(t) = &b {
                    let part = cut_text(counter, &t.text, budget);
                    if !part.is_empty() {
                        kept.push(MediaBlock::Text(TextBlock::new(part)));
                    }
                }
                break;
            }
            kept.push(MediaBlock::Text(TextBlock::new(end)));
            RichContent::Blocks(kept)
        }
    };
    true
}

/// The longest prefix of `text` within `budget` tokens (preferring to end
/// at a line break), found with a few counts, not a scan.
fn cut_text<'t>(counter: &dyn TokenCounter, text: &'t str, budget: usize) -> &'t str {
    let total = counter.count_text(text);
    if total <= budget {
        return text;
    }
    if budget == 0 {
        return "";
    }
    let mut end = floor_boundary(text, text.len() * budget / total.max(1));
    for _ in 0..64 {
        if counter.count_text(&text[..end]) <= budget {
            break;
        }
        end = floor_boundary(text, end * 9 / 10);
    }
    // End at a line break when one is close.
    if let Some(nl) = text[..end].rfind('\n')
        && nl >= end * 9 / 10
    {
        end = nl;
    }
    &text[..end]
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where an image sits in a message.
#[derive(Debug, Clone, Copy)]
enum Place {
    Block(usize),
    Inner(usize, usize),
}

fn is_image(d: &DataBlock) -> bool {
    d.source.media_type().starts_with("image/")
}

fn images(msg: &Msg) -> Vec<Place> {
    let mut out = Vec::new();
    for (i, block) in msg.content.iter().enumerate() {
        let inner = match block {
            ContentBlock::Data(d) if is_image(d) => {
                out.push(Place::Block(i));
                continue;
            }
            ContentBlock::ToolResult(r) => &r.output,
            ContentBlock::Hint(h) => &h.hint,
            _ => continue,
        };
        if let RichContent::Blocks(blocks) = inner {
            for (j, b) in blocks.iter().enumerate() {
                if matches!(b, MediaBlock::Data(d) if is_image(d)) {
                    out.push(Place::Inner(i, j));
                }
            }
        }
    }
    out
}

fn image_at(msg: &Msg, place: Place) -> Option<&DataBlock> {
    match place {
        Place::Block(i) => match msg.content.get(i)? {
            ContentBlock::Data(d) => Some(d),
            _ => None,
        },
        Place::Inner(i, j) => {
            let inner = match msg.content.get(i)? {
                ContentBlock::ToolResult(r) => &r.output,
                ContentBlock::Hint(h) => &h.hint,
                _ => return None,
            };
            match inner {
                RichContent::Blocks(blocks) => match blocks.get(j)? {
                    MediaBlock::Data(d) => Some(d),
                    MediaBlock::Text(_) => None,
                },
                RichContent::Text(_) => None,
            }
        }
    }
}

fn replace_at(msg: &mut Msg, place: Place, note: String) {
    match place {
        Place::Block(i) => {
            if let Some(b) = msg.content.get_mut(i) {
                *b = TextBlock::new(note).into();
            }
        }
        Place::Inner(i, j) => {
            let inner = match msg.content.get_mut(i) {
                Some(ContentBlock::ToolResult(r)) => &mut r.output,
                Some(ContentBlock::Hint(h)) => &mut h.hint,
                _ => return,
            };
            if let RichContent::Blocks(blocks) = inner
                && let Some(b) = blocks.get_mut(j)
            {
                *b = MediaBlock::Text(TextBlock::new(note));
            }
        }
    }
}

/// Keeps the newest `max` images of the context; older ones are replaced by
/// a note (offloaded first when an offloader is set). Returns how many were
/// removed.
pub(crate) async fn limit_images(
    context: &mut [Msg],
    max: usize,
    offloader: Option<&dyn Offloader>,
    session_id: &str,
) -> usize {
    let places: Vec<(usize, Place)> = context
        .iter()
        .enumerate()
        .flat_map(|(m, msg)| images(msg).into_iter().map(move |p| (m, p)))
        .collect();
    let excess = places.len().saturating_sub(max);
    for &(m, place) in &places[..excess] {
        let path = match (offloader, image_at(&context[m], place)) {
            (Some(o), Some(image)) => match o.offload_data_block(session_id, image).await {
                Ok(path) => Some(path),
                Err(e) => {
                    tracing::warn!(error = %e, "offloading an image failed");
                    None
                }
            },
            _ => None,
        };
        let note = match path {
            Some(path) => format!(
                "<system-reminder>An older image was removed from the context (at most {max} \
                 images are kept). It was saved to '{path}'; read that file to see it again.\
                 </system-reminder>"
            ),
            None => format!(
                "<system-reminder>An older image was removed from the context (at most {max} \
                 images are kept).</system-reminder>"
            ),
        };
        replace_at(&mut context[m], place, note);
    }
    excess
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxiscope_message::{Base64Source, DataSource, Role, ToolResultState};
    use oxiscope_model::ApproxCounter;

    fn image(tag: &str) -> DataBlock {
        DataBlock::new(DataSource::Base64(Base64Source {
            data: tag.to_owned(),
            media_type: "image/png".to_owned(),
        }))
    }

    #[tokio::test]
    async fn a_long_result_is_cut_within_the_limit_with_the_marker() {
        let counter = ApproxCounter::new();
        let text = "line of output\n".repeat(2_000);
        let mut r = ToolResultBlock::new("c1", "Bash", text.clone(), ToolResultState::Success);
        assert!(limit_tool_result(&mut r, 100, &counter, None, "s").await);
        let out = r.output.text("");
        assert!(
            out.ends_with("omitted for limited context.</system-reminder>"),
            "{out}"
        );
        let kept = out.split("\n<<<TRUNCATED>>>").next().unwrap();
        assert!(text.starts_with(kept));
        assert!(counter.count_text(kept) <= 100);
        assert!(counter.count_text(kept) > 80, "cut far too much");
        // A short result is left alone.
        let mut short = ToolResultBlock::new("c2", "Bash", "ok", ToolResultState::Success);
        assert!(!limit_tool_result(&mut short, 100, &counter, None, "s").await);
        assert_eq!(short.output.text(""), "ok");
    }

    #[tokio::test]
    async fn only_the_newest_images_stay() {
        let mut user = Msg::from_text("u", Role::User, "look");
        for i in 0..3 {
            user.content.push(image(&format!("aW1n{i}")).into());
        }
        let mut reply = Msg::reply("a", "r");
        let result = ToolResultBlock::new(
            "c",
            "Read",
            RichContent::Blocks(vec![MediaBlock::Data(image("bGFzdA=="))]),
            ToolResultState::Success,
        );
        reply.content.push(result.into());
        let mut context = vec![user, reply];
        assert_eq!(limit_images(&mut context, 2, None, "s").await, 2);
        let left: usize = context.iter().map(|m| images(m).len()).sum();
        assert_eq!(left, 2);
        // The two oldest (first two of the user message) became notes.
        assert!(
            matches!(&context[0].content[1], ContentBlock::Text(t) if t.text.contains("removed"))
        );
        assert!(matches!(&context[0].content[3], ContentBlock::Data(_)));
        assert_eq!(limit_images(&mut context, 0, None, "s").await, 2);
    }
}
