//! What an application that embeds the service adds to its sessions'
//! agents: [`AgentRecipe`]s, applied to every session's agent or, by name,
//! to the agents whose record asks for one (`"recipe": "<name>"` in the
//! agent's data).
//!
//! A recipe is the operator's own code, running in the server process:
//! tools it adds (through [`ExtraTools`] or its own middleware) run on the
//! host, not in the tenant's workspace, and are trusted as the server is.
//! Tenants only choose which registered recipe their agent uses.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use oxiscope_agent::{AgentBuilder, AgentState, Middleware, ToolList};
use oxiscope_tool::Tool;
use oxiscope_workspace::Workspace;

use crate::error::{SessionError, SessionResult};
use crate::spec::AgentSpec;

/// The session an agent is being built for.
#[derive(Clone, Copy)]
pub struct RecipeContext<'a> {
    /// The session's owner.
    pub user_id: &'a str,
    /// The agent's id.
    pub agent_id: &'a str,
    /// The session's id.
    pub session_id: &'a str,
    /// The agent's stored data.
    pub agent: &'a AgentSpec,
    /// The session's workspace (its directory and execution backend).
    pub workspace: &'a Arc<dyn Workspace>,
}

impl fmt::Debug for RecipeContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecipeContext")
            .field("user_id", &self.user_id)
            .field("agent_id", &self.agent_id)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// Turns the service's agent for a session into the application's: adds
/// middleware (hooks, tools through [`Middleware::list_tools`]), changes
/// settings. Called each time a session's agent is built (once per run).
pub trait AgentRecipe: Send + Sync {
    /// The builder, with what this recipe adds.
    ///
    /// # Errors
    /// A refusal the run reports (a [`SessionError::Invalid`] for a
    /// session this recipe cannot serve, say).
    fn apply(
        &self,
        builder: AgentBuilder,
        session: &RecipeContext<'_>,
    ) -> SessionResult<AgentBuilder>;
}

impl<F> AgentRecipe for F
where
    F: Fn(AgentBuilder, &RecipeContext<'_>) -> SessionResult<AgentBuilder> + Send + Sync,
{
    fn apply(
        &self,
        builder: AgentBuilder,
        session: &RecipeContext<'_>,
    ) -> SessionResult<AgentBuilder> {
        self(builder, session)
    }
}

/// The recipes of a service: those every session's agent gets, in the
/// order they were added, and the named ones an agent's record chooses.
#[derive(Clone, Default)]
pub struct Recipes {
    every: Vec<Arc<dyn AgentRecipe>>,
    named: BTreeMap<String, Arc<dyn AgentRecipe>>,
}

impl fmt::Debug for Recipes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recipes")
            .field("every", &self.every.len())
            .field("named", &self.named.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Recipes {
    /// Adds `recipe` to every session's agent.
    #[must_use]
    pub fn every(mut self, recipe: impl AgentRecipe + 'static) -> Self {
        self.every.push(Arc::new(recipe));
        self
    }

    /// Registers `recipe` under `name`, for agents whose data says
    /// `"recipe": name` (a later registration under the same name
    /// replaces it).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>, recipe: impl AgentRecipe + 'static) -> Self {
        self.named.insert(name.into(), Arc::new(recipe));
        self
    }

    /// The registered names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.named.keys().map(String::as_str)
    }

    /// Whether there is nothing to apply.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.every.is_empty() && self.named.is_empty()
    }

    /// `builder` with every recipe for all agents, then the one the agent
    /// chose.
    ///
    /// # Errors
    /// [`SessionError::Invalid`] when the agent names a recipe this
    /// service does not have; a recipe's own refusal.
    pub fn apply(
        &self,
        mut builder: AgentBuilder,
        session: &RecipeContext<'_>,
    ) -> SessionResult<AgentBuilder> {
        for recipe in &self.every {
            builder = recipe.apply(builder, session)?;
        }
        if let Some(name) = &session.agent.recipe {
            let recipe = self.named.get(name).ok_or_else(|| {
                SessionError::Invalid(format!(
                    "The agent's recipe {name:?} is not one this server has (it has: {}).",
                    self.names().collect::<Vec<_>>().join(", ")
                ))
            })?;
            builder = recipe.apply(builder, session)?;
        }
        Ok(builder)
    }
}

/// A middleware that offers `tools` to the model, beside the workspace's.
#[derive(Clone)]
pub struct ExtraTools {
    tools: Vec<Arc<dyn Tool>>,
}

impl ExtraTools {
    /// Offers `tools`.
    #[must_use]
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self { tools }
    }
}

impl fmt::Debug for ExtraTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("ExtraTools").field("tools", &names).finish()
    }
}

impl Middleware for ExtraTools {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        tools.add_missing(&self.tools);
    }
}
