//! Compression: older messages are summarised into the five-field
//! structured summary (or, when no summary can be made, dropped with a
//! note), recent ones are kept.

use std::collections::HashSet;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use oxiscope_message::{ContentBlock, Msg, RichContent, Role};
use oxiscope_model::{
    ChatUsage, REPLY_PRIMING, StructuredError, StructuredOptions, ToolSchema,
    generate_structured_output,
};
use oxiscope_tool::Offloader;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::tokens::TokenLedger;
use crate::config::ContextConfig;
use crate::error::ContextError;
use crate::middleware::Middleware;

/// How many times a summary is attempted (each attempt also tries the
/// fallback model, and repairs an invalid answer once) before giving up.
pub(crate) const SUMMARY_ATTEMPTS: usize = 3;

/// A compression about to run, as middleware sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressRequest {
    /// The config in force (the agent's, or a one-off); shared, so
    /// rewrite it with `Arc::make_mut`.
    pub config: Arc<ContextConfig>,
    /// Extra instructions for the summary.
    pub instructions: Option<String>,
    /// Compress only above this share of the context size (the trigger
    /// ratio; for the `CompressContext` tool, the start of the buffer).
    pub ratio: f64,
}

/// What a compression did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompressOutcome {
    /// Whether anything left the context.
    pub compressed: bool,
    /// Messages compressed (a message split at a tool-call boundary counts
    /// as one).
    pub messages: usize,
    /// Prompt tokens before (an upper bound when far below the threshold).
    pub tokens_before: usize,
    /// Prompt tokens after.
    pub tokens_after: usize,
    /// The threshold in tokens.
    pub threshold: usize,
    /// The summary could not be made: the old messages were dropped with a
    /// note instead, for this reason.
    pub truncated: Option<String>,
    /// Where the compressed messages were offloaded.
    pub offloaded: Option<String>,
    /// The tokens the summary calls used.
    pub usage: Option<ChatUsage>,
}

/// The rest of the compression onion: the inner middlewares, then the
/// compression itself.
pub struct CompressNext<'a> {
    rest: &'a [Arc<dyn Middleware>],
    job: &'a mut Compressor<'a>,
}

impl std::fmt::Debug for CompressNext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressNext")
            .field("layers", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl<'a> CompressNext<'a> {
    pub(crate) fn new(rest: &'a [Arc<dyn Middleware>], job: &'a mut Compressor<'a>) -> Self {
        Self { rest, job }
    }

    /// Runs the inner layers with `request`.
    ///
    /// # Errors
    /// See [`ContextError`].
    pub fn run(
        self,
        request: CompressRequest,
    ) -> BoxFuture<'a, Result<CompressOutcome, ContextError>> {
        match self.rest.split_first() {
            Some((first, rest)) => first.on_compress_context(
                request,
                CompressNext {
                    rest,
                    job: self.job,
                },
            ),
            None => Box::pin(self.job.compress(request)),
        }
    }
}

/// One compression's working data: the context and summary it may change,
/// and what it needs to count and summarise.
pub(crate) struct Compressor<'a> {
    pub(crate) context: &'a mut Vec<Msg>,
    pub(crate) summary: &'a mut RichContent,
    pub(crate) ledger: &'a mut TokenLedger,
    pub(crate) system: &'a Msg,
    pub(crate) tools: &'a [ToolSchema],
    /// The model, then the fallback, each through `on_model_call`.
    pub(crate) models: Vec<crate::middleware::ThroughMiddleware<'a>>,
    pub(crate) offloader: Option<&'a dyn Offloader>,
    pub(crate) session_id: &'a str,
    pub(crate) context_size: u64,
    /// Below this many tokens a byte bound is enough; above it the prompt
    /// is counted exactly (the context-usage hint needs the real count).
    pub(crate) exact_above: usize,
    pub(crate) cancel: CancellationToken,
}

/// Where the context is cut: everything before message `msg`, and the
/// blocks of `msg` before `block`, are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cut {
    pub(crate) msg: usize,
    pub(crate) block: usize,
}

impl Compressor<'_> {
    /// The prompt's tokens: system prompt, summary, context, tools.
    pub(crate) fn total(&mut self, below: Option<usize>) -> usize {
        let summary: Vec<Msg> = summary_msg(self.summary).into_iter().collect();
        let parts: [&[Msg]; 3] = [std::slice::from_ref(self.system), &summary, self.context];
        self.ledger.prompt(&parts, self.tools, below)
    }

    async fn compress(&mut self, req: CompressRequest) -> Result<CompressOutcome, ContextError> {
        let size = self.context_size as f64;
        let threshold = (req.ratio.clamp(0.0, 1.0) * size) as usize;
        let before = self.total(Some(threshold.min(self.exact_above)));
        let mut outcome = CompressOutcome {
            tokens_before: before,
            tokens_after: before,
            threshold,
            ..CompressOutcome::default()
        };
        if before <= threshold {
            return Ok(outcome);
        }
        let fixed =
            self.ledger.message(self.system) + self.ledger.tools(self.tools) + REPLY_PRIMING;
        if fixed > threshold {
            return Err(ContextError::SystemPromptTooLarge {
                tokens: fixed,
                threshold,
            });
        }
        let reserve = (req.config.reserve_ratio * size) as usize;
        let Some(cut) = plan_cut(self.ledger, self.context, reserve) else {
            return Ok(outcome);
        };
        let old = compressed_part(self.context, cut);
        let (result, usage) = self.summarise(&old, &req).await;
        outcome.usage = usage;
        let fields = match result {
            Ok(fields) => Some(fields),
            // Interrupted: nothing changes (the reply ends as interrupted).
            Err(Failure::Interrupted) => return Ok(outcome),
            Err(Failure::Failed(reason)) if req.config.compression_fallback_to_truncation => {
                tracing::warn!(%reason, "no summary could be made; dropping the oldest messages");
                outcome.truncated = Some(reason);
                None
            }
            Err(Failure::Failed(reason)) => {
                return Err(ContextError::SummaryFailed {
                    attempts: SUMMARY_ATTEMPTS,
                    reason,
                    usage: outcome.usage.map(Box::new),
                });
            }
        };
        if let Some(offloader) = self.offloader {
            match offloader.offload_context(self.session_id, &old).await {
                Ok(path) => outcome.offloaded = Some(path),
                Err(e) => tracing::warn!(error = %e, "offloading the compressed messages failed"),
            }
        }
        let mut text = match &fields {
            Some(fields) => render_summary(&req.config.summary_template, fields),
            None => {
                let previous = self.summary.text("\n");
                let note = "<system-info>Older parts of this conversation were removed to stay \
                            within the context window; no summary of them could be made.\
                            </system-info>";
                if previous.is_empty() {
                    note.to_owned()
                } else if previous.contains(note) {
                    previous
                } else {
                    format!("{previous}\n\n{note}")
                }
            }
        };
        if let Some(path) = &outcome.offloaded {
            text.push_str(&format!(
                "\n<system-info>The full text of the summarised messages is in '{path}' (one \
                 JSON message per line); read it when a detail is needed.</system-info>"
            ));
        }
        *self.summary = RichContent::Text(text);
        apply_cut(self.context, cut);
        self.ledger.retain(self.context);
        outcome.compressed = true;
        outcome.messages = old.len();
        outcome.tokens_after = self.total(None);
        if outcome.tokens_after > threshold {
            tracing::warn!(
                tokens = outcome.tokens_after,
                threshold,
                "the context is still above the threshold after compression"
            );
        }
        Ok(outcome)
    }

    /// Asks for the summary of `old`; the usage of every attempt is summed.
    async fn summarise(
        &self,
        old: &[Msg],
        req: &CompressRequest,
    ) -> (Result<Map<String, Value>, Failure>, Option<ChatUsage>) {
        let mut input = Vec::with_capacity(old.len() + 3);
        input.push(self.system.clone());
        input.extend(summary_msg(self.summary));
        input.extend(old.iter().cloned());
        let now = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S UTC")
            .to_string();
        let mut prompt = req
            .config
            .compression_prompt
            .replace("{current_time}", &now);
        if let Some(extra) = &req.instructions {
            prompt.push_str("\n\n");
            prompt.push_str(extra);
        }
        input.push(Msg::from_text("user", Role::User, prompt));
        let mut usage: Option<ChatUsage> = None;
        let mut last = String::from("no model to summarise with");
        for _ in 0..SUMMARY_ATTEMPTS {
            for model in &self.models {
                let options = StructuredOptions::default()
                    .with_max_retries(1)
                    .with_cancel(self.cancel.clone());
                match generate_structured_output(model, &input, &req.config.summary_schema, options)
                    .await
                {
                    Ok(out) => {
                        add_usage(&mut usage, &out.usage);
                        return (Ok(out.value), usage);
                    }
                    Err(e) => {
                        if let Some(u) = e.usage() {
                            add_usage(&mut usage, u);
                        }
                        last = e.to_string();
                        if matches!(e, StructuredError::Interrupted { .. })
                            || self.cancel.is_cancelled()
                        {
                            return (Err(Failure::Interrupted), usage);
                        }
                        if matches!(e, StructuredError::InvalidSchema { .. }) {
                            return (Err(Failure::Failed(last)), usage);
                        }
                    }
                }
            }
        }
        (Err(Failure::Failed(last)), usage)
    }
}

/// Why no summary was made.
#[derive(Debug)]
enum Failure {
    /// The reply was interrupted meanwhile.
    Interrupted,
    /// Every attempt failed; the last reason.
    Failed(String),
}

fn add_usage(total: &mut Option<ChatUsage>, u: &ChatUsage) {
    let t = total.get_or_insert_with(|| ChatUsage::tokens(0, 0));
    t.input_tokens += u.input_tokens;
    t.output_tokens += u.output_tokens;
    t.cache_input_tokens += u.cache_input_tokens;
    t.cache_creation_input_tokens += u.cache_creation_input_tokens;
    t.time += u.time;
}

/// The summary as the user message the model sees after the system prompt.
pub(crate) fn summary_msg(summary: &RichContent) -> Option<Msg> {
    let text = summary.text("\n");
    if text.is_empty() {
        return None;
    }
    // An id of its text: cached counts and formatting last while it stays.
    let id = super::text_id(SUMMARY_ID, &text);
    let mut msg = Msg::from_text("user", Role::User, text);
    msg.id = id.into();
    Some(msg)
}

/// The id of the summary message.
pub(crate) const SUMMARY_ID: &str = "context-summary";

/// Fills `{field}` placeholders with the summary's fields.
fn render_summary(template: &str, fields: &Map<String, Value>) -> String {
    let mut out = template.to_owned();
    for (key, value) in fields {
        let text = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        out = out.replace(&format!("{{{key}}}"), &text);
    }
    out
}

/// Chooses the cut that keeps the newest messages within `reserve` tokens,
/// never separating a tool call from its result. `None` when nothing would
/// be compressed.
pub(crate) fn plan_cut(ledger: &mut TokenLedger, context: &[Msg], reserve: usize) -> Option<Cut> {
    let mut kept = 0usize;
    let last = context.len().checked_sub(1)?;
    for i in (0..context.len()).rev() {
        let n = ledger.message(&context[i]);
        if kept + n <= reserve {
            kept += n;
            continue;
        }
        // This message does not fit whole: keep its newest blocks that do,
        // starting at a boundary no tool call / result pair crosses.
        let msg = &context[i];
        let budget = reserve.saturating_sub(kept);
        let block = inner_cut(ledger, msg, budget);
        let cut = if block == msg.content.len() && i != last {
            // The whole message goes (its calls all have results).
            Cut {
                msg: i + 1,
                block: 0,
            }
        } else {
            Cut { msg: i, block }
        };
        return (cut.msg > 0 || cut.block > 0).then_some(cut);
    }
    None
}

/// The first block of `msg` to keep: the smallest valid boundary whose
/// suffix fits `budget`; when none fits, the largest valid boundary (so
/// calls still waiting for their results always stay).
fn inner_cut(ledger: &mut TokenLedger, msg: &Msg, budget: usize) -> usize {
    let len = msg.content.len();
    let valid = boundaries(msg);
    // `valid[0]` is always true: keeping the whole message is always valid.
    let mut best = valid.iter().rposition(|v| *v).unwrap_or(0);
    let counter = Arc::clone(ledger.counter());
    let mut shell = Msg::from_text(msg.name.clone(), msg.role, "");
    shell.content.clear();
    let base = counter.count_message(&shell);
    let mut used = base;
    for b in (0..len).rev() {
        shell.content.clear();
        shell.content.push(msg.content[b].clone());
        used += counter.count_message(&shell).saturating_sub(base);
        if used > budget {
            break;
        }
        if valid[b] {
            best = b;
        }
    }
    best
}

/// `valid[b]`: cutting before block `b` separates no tool call from its
/// result, leaves no call without a result on the compressed side, and does
/// not separate a thinking block from what the model said after it
/// (providers with extended thinking want a turn's thinking kept with its
/// tool calls).
fn boundaries(msg: &Msg) -> Vec<bool> {
    let len = msg.content.len();
    let mut valid = vec![false; len + 1];
    let mut open: HashSet<&str> = HashSet::new();
    let results = crate::state::answered_ids(msg);
    let mut unanswered = false;
    for (b, block) in msg.content.iter().enumerate() {
        let after_thinking = b > 0 && matches!(msg.content[b - 1], ContentBlock::Thinking(_));
        valid[b] = open.is_empty() && !unanswered && !after_thinking;
        match block {
            ContentBlock::ToolCall(c) => {
                if results.contains(c.id.as_str()) {
                    open.insert(c.id.as_str());
                } else {
                    unanswered = true;
                }
            }
            ContentBlock::ToolResult(r) => {
                open.remove(r.id.as_str());
            }
            _ => {}
        }
    }
    valid[len] = open.is_empty() && !unanswered;
    valid
}

/// Copies of what the cut compresses (a split message keeps its id).
pub(crate) fn compressed_part(context: &[Msg], cut: Cut) -> Vec<Msg> {
    let mut old: Vec<Msg> = context[..cut.msg].to_vec();
    if cut.block > 0
        && let Some(m) = context.get(cut.msg)
    {
        let mut part = Msg::from_text(m.name.clone(), m.role, "");
        part.id.clone_from(&m.id);
        part.created_at.clone_from(&m.created_at);
        part.content = m.content[..cut.block].to_vec();
        old.push(part);
    }
    old
}

/// Removes what the cut compresses.
pub(crate) fn apply_cut(context: &mut Vec<Msg>, cut: Cut) {
    context.drain(..cut.msg);
    if cut.block > 0
        && let Some(m) = context.first_mut()
    {
        m.content.drain(..cut.block.min(m.content.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::tokens::CounterSource;
    use oxiscope_message::{
        TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, ToolResultState,
    };
    use oxiscope_model::ApproxCounter;

    fn ledger() -> TokenLedger {
        TokenLedger::new(CounterSource::Custom(Arc::new(ApproxCounter::new())))
    }

    fn round(msg: &mut Msg, id: &str, output: &str) {
        msg.content
            .push(ToolCallBlock::new(id, "dump", "{}").into());
        msg.content
            .push(ToolResultBlock::new(id, "dump", output, ToolResultState::Success).into());
    }

    #[test]
    fn no_cut_separates_thinking_from_what_follows_or_a_call_from_its_result() {
        let mut m = Msg::reply("a", "r");
        m.content.push(ThinkingBlock::new("hmm").into());
        round(&mut m, "c1", "out");
        m.content.push(TextBlock::new("so").into());
        let valid = boundaries(&m);
        // [thinking | call | result | text]
        assert_eq!(valid, [true, false, false, true, true]);
    }

    #[test]
    fn when_nothing_fits_waiting_calls_still_stay() {
        let mut m = Msg::reply("a", "r");
        round(&mut m, "c1", &"x".repeat(4_000));
        m.content
            .push(ToolCallBlock::new("c2", "dump", "{}").into());
        let mut l = ledger();
        let user = Msg::from_text("u", oxiscope_message::Role::User, "go");
        let context = vec![user, m];
        // A reserve of zero keeps nothing that can go, but `c2` waits.
        let cut = plan_cut(&mut l, &context, 0).unwrap();
        assert_eq!(cut, Cut { msg: 1, block: 2 });
        let mut after = context.clone();
        apply_cut(&mut after, cut);
        assert_eq!(after.len(), 1);
        assert_eq!(after[0].tool_calls().count(), 1);
        let old = compressed_part(&context, cut);
        assert_eq!(old.len(), 2);
        assert_eq!(old[1].tool_results().count(), 1);
    }

    #[test]
    fn a_finished_older_message_goes_whole() {
        let mut m = Msg::reply("a", "r1");
        round(&mut m, "c1", &"x".repeat(4_000));
        let last = Msg::from_text("u", oxiscope_message::Role::User, "next question");
        let context = vec![m, last];
        let cut = plan_cut(&mut ledger(), &context, 50).unwrap();
        assert_eq!(cut, Cut { msg: 1, block: 0 });
    }
}
