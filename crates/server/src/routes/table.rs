//! One row per route: its method, path and handler, and what its OpenAPI
//! operation says. The router and `/openapi.json` are both built from these
//! rows, so a route cannot be served undocumented (or documented unserved)
//! by accident.
//!
//! Rows are written with small `const` builders:
//!
//! ```text
//! Route::get("/agent/", |m| on(m, list)).user().ok(schema::<ListAgentsResponse>)
//! ```
//!
//! The operation's tag is the path's first segment, and its path parameters
//! are the path's `{name}` segments; query parameters come in the order
//! given, then the user header.

use axum::routing::{MethodFilter, MethodRouter};
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Value, json};

use crate::state::AppState;

/// An HTTP method the service serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    Post,
    Patch,
    Delete,
}

impl Verb {
    /// The OpenAPI spelling: `get`, `post`, ...
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
            Self::Patch => "patch",
            Self::Delete => "delete",
        }
    }

    pub(super) fn filter(self) -> MethodFilter {
        match self {
            Self::Get => MethodFilter::GET,
            Self::Post => MethodFilter::POST,
            Self::Patch => MethodFilter::PATCH,
            Self::Delete => MethodFilter::DELETE,
        }
    }
}

/// A route's handler for the method it is given.
pub(crate) type Handler = fn(MethodFilter) -> MethodRouter<AppState>;

/// Writes a JSON schema into the document's generator and returns the
/// schema (usually a `$ref`) to put in place.
pub(crate) type Schema = fn(&mut SchemaGenerator) -> Value;

/// The schema of `T`, as a reference into `components.schemas`.
pub(crate) fn schema<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    g.subschema_for::<T>().to_value()
}

/// Any JSON: the empty schema.
pub(crate) fn any(_: &mut SchemaGenerator) -> Value {
    json!({})
}

/// What the caller must present, and how the document says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Nothing: a public operation.
    Public,
    /// The caller's user: API keys document a `401`, the development mode
    /// its required `x-user-id` header.
    User,
    /// Nothing, but the development mode documents AgentScope's required
    /// `x-user-id` header (`/health` takes it there).
    PublicWithUserHeader,
    /// A download token in the query, or the caller's credentials: the
    /// development header is optional, and API keys document the operation
    /// as public.
    Token,
    /// Like [`Access::Token`], but API keys document a `401`.
    TokenOrUser,
}

impl Access {
    /// Whether API keys document the operation as needing a key.
    pub(crate) fn needs_key(self) -> bool {
        matches!(self, Self::User | Self::TokenOrUser)
    }

    /// The `x-user-id` header parameter under the development mode: `None`,
    /// or whether it is required.
    pub(crate) fn user_header(self) -> Option<bool> {
        match self {
            Self::Public => None,
            Self::User | Self::PublicWithUserHeader => Some(true),
            Self::Token | Self::TokenOrUser => Some(false),
        }
    }
}

/// A query parameter: its name, and whether it is required. Its schema
/// follows from the name (see `openapi.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Query(pub(crate) &'static str, pub(crate) bool);

/// A required query parameter.
pub(crate) const fn query(name: &'static str) -> Query {
    Query(name, true)
}

/// An optional query parameter.
pub(crate) const fn optional(name: &'static str) -> Query {
    Query(name, false)
}

/// How a request body is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    Multipart,
}

impl Media {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Multipart => "multipart/form-data",
        }
    }
}

/// What a successful answer carries.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reply {
    /// No body (`204`).
    Empty,
    /// JSON of this schema.
    Json(Schema),
    /// A `text/event-stream`.
    EventStream,
}

/// What a route's OpenAPI operation says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operation {
    pub(crate) access: Access,
    pub(crate) query: &'static [Query],
    pub(crate) body: Option<(Schema, Media)>,
    pub(crate) status: &'static str,
    pub(crate) reply: Reply,
}

/// One route: method, path, handler, and its documented operation (`None`
/// only for `/openapi.json` itself, which FastAPI does not document).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Route {
    pub(crate) verb: Verb,
    pub(crate) path: &'static str,
    pub(crate) handler: Handler,
    pub(crate) operation: Option<Operation>,
}

impl Route {
    const fn new(verb: Verb, path: &'static str, handler: Handler) -> Self {
        Self {
            verb,
            path,
            handler,
            operation: Some(Operation {
                access: Access::Public,
                query: &[],
                body: None,
                status: "200",
                reply: Reply::Empty,
            }),
        }
    }

    /// A `GET` route: public, `200` with no body until told otherwise.
    pub(crate) const fn get(path: &'static str, handler: Handler) -> Self {
        Self::new(Verb::Get, path, handler)
    }

    /// A `POST` route.
    pub(crate) const fn post(path: &'static str, handler: Handler) -> Self {
        Self::new(Verb::Post, path, handler)
    }

    /// A `PATCH` route.
    pub(crate) const fn patch(path: &'static str, handler: Handler) -> Self {
        Self::new(Verb::Patch, path, handler)
    }

    /// A `DELETE` route: `204` with no body.
    pub(crate) const fn delete(path: &'static str, handler: Handler) -> Self {
        Self::new(Verb::Delete, path, handler).status("204")
    }

    /// Needs the caller's user.
    #[must_use]
    pub(crate) const fn user(self) -> Self {
        self.access(Access::User)
    }

    /// Who may call (see [`Access`]).
    #[must_use]
    pub(crate) const fn access(mut self, access: Access) -> Self {
        if let Some(op) = &mut self.operation {
            op.access = access;
        }
        self
    }

    /// Its query parameters, in order.
    #[must_use]
    pub(crate) const fn query(mut self, query: &'static [Query]) -> Self {
        if let Some(op) = &mut self.operation {
            op.query = query;
        }
        self
    }

    /// Takes a JSON body of this schema.
    #[must_use]
    pub(crate) const fn body(mut self, schema: Schema) -> Self {
        if let Some(op) = &mut self.operation {
            op.body = Some((schema, Media::Json));
        }
        self
    }

    /// Takes a multipart form of this schema.
    #[must_use]
    pub(crate) const fn form(mut self, schema: Schema) -> Self {
        if let Some(op) = &mut self.operation {
            op.body = Some((schema, Media::Multipart));
        }
        self
    }

    /// Answers `status` on success.
    #[must_use]
    pub(crate) const fn status(mut self, status: &'static str) -> Self {
        if let Some(op) = &mut self.operation {
            op.status = status;
        }
        self
    }

    /// Answers `200` with JSON of this schema.
    #[must_use]
    pub(crate) const fn ok(self, schema: Schema) -> Self {
        self.status("200").reply(Reply::Json(schema))
    }

    /// Answers `201` with JSON of this schema.
    #[must_use]
    pub(crate) const fn created(self, schema: Schema) -> Self {
        self.status("201").reply(Reply::Json(schema))
    }

    /// Answers `200` with an event stream.
    #[must_use]
    pub(crate) const fn event_stream(self) -> Self {
        self.status("200").reply(Reply::EventStream)
    }

    /// What the successful answer carries.
    #[must_use]
    pub(crate) const fn reply(mut self, reply: Reply) -> Self {
        if let Some(op) = &mut self.operation {
            op.reply = reply;
        }
        self
    }

    /// Served, but not in the document.
    #[must_use]
    pub(crate) const fn undocumented(mut self) -> Self {
        self.operation = None;
        self
    }
}
