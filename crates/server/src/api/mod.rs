//! Request and response bodies, with the Python service's wire names.

mod agent;
mod chat;
mod credential;
mod misc;
mod session;

pub use agent::{
    AgentChatConfig, AgentView, CreateAgentRequest, CreateAgentResponse, ListAgentsResponse,
    UpdateAgentRequest,
};
pub use chat::{ChatRequest, ChatTriggerResponse};
pub use credential::{
    CreateCredentialRequest, CreateCredentialResponse, CredentialView,
    ListCredentialSchemasResponse, ListCredentialsResponse, UpdateCredentialRequest,
};
pub use misc::{AgentSchemaV2Response, HealthResponse, ListModelsResponse, ModelQuery};
pub use session::{
    AgentQuery, ChatModelConfig, CreateSessionRequest, CreateSessionResponse,
    InterruptSessionResponse, ListMessagesResponse, ListSessionsResponse, MessagesQuery,
    SessionRecordView, SessionStatus, SessionStatusResponse, SessionView, SessionsQuery,
    StreamQuery, UpdateSessionRequest,
};
