//! What the file tools (Read, Write, Edit, Glob, Grep) share: a struct that
//! holds a [`FilePolicy`](oxiscope_permission::FilePolicy) for its
//! [`FileTool`](oxiscope_permission::FileTool) kind, the permission hooks
//! delegated to it, and a `call` that parses the arguments and runs the
//! tool's function.

use crate::chunk::ToolChunk;

/// What a file tool's function returns, made one chunk: a plain chunk, or
/// either side of a `Result` whose error is also a chunk.
pub(super) trait IntoChunk {
    /// The chunk to send.
    fn into_chunk(self) -> ToolChunk;
}

impl IntoChunk for ToolChunk {
    fn into_chunk(self) -> ToolChunk {
        self
    }
}

impl IntoChunk for Result<ToolChunk, ToolChunk> {
    fn into_chunk(self) -> ToolChunk {
        self.unwrap_or_else(|chunk| chunk)
    }
}

/// Declares a file tool named after its type, which must also be the name
/// of its [`FileTool`](oxiscope_permission::FileTool) kind: the struct, its
/// `new`, and its [`Tool`](crate::tool::Tool) implementation. `run` is an
/// `async fn(Args, &ToolCallContext)` returning a
/// [`ToolChunk`](crate::chunk::ToolChunk) or a `Result` of two of them;
/// arguments that do not parse as `args` are an error chunk naming the tool.
macro_rules! file_tool {
    (
        $(#[$meta:meta])*
        pub struct $ty:ident;
        $(#[$new_meta:meta])*
        fn new;
        description: $description:expr,
        schema: $schema:expr,
        flags: { $($flag:ident),* $(,)? },
        args: $args:ty,
        run: $run:path $(,)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $ty {
            policy: oxiscope_permission::FilePolicy,
        }

        impl $ty {
            $(#[$new_meta])*
            #[must_use]
            pub fn new(env: oxiscope_permission::PathEnv) -> Self {
                Self {
                    policy: oxiscope_permission::FilePolicy::new(
                        oxiscope_permission::FileTool::$ty,
                        env,
                    ),
                }
            }
        }

        impl $crate::tool::Tool for $ty {
            fn name(&self) -> &str {
                stringify!($ty)
            }

            fn description(&self) -> &str {
                $description
            }

            fn input_schema(&self) -> &serde_json::Value {
                &$schema
            }

            fn flags(&self) -> $crate::tool::ToolFlags {
                $crate::tool::ToolFlags {
                    $($flag: true,)*
                    ..$crate::tool::ToolFlags::default()
                }
            }

            $crate::builtin::delegate_permissions!();

            fn call(
                &self,
                input: serde_json::Value,
                ctx: $crate::tool::ToolCallContext,
            ) -> $crate::tool::ToolStream {
                $crate::tool::once_future(async move {
                    match $crate::builtin::parse::<$args>(stringify!($ty), input) {
                        Ok(args) => {
                            $crate::builtin::file_tool::IntoChunk::into_chunk($run(args, &ctx).await)
                        }
                        Err(chunk) => chunk,
                    }
                })
            }
        }
    };
}

pub(super) use file_tool;
