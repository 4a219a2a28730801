//! [`Models`]: where an evaluation's agents and judges get their models.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use oxiscope_model::DynChatModel;

use super::EvalError;
use super::suite::ModelSpec;

/// Whose model is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelRole {
    /// The agent under evaluation.
    Agent,
    /// A judge grader.
    Judge,
}

/// A model asked for: whose, for which run, and what the suite says of it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// Whose model.
    pub role: ModelRole,
    /// The task's id.
    pub task: &'a str,
    /// The run's number, from 0.
    pub run: usize,
    /// The suite's model for it (the agent's, or the suite's judge).
    pub spec: Option<&'a ModelSpec>,
}

impl<'a> ModelRequest<'a> {
    /// A request for `role`'s model in run `run` of `task`.
    #[must_use]
    pub fn new(role: ModelRole, task: &'a str, run: usize, spec: Option<&'a ModelSpec>) -> Self {
        Self {
            role,
            task,
            run,
            spec,
        }
    }
}

type Factory = dyn Fn(&ModelRequest<'_>) -> Result<Arc<dyn DynChatModel>, EvalError> + Send + Sync;

/// Gives each run its models: [`Models::from_config`] builds them from the
/// suite's model settings and the environment; [`Models::new`] takes any
/// function (a test gives each run a scripted model).
#[derive(Clone)]
pub struct Models(Arc<Factory>);

impl fmt::Debug for Models {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Models(..)")
    }
}

impl Models {
    /// Models given by `factory`.
    pub fn new(
        factory: impl Fn(&ModelRequest<'_>) -> Result<Arc<dyn DynChatModel>, EvalError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self(Arc::new(factory))
    }

    /// Models built from each request's [`ModelSpec`] over the environment,
    /// as [`crate::chat_model_from_env`] reads it (a spec's provider,
    /// model and endpoint win); one model per spec, shared by its runs.
    #[must_use]
    pub fn from_config() -> Self {
        let built: Mutex<HashMap<String, Arc<dyn DynChatModel>>> = Mutex::default();
        Self::new(move |request| {
            let key = serde_json::to_string(&request.spec).unwrap_or_default();
            let mut built = built.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(model) = built.get(&key) {
                return Ok(Arc::clone(model));
            }
            let model = model_from_spec(request.spec)?;
            built.insert(key, Arc::clone(&model));
            Ok(model)
        })
    }

    /// The model `request` asks for.
    ///
    /// # Errors
    /// What the factory says: the model cannot be set up.
    pub fn model(&self, request: &ModelRequest<'_>) -> Result<Arc<dyn DynChatModel>, EvalError> {
        (self.0)(request)
    }
}

/// The model `spec` names, the environment filling in what it leaves out.
///
/// # Errors
/// [`EvalError::Model`]: no provider, an unknown one, or settings it
/// refuses.
pub fn model_from_spec(spec: Option<&ModelSpec>) -> Result<Arc<dyn DynChatModel>, EvalError> {
    let spec = spec.cloned().unwrap_or_default();
    let env = |name: &str| -> Option<String> {
        let given = match name {
            "OXISCOPE_PROVIDER" => spec.provider.clone(),
            "OXISCOPE_MODEL" => spec.model.clone(),
            "OXISCOPE_BASE_URL" => spec.base_url.clone(),
            "OXISCOPE_API_KEY" => spec
                .api_key_env
                .as_deref()
                .and_then(|var| std::env::var(var).ok()),
            _ => None,
        };
        given.or_else(|| std::env::var(name).ok())
    };
    crate::chat_model_from_vars(&env).map_err(EvalError::Model)
}
