//! `ReplyBudgetControlMiddleware`: a weighted token budget per reply.

use oxiscope_message::AgentEvent;
use oxiscope_model::{ToolChoice, ToolChoiceMode};
use serde_json::{Map, Value};

use crate::middleware::{Middleware, ReasoningPrep};

/// Caps the weighted token cost of each reply.
///
/// Every model call of a reply (the reasoning steps and the summary calls
/// of context compression) costs
/// `input_token_weight * input_tokens + output_token_weight * output_tokens`,
/// taken from its `MODEL_CALL_END` usage. Once the reply's total reaches
/// `token_budget`, each further reasoning step first gets `prompt` as a hint
/// in the reply and runs with the tool choice `none`, so the model writes
/// its final answer instead of calling more tools. A tool the agent itself
/// forces (the submission of a required structured output) stays forced.
///
/// The instance holds no state: the running total lives in the agent
/// state's `middle_context`, under [`KEY`](Self::KEY) and then the reply
/// id, so it is saved with the state and carries over when a parked reply
/// resumes, in this process or another. It is removed when the reply ends;
/// totals of other replies are dropped when a reply records its first
/// usage. One instance can serve any number of agents.
///
/// ```
/// use oxiscope_agent::ReplyBudgetControlMiddleware;
///
/// let budget = ReplyBudgetControlMiddleware {
///     output_token_weight: 4.0,
///     ..ReplyBudgetControlMiddleware::new(20_000.0)
/// };
/// assert_eq!(budget.input_token_weight, 1.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyBudgetControlMiddleware {
    /// The weighted cost a reply may reach before it is asked to wrap up.
    pub token_budget: f64,
    /// The weight of a prompt token.
    pub input_token_weight: f64,
    /// The weight of a completion token (often set higher: they cost more).
    pub output_token_weight: f64,
    /// The hint added for the model once the budget is spent.
    pub prompt: String,
}

impl ReplyBudgetControlMiddleware {
    /// The key of the middleware's entry in `middle_context`.
    pub const KEY: &'static str = "ReplyBudgetControlMiddleware";

    /// The default hint: the budget is spent, answer now without tools.
    pub const DEFAULT_PROMPT: &'static str = "<system-reminder>The token budget the user set for \
        this reply is used up. Stop here: do not call any more tools, and give your final answer \
        now, based on what you have so far.</system-reminder>";

    /// A budget of `token_budget` with both weights 1 and the default hint.
    #[must_use]
    pub fn new(token_budget: f64) -> Self {
        Self {
            token_budget,
            input_token_weight: 1.0,
            output_token_weight: 1.0,
            prompt: Self::DEFAULT_PROMPT.to_owned(),
        }
    }

    /// The weighted cost the reply `reply_id` has used so far, as recorded
    /// in `middle_context` (0 when nothing is recorded).
    #[must_use]
    pub fn used(middle_context: &Map<String, Value>, reply_id: &str) -> f64 {
        middle_context
            .get(Self::KEY)
            .and_then(|entry| entry.get(reply_id))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    }

    fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        // Token counts fit an f64 exactly far beyond any real usage.
        #[allow(clippy::cast_precision_loss)]
        let (input, output) = (input_tokens as f64, output_tokens as f64);
        self.input_token_weight * input + self.output_token_weight * output
    }
}

impl ReplyBudgetControlMiddleware {
    /// Over budget: a hint, and no more tools.
    fn prepare(&self, step: &mut ReasoningPrep<'_>) {
        if Self::used(step.middle_context, step.reply_id) < self.token_budget {
            return;
        }
        let forced = step
            .tool_choice
            .as_ref()
            .is_some_and(|c| matches!(c.mode, ToolChoiceMode::Tool(_)));
        if forced {
            return;
        }
        step.hints.push(self.prompt.clone().into());
        step.tool_choice = Some(ToolChoice::none());
    }
}

impl Middleware for ReplyBudgetControlMiddleware {
    fn on_prepare_reasoning<'a>(
        &'a self,
        step: &'a mut ReasoningPrep<'_>,
    ) -> futures_util::future::BoxFuture<'a, ()> {
        self.prepare(step);
        Box::pin(std::future::ready(()))
    }

    fn on_event(&self, event: &AgentEvent, middle_context: &mut Map<String, Value>) {
        match event {
            AgentEvent::ModelCallEnd(end) => {
                let cost = self.cost(end.input_tokens, end.output_tokens);
                if !cost.is_finite() {
                    tracing::warn!(cost, "token budget: ignoring a cost that is not a number");
                    return;
                }
                let entry = middle_context
                    .entry(Self::KEY)
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    // Someone else's value under our key: start over.
                    *entry = Value::Object(Map::new());
                }
                if let Value::Object(replies) = entry {
                    let used = replies
                        .get(&end.reply_id)
                        .and_then(Value::as_f64)
                        .unwrap_or(0.0);
                    // Only one reply of a session runs (or waits) at a time.
                    replies.retain(|id, _| *id == end.reply_id);
                    replies.insert(end.reply_id.clone(), Value::from(used + cost));
                }
            }
            AgentEvent::ReplyEnd(end) => {
                let emptied = match middle_context.get_mut(Self::KEY) {
                    Some(Value::Object(replies)) => {
                        replies.remove(&end.reply_id);
                        replies.is_empty()
                    }
                    _ => false,
                };
                if emptied {
                    middle_context.remove(Self::KEY);
                }
            }
            _ => {}
        }
    }
}
