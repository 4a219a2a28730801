//! Tools from typed Rust functions: [`FunctionTool`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oxiscope_message::{MediaBlock, PermissionBehavior, ToolResultState};
use oxiscope_permission::{PermissionContext, PermissionDecision};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::chunk::ToolChunk;
use crate::tool::{Tool, ToolCallContext, ToolFlags, ToolStream, once_future};

/// What a function tool may return: anything that becomes a final chunk.
pub trait IntoToolChunk {
    /// The final chunk.
    fn into_tool_chunk(self) -> ToolChunk;
}

impl IntoToolChunk for ToolChunk {
    fn into_tool_chunk(self) -> ToolChunk {
        self
    }
}

impl IntoToolChunk for String {
    fn into_tool_chunk(self) -> ToolChunk {
        ToolChunk::text(self)
    }
}

impl IntoToolChunk for &'static str {
    fn into_tool_chunk(self) -> ToolChunk {
        ToolChunk::text(self)
    }
}

impl IntoToolChunk for Vec<MediaBlock> {
    fn into_tool_chunk(self) -> ToolChunk {
        ToolChunk::new(self, ToolResultState::Success)
    }
}

impl IntoToolChunk for Value {
    fn into_tool_chunk(self) -> ToolChunk {
        match self {
            Value::String(s) => ToolChunk::text(s),
            other => ToolChunk::text(other.to_string()),
        }
    }
}

/// `Err` becomes an error result whose text is the error's `Display`.
impl<T: IntoToolChunk, E: fmt::Display> IntoToolChunk for Result<T, E> {
    fn into_tool_chunk(self) -> ToolChunk {
        match self {
            Ok(v) => v.into_tool_chunk(),
            Err(e) => ToolChunk::error(e.to_string()),
        }
    }
}

type Handler = dyn Fn(Value, ToolCallContext) -> BoxFuture<'static, ToolChunk> + Send + Sync;

/// A tool made from an async function whose argument is a
/// `serde` + `schemars` struct.
///
/// The struct's doc comment becomes the tool description and its fields'
/// doc comments the parameter descriptions. Unless changed with
/// [`with_permission`](Self::with_permission), every call asks the user.
///
/// ```
/// use oxiscope_tool::{FunctionTool, Tool};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Get the current weather of a city.
/// #[derive(Deserialize, JsonSchema)]
/// struct Weather {
///     /// The city name.
///     city: String,
/// }
///
/// let tool = FunctionTool::new("get_weather", |w: Weather| async move {
///     format!("Sunny in {}", w.city)
/// });
/// assert_eq!(tool.description(), "Get the current weather of a city.");
/// assert_eq!(tool.input_schema()["required"], serde_json::json!(["city"]));
/// ```
#[derive(Clone)]
pub struct FunctionTool {
    name: String,
    description: String,
    schema: Value,
    flags: ToolFlags,
    permission: PermissionBehavior,
    handler: Arc<Handler>,
}

impl fmt::Debug for FunctionTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionTool")
            .field("name", &self.name)
            .field("flags", &self.flags)
            .field("permission", &self.permission)
            .finish_non_exhaustive()
    }
}

impl FunctionTool {
    /// A tool named `name` that runs `f` on its parsed arguments.
    pub fn new<A, F, Fut, O>(name: impl Into<String>, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = O> + Send + 'static,
        O: IntoToolChunk + 'static,
    {
        Self::with_context(name, move |args: A, _ctx| f(args))
    }

    /// Like [`new`](Self::new), with the call context (cancellation,
    /// session state, backend) passed to `f`.
    pub fn with_context<A, F, Fut, O>(name: impl Into<String>, f: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolCallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = O> + Send + 'static,
        O: IntoToolChunk + 'static,
    {
        let name = name.into();
        let (description, schema) = schema_of::<A>();
        let tool_name = name.clone();
        let handler = move |input: Value, ctx: ToolCallContext| -> BoxFuture<'static, ToolChunk> {
            match serde_json::from_value::<A>(input) {
                Ok(args) => f(args, ctx).map(IntoToolChunk::into_tool_chunk).boxed(),
                Err(e) => {
                    let msg = format!("Invalid arguments for tool `{tool_name}`: {e}");
                    async move { ToolChunk::error(msg) }.boxed()
                }
            }
        };
        Self {
            name,
            description,
            schema,
            flags: ToolFlags {
                concurrency_safe: true,
                ..ToolFlags::default()
            },
            permission: PermissionBehavior::Ask,
            handler: Arc::new(handler),
        }
    }

    /// Replaces the description taken from the doc comment.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Replaces the flags (default: concurrency-safe only).
    #[must_use]
    pub fn with_flags(mut self, flags: ToolFlags) -> Self {
        self.flags = flags;
        self
    }

    /// What the tool's own permission check answers (default `Ask`;
    /// `Passthrough` leaves it to rules and the mode).
    #[must_use]
    pub fn with_permission(mut self, behavior: PermissionBehavior) -> Self {
        self.permission = behavior;
        self
    }
}

/// The description and the cleaned-up input schema of `A`.
fn schema_of<A: JsonSchema>() -> (String, Value) {
    let mut schema = schemars::schema_for!(A).to_value();
    let mut description = String::new();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        if let Some(Value::String(d)) = map.remove("description") {
            description = d;
        }
        map.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    (description, schema)
}

impl Tool for FunctionTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn flags(&self) -> ToolFlags {
        self.flags
    }

    fn check_permissions(
        &self,
        _input: &Value,
        _context: &PermissionContext,
    ) -> PermissionDecision {
        let name = &self.name;
        match self.permission {
            PermissionBehavior::Allow => PermissionDecision::allow(format!("{name} is allowed")),
            PermissionBehavior::Deny => PermissionDecision::deny(format!("{name} is denied")),
            PermissionBehavior::Ask => {
                PermissionDecision::ask(format!("Permission required for {name}"))
            }
            PermissionBehavior::Passthrough => {
                PermissionDecision::passthrough(format!("No tool-specific check for {name}"))
            }
        }
    }

    fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream {
        once_future((self.handler)(input, ctx))
    }
}
