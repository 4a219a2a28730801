//! Session names: a new session without one is named after its creation
//! time, and (while `config.naming.auto` is on) renamed once, after its
//! first reply is stored, with a short title for its opening message —
//! from the session's own model, or an excerpt of the message when that
//! fails. The rename is announced on the session's stream with a `CUSTOM`
//! event named `session_updated`.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_agent::AgentState;
use oxiscope_message::{AgentEvent, ContentBlock, CustomEvent, Msg, Role};
use oxiscope_model::{ChatRequest, DynChatModel};
use serde_json::Map;
use tokio_util::sync::CancellationToken;

use crate::Engine;
use crate::to_python_json;

/// The longest title kept, in characters (so at most 240 bytes, and an
/// ellipsis).
const MAX_TITLE_CHARS: usize = 60;

/// The most of the title call's answer read, in bytes: the rest of the
/// stream is dropped unread (which stops the call), however much the
/// model would send.
const MAX_TITLE_ANSWER_BYTES: usize = 1024;

/// How long the title call may take before the excerpt is used.
const TITLE_TIMEOUT: Duration = Duration::from_secs(20);

/// Where automatic session titles come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionTitles {
    /// The session's own model writes a short title; an excerpt of the
    /// opening message when the call fails.
    #[default]
    Model,
    /// An excerpt of the opening message, without a model call.
    Excerpt,
}

/// The name of a session created without one: its creation time.
pub fn default_name() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

/// What renaming a session needs: whose it is and the model to ask.
#[derive(Debug, Clone)]
pub struct Namer {
    /// The session's owner.
    pub user_id: String,
    /// The model that proposes titles.
    pub model: Arc<dyn DynChatModel>,
}

/// The text of the conversation's opening user message, if it has any.
pub fn opening_text(state: &AgentState) -> Option<String> {
    state
        .context
        .iter()
        .find(|m| m.role == Role::User)
        .map(|m| m.text("\n"))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// Names the session after `opening` unless its name was settled in the
/// meantime, then announces it. Failures are logged, never surfaced.
pub async fn rename(state: Engine, namer: Namer, session_id: String, opening: String) {
    let title = match state.config().session_titles {
        SessionTitles::Model => match model_title(&*namer.model, &opening).await {
            Some(title) => title,
            None => excerpt(&opening),
        },
        SessionTitles::Excerpt => excerpt(&opening),
    };
    // One conditional update: the user may have renamed the session while
    // the title was written, or changed another setting meanwhile.
    match state
        .storage()
        .name_session_if_auto(&namer.user_id, &session_id, &title)
        .await
    {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tracing::warn!(session_id, error = %e, "naming the session: storing the name failed");
            return;
        }
    }
    let mut value = Map::new();
    value.insert("session_id".into(), session_id.clone().into());
    value.insert("name".into(), title.into());
    let event = AgentEvent::from(CustomEvent::new("session_updated".to_owned(), value));
    match to_python_json(&event) {
        Ok(payload) => {
            let limit = state.config().replay_limit;
            if let Err(e) = state
                .bus()
                .publish(&session_id, payload.into(), limit)
                .await
            {
                tracing::warn!(session_id, error = %e, "announcing the session's name failed");
            }
        }
        Err(e) => tracing::warn!(session_id, error = %e, "serialising session_updated failed"),
    }
}

/// Asks `model` for a title; `None` when the call fails, times out or
/// answers nothing usable.
async fn model_title(model: &dyn DynChatModel, opening: &str) -> Option<String> {
    let question: String = opening.chars().take(2000).collect();
    let messages = [
        Msg::system(
            "system",
            "Write a title of at most six words for a conversation that opens with the user's \
             message. Answer with the title only: no quotes, no punctuation at the end.",
        )
        .ok()?,
        Msg::user("user", question).ok()?,
    ];
    let request = ChatRequest {
        messages: &messages,
        tools: &[],
        tool_choice: None,
    };
    let call = async {
        let mut stream = model
            .call_boxed(request, CancellationToken::new())
            .await
            .ok()?;
        let mut text = String::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.ok()?;
            // Deltas carry the answer as it comes; the last chunk repeats
            // all of it, and is read only when no delta came.
            if chunk.is_last && !text.is_empty() {
                break;
            }
            for block in &chunk.content {
                if let ContentBlock::Text(t) = block {
                    push_within(&mut text, &t.text, MAX_TITLE_ANSWER_BYTES);
                }
            }
            // The title is the first line: once it ended, or the answer
            // is long enough, nothing more is needed.
            let first_line_done = text.trim_start().contains('\n');
            if chunk.is_last || first_line_done || text.len() >= MAX_TITLE_ANSWER_BYTES {
                break;
            }
        }
        Some(text)
    };
    let text = tokio::time::timeout(TITLE_TIMEOUT, call).await.ok()??;
    let title = clean(&text);
    (!title.is_empty()).then_some(title)
}

/// A title from the message itself: its first line, shortened.
fn excerpt(opening: &str) -> String {
    let title = clean(opening);
    if title.is_empty() {
        default_name()
    } else {
        title
    }
}

/// Appends `piece` to `text` up to `max` bytes in all, cut at a character
/// boundary.
fn push_within(text: &mut String, piece: &str, max: usize) {
    let room = max.saturating_sub(text.len());
    let mut end = room.min(piece.len());
    while !piece.is_char_boundary(end) {
        end -= 1;
    }
    text.push_str(&piece[..end]);
}

/// Whether `c` must not reach a title: control characters (C0, DEL, C1,
/// which a terminal may act on) and the invisible formatting characters
/// that reorder or hide text (bidirectional embeddings, overrides,
/// isolates and marks, zero-width spaces, line and paragraph separators,
/// the byte-order mark, interlinear annotations).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// `line` without unsafe characters (white space among them becomes a
/// space), with runs of white space made one space.
fn sanitize(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut space = false;
    for c in line.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if is_unsafe(c) {
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// One line, no surrounding quotes or spaces, no control or bidirectional
/// formatting characters, at most [`MAX_TITLE_CHARS`] characters (cut at
/// a word when one ends near the limit).
fn clean(text: &str) -> String {
    let line = text
        .lines()
        .map(sanitize)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let trimmed = line
        .trim()
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c == '*' || c == '#')
        .trim();
    if trimmed.chars().count() <= MAX_TITLE_CHARS {
        return trimmed.to_owned();
    }
    let cut: String = trimmed.chars().take(MAX_TITLE_CHARS).collect();
    let at_word = match cut.rfind(char::is_whitespace) {
        Some(i) if i > MAX_TITLE_CHARS / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", at_word.trim_end())
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn an_excerpt_is_the_first_line_cut_at_a_word() {
        assert_eq!(
            excerpt("\n  How do I list files?\nmore"),
            "How do I list files?"
        );
        let long = "Please explain in great detail how the borrow checker decides lifetimes here";
        let title = excerpt(long);
        assert!(title.ends_with('…'), "{title}");
        assert!(title.chars().count() <= MAX_TITLE_CHARS + 1, "{title}");
        assert!(long.starts_with(title.trim_end_matches('…')), "{title}");
    }

    #[test]
    fn a_model_title_loses_quotes_and_extra_lines() {
        assert_eq!(clean("\"Listing files\"\nexplanation"), "Listing files");
        assert_eq!(clean("**Rust lifetimes**"), "Rust lifetimes");
    }

    #[test]
    fn titles_lose_control_and_bidirectional_formatting_characters() {
        assert_eq!(
            clean("\u{1b}[2J\u{1b}]0;pwned\u{7}Deploy\tplan\u{0085}now"),
            "[2J]0;pwnedDeploy plan now"
        );
        assert_eq!(
            clean("invoice\u{202E}fdp.exe\u{2066}x\u{2069}\u{200F}\u{FEFF}"),
            "invoicefdp.exex"
        );
        assert_eq!(excerpt("\u{1}\u{2}\n\u{202D}Real title"), "Real title");
        assert_eq!(clean("caf\u{e9} \u{1F600}  ok"), "caf\u{e9} \u{1F600} ok");
        let title = excerpt(&"\u{9b}".repeat(10_000));
        assert!(!title.chars().any(is_unsafe), "{title:?}");
    }

    #[test]
    fn a_title_is_at_most_sixty_characters_whatever_their_width() {
        let title = clean(&"\u{1F600}".repeat(1000));
        assert!(title.chars().count() <= MAX_TITLE_CHARS + 1, "{title}");
        assert!(
            title.len() <= 4 * MAX_TITLE_CHARS + 3,
            "{} bytes",
            title.len()
        );
    }

    #[test]
    fn the_answer_read_for_a_title_stops_at_its_byte_limit() {
        let mut text = String::new();
        push_within(&mut text, &"\u{e9}".repeat(1000), 11);
        assert_eq!(text, "\u{e9}".repeat(5));
        push_within(&mut text, "more", 11);
        assert_eq!(text.len(), 11);
        push_within(&mut text, "more", 11);
        assert_eq!(text.len(), 11);
    }

    #[test]
    fn the_default_name_is_the_creation_time() {
        let name = default_name();
        assert!(
            chrono::NaiveDateTime::parse_from_str(&name, "%Y-%m-%d %H:%M:%S").is_ok(),
            "{name}"
        );
    }
}
