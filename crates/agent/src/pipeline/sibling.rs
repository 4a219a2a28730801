//! Agents made from another one, for pipelines whose agents share a model,
//! tools and working place but not a conversation.

use std::sync::Arc;

use tokio::sync::Mutex;

use crate::agent::Inner;
use crate::context::tokens::{CounterSource, TokenLedger};
use crate::{Agent, AgentState};

impl Agent {
    /// A new agent called `name` with `system_prompt` that shares this
    /// one's model, fallback model, toolkit, configs, working directory,
    /// execution backend, offloader and middlewares, and starts with an
    /// empty conversation under a copy of this agent's permission context
    /// (mode and rules). Its token counter is the model's built-in one.
    #[must_use]
    pub fn sibling(&self, name: impl Into<String>, system_prompt: impl Into<Arc<str>>) -> Agent {
        let me = &self.inner;
        let permissions = me
            .state
            .try_lock()
            .map(|s| s.permission_context.clone())
            .unwrap_or_default();
        let state = AgentState {
            permission_context: permissions,
            ..AgentState::default()
        };
        let source = CounterSource::Builtin(me.model.model_name().to_owned());
        Agent {
            inner: Arc::new(Inner {
                name: name.into(),
                system_prompt: system_prompt.into(),
                model: Arc::clone(&me.model),
                fallback_model: me.fallback_model.clone(),
                toolkit: Arc::clone(&me.toolkit),
                react: Arc::clone(&me.react),
                injection: Arc::clone(&me.injection),
                model_config: me.model_config.clone(),
                reply_limits: me.reply_limits,
                context: Arc::clone(&me.context),
                context_size: me.context_size.clone(),
                offloader: me.offloader.clone(),
                workdir: me.workdir.clone(),
                backend: Arc::clone(&me.backend),
                middlewares: me.middlewares.clone(),
                state: Mutex::new(state),
                ledger: Mutex::new(TokenLedger::new(source)),
            }),
        }
    }
}
