//! Request and response bodies, with the Python service's wire names.

mod agent;
mod chat;
mod credential;
mod hub;
mod knowledge;
mod library;
mod misc;
mod schedule;
mod session;
mod usage;
mod workspace;

pub use agent::{
    AgentChatConfig, AgentView, CreateAgentRequest, CreateAgentResponse, ListAgentsResponse,
    UpdateAgentRequest,
};
pub use chat::{ChatRequest, ChatTriggerResponse};
pub use credential::{
    CreateCredentialRequest, CreateCredentialResponse, CredentialView,
    ListCredentialSchemasResponse, ListCredentialsResponse, UpdateCredentialRequest,
};
pub use hub::{
    CardsQuery, HttpMcpConfig, HubInfo, InstallMcpRequest, InstallSkillQuery, McpCard, McpConfig,
    McpHubPage, SkillCard, SkillHubPage, StdioMcpConfig,
};
pub use knowledge::{
    ChunkerConfig, ChunkerInfo, CreateKnowledgeBaseRequest, CreateKnowledgeBaseResponse,
    DimensionPolicy, DocumentDownloadQuery, DocumentDownloadTokenResponse, DocumentStatusQuery,
    KbEmbeddingModelConfig, KbEmbeddingProvider, KbMiddlewareParametersSchemaResponse,
    KnowledgeBaseStatusCounts, KnowledgeBaseView, KnowledgeDocumentView, ListChunkersResponse,
    ListDocumentChunksResponse, ListDocumentsQuery, ListKbEmbeddingModelsResponse,
    ListKnowledgeBasesQuery, ListKnowledgeBasesResponse, ListKnowledgeDocumentStatusResponse,
    ListKnowledgeDocumentsResponse, ListSupportedContentTypesResponse, PageQuery,
    SearchKnowledgeBaseRequest, SearchKnowledgeBaseResponse, UpdateKnowledgeBaseRequest,
    UploadKnowledgeDocumentForm, UploadKnowledgeDocumentResponse,
};
pub use library::{
    AddFromLibraryRequest, AddFromLibraryResponse, AddSkillsFromLibraryRequest, McpView,
    SkillRecordView, SkillView, UpdateMcpRequest, WorkspaceQuery,
};
pub use misc::{AgentSchemaV2Response, HealthResponse, ListModelsResponse, ModelQuery};
pub use schedule::{
    CreateScheduleRequest, CreateScheduleResponse, ListSchedulesResponse, ScheduleSessionsResponse,
    ScheduleView, UpdateScheduleRequest,
};
pub use session::{
    AgentQuery, ChatModelConfig, CreateSessionRequest, CreateSessionResponse,
    InterruptSessionResponse, ListMessagesResponse, ListSessionsResponse, MessagesQuery,
    SessionRecordView, SessionStatus, SessionStatusResponse, SessionView, SessionsQuery,
    StreamQuery, UpdateSessionRequest,
};
pub use usage::{UsageResponse, UsageView};
pub use workspace::{
    AddSkillRequest, DirectoryEntry, DirectoryListing, DirectoryQuery, DownloadTokenResponse,
    FilePathQuery, FileQuery, GitStatus, McpClientBody, McpClientStatus, McpServerConfigBody,
    ToolInfo, UploadEntry, UploadManifest, UploadSkillForm, WorkspaceSkill, WorkspaceStatus,
};
