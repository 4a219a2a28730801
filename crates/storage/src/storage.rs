//! The [`Storage`] trait: every record the service keeps.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::error::Result;
use crate::journal::ToolCallRecord;
use crate::knowledge::{KnowledgeBaseRecord, KnowledgeDocumentRecord};
use crate::record::{
    AgentRecord, ApiKeyRecord, CredentialRecord, McpLibraryRecord, MessagePage, ScheduleRecord,
    SessionRecord, SkillLibraryRecord,
};
use crate::usage::UsageCounts;

/// A boxed, sendable future: the trait is used as `Arc<dyn Storage>`, so its
/// methods return these instead of being `async fn`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The service's records. Every read that takes a `user_id` returns only
/// that user's records: another user's id is indistinguishable from a
/// missing one.
///
/// Implementations must be safe to share between many tasks and, for
/// multi-replica backends, between processes: the revision check of
/// [`Storage::commit_reply`] is what keeps a stale writer from overwriting
/// a newer state.
///
/// # Cancel safety
/// Dropping a returned future before it completes may or may not have
/// applied a write; a single write is atomic either way.
pub trait Storage: Send + Sync + std::fmt::Debug {
    /// Checks the store answers (for `/health`).
    ///
    /// # Errors
    /// The backend's failure.
    fn ping(&self) -> BoxFuture<'_, Result<()>>;

    /// Adds an agent.
    ///
    /// # Errors
    /// The backend's failure (a duplicate id included).
    fn create_agent<'a>(&'a self, agent: &'a AgentRecord) -> BoxFuture<'a, Result<()>>;
    /// One of the user's agents.
    ///
    /// # Errors
    /// The backend's failure; a missing agent is `Ok(None)`.
    fn get_agent<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<AgentRecord>>>;
    /// The user's agents, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_agents<'a>(&'a self, user_id: &'a str) -> BoxFuture<'a, Result<Vec<AgentRecord>>>;
    /// Replaces an agent's data and `updated_at`.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such agent.
    fn update_agent<'a>(&'a self, agent: &'a AgentRecord) -> BoxFuture<'a, Result<()>>;
    /// Deletes an agent with all its sessions and their messages; `false`
    /// when the user had none with that id.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_agent<'a>(&'a self, user_id: &'a str, id: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Adds a credential.
    ///
    /// # Errors
    /// The backend's failure.
    fn create_credential<'a>(&'a self, c: &'a CredentialRecord) -> BoxFuture<'a, Result<()>>;
    /// One of the user's credentials.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_credential<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<CredentialRecord>>>;
    /// The user's credentials, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_credentials<'a>(
        &'a self,
        user_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<CredentialRecord>>>;
    /// Replaces a credential's sealed document and `updated_at`.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such credential.
    fn update_credential<'a>(&'a self, c: &'a CredentialRecord) -> BoxFuture<'a, Result<()>>;
    /// Deletes a credential; `false` when the user had none with that id.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_credential<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;

    /// Stores a new session.
    ///
    /// # Errors
    /// [`crate::Error::AlreadyExists`] when the user has a session of that
    /// agent and workspace already (also when another request created it
    /// a moment ago).
    fn create_session<'a>(&'a self, s: &'a SessionRecord) -> BoxFuture<'a, Result<()>>;
    /// One of the user's sessions.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_session<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>>>;
    /// The user's session for an agent in a workspace, if one exists.
    ///
    /// # Errors
    /// The backend's failure.
    fn find_session<'a>(
        &'a self,
        user_id: &'a str,
        agent_id: &'a str,
        workspace_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>>>;
    /// The user's sessions with an agent, newest change first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_sessions<'a>(
        &'a self,
        user_id: &'a str,
        agent_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SessionRecord>>>;
    /// How many sessions the user keeps, with every agent.
    ///
    /// # Errors
    /// The backend's failure.
    fn count_sessions<'a>(&'a self, user_id: &'a str) -> BoxFuture<'a, Result<u64>>;
    /// Replaces a session's config and `updated_at` (not its state).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such session.
    fn update_session_config<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
        config: &'a Value,
    ) -> BoxFuture<'a, Result<()>>;
    /// Sets a session's `config.name` to `name` and `config.naming.auto` to
    /// `false` in one step, only while `config.naming.auto` is `true`;
    /// `false` when it was not (the name was settled meanwhile) or there is
    /// no such session. The rest of the config is left as it is now, so a
    /// concurrent change of another field is not undone.
    ///
    /// # Errors
    /// The backend's failure.
    fn name_session_if_auto<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Deletes a session and its messages; `false` when there was none.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_session<'a>(&'a self, user_id: &'a str, id: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Persists what a reply produced, atomically: each message is inserted
    /// or, when its id is already stored for the session, replaced in place;
    /// then the state is written if the stored revision still equals
    /// `expected_revision`. Returns the new revision.
    ///
    /// # Errors
    /// [`crate::Error::StaleRevision`] when another writer got there first
    /// (nothing is written), [`crate::Error::NotFound`] for a missing
    /// session.
    fn commit_reply<'a>(
        &'a self,
        session_id: &'a str,
        expected_revision: i64,
        state: &'a Value,
        messages: &'a [Value],
    ) -> BoxFuture<'a, Result<i64>>;
    /// A page of a session's messages, newest first: up to `limit` messages
    /// older than the message `before` (all when `None`), after skipping
    /// `offset`.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_messages<'a>(
        &'a self,
        session_id: &'a str,
        before: Option<&'a str>,
        offset: u32,
        limit: u32,
    ) -> BoxFuture<'a, Result<MessagePage>>;

    /// Adds a schedule.
    ///
    /// # Errors
    /// The backend's failure.
    fn create_schedule<'a>(&'a self, s: &'a ScheduleRecord) -> BoxFuture<'a, Result<()>>;
    /// The user's schedules, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_schedules<'a>(&'a self, user_id: &'a str)
    -> BoxFuture<'a, Result<Vec<ScheduleRecord>>>;
    /// Deletes a schedule; `false` when there was none.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_schedule<'a>(&'a self, user_id: &'a str, id: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// One of the user's schedules.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_schedule<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ScheduleRecord>>>;
    /// Replaces a schedule's document and `updated_at`.
    ///
    /// # Errors
    /// [`Error::NotFound`](crate::Error::NotFound) when there is none; the
    /// backend's failure.
    fn update_schedule<'a>(&'a self, s: &'a ScheduleRecord) -> BoxFuture<'a, Result<()>>;
    /// Every user's schedules, oldest first (for the scheduler).
    ///
    /// # Errors
    /// The backend's failure.
    fn list_all_schedules(&self) -> BoxFuture<'_, Result<Vec<ScheduleRecord>>>;

    /// The schedules of every user that may be due at `at` (a
    /// [`crate::check_time`]): those whose `next_check_at` is at or before
    /// it, or unknown; ordered as [`Storage::list_all_schedules`].
    ///
    /// # Errors
    /// The backend's failure.
    fn list_due_schedules<'a>(&'a self, at: &'a str) -> BoxFuture<'a, Result<Vec<ScheduleRecord>>>;

    /// Stores an API key's hash.
    ///
    /// # Errors
    /// The backend's failure.
    fn create_api_key<'a>(&'a self, key: &'a ApiKeyRecord) -> BoxFuture<'a, Result<()>>;
    /// The user an API key hash belongs to.
    ///
    /// # Errors
    /// The backend's failure.
    fn find_api_key<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<Option<ApiKeyRecord>>>;
    /// Every API key (their hashes), by user then age.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_api_keys(&self) -> BoxFuture<'_, Result<Vec<ApiKeyRecord>>>;
    /// Removes the API key with this hash; whether there was one.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_api_key<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<bool>>;

    /// Adds an MCP server to its owner's library.
    ///
    /// # Errors
    /// [`crate::Error::AlreadyExists`] when the owner has one of that name.
    fn create_library_mcp<'a>(&'a self, m: &'a McpLibraryRecord) -> BoxFuture<'a, Result<()>>;
    /// One MCP server of the user's library.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_library_mcp<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<McpLibraryRecord>>>;
    /// The user's library MCP servers, ordered by name.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_library_mcps<'a>(
        &'a self,
        user_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<McpLibraryRecord>>>;
    /// Replaces a library MCP server's name, state, sealed config and
    /// `updated_at` (its card metadata too).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such record,
    /// [`crate::Error::AlreadyExists`] when the new name is taken.
    fn update_library_mcp<'a>(&'a self, m: &'a McpLibraryRecord) -> BoxFuture<'a, Result<()>>;
    /// Removes an MCP server from the user's library; `false` when there
    /// was none.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_library_mcp<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;

    /// Adds a skill to its owner's library.
    ///
    /// # Errors
    /// [`crate::Error::AlreadyExists`] when the owner has one of that name.
    fn create_library_skill<'a>(&'a self, s: &'a SkillLibraryRecord) -> BoxFuture<'a, Result<()>>;
    /// One skill of the user's library.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_library_skill<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<SkillLibraryRecord>>>;
    /// The user's library skills, ordered by name.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_library_skills<'a>(
        &'a self,
        user_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SkillLibraryRecord>>>;
    /// Removes a skill from the user's library; `false` when there was
    /// none.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_library_skill<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;

    /// Adds what a run spent to the session's counts and to the user's
    /// counts of `day` (a UTC date, `YYYY-MM-DD`), atomically.
    ///
    /// # Errors
    /// The backend's failure (nothing is added then).
    fn add_usage<'a>(
        &'a self,
        user_id: &'a str,
        session_id: &'a str,
        day: &'a str,
        delta: &'a UsageCounts,
    ) -> BoxFuture<'a, Result<()>>;
    /// What the user's session has spent; zeros when nothing was counted
    /// (or the session is another user's).
    ///
    /// # Errors
    /// The backend's failure.
    fn session_usage<'a>(
        &'a self,
        user_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<UsageCounts>>;
    /// What the user has spent on the UTC days from `since` (a
    /// `YYYY-MM-DD` date; `None` for ever), deleted sessions included.
    ///
    /// # Errors
    /// The backend's failure.
    fn user_usage<'a>(
        &'a self,
        user_id: &'a str,
        since: Option<&'a str>,
    ) -> BoxFuture<'a, Result<UsageCounts>>;

    /// Journals a tool call that starts (see [`ToolCallRecord`]); `false`
    /// when its idempotency key is journaled already (nothing changes).
    ///
    /// # Errors
    /// The backend's failure.
    fn start_tool_call<'a>(&'a self, call: &'a ToolCallRecord) -> BoxFuture<'a, Result<bool>>;
    /// Journals how the call with idempotency `key` finished (`result`,
    /// capped); `false` when it is not journaled or finished already.
    ///
    /// # Errors
    /// The backend's failure.
    fn finish_tool_call<'a>(
        &'a self,
        key: &'a str,
        result: &'a Value,
    ) -> BoxFuture<'a, Result<bool>>;
    /// The session's journaled tool calls, oldest start first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_tool_calls<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>>>;
    /// Drops the session's journal (its reply ended); returns how many
    /// entries went.
    ///
    /// # Errors
    /// The backend's failure.
    fn clear_tool_calls<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<u64>>;

    /// Records a tool call moved to the background (see
    /// [`crate::BackgroundTaskRecord`]).
    ///
    /// # Errors
    /// The backend's failure (a duplicate id included).
    fn create_background_task<'a>(
        &'a self,
        task: &'a crate::BackgroundTaskRecord,
    ) -> BoxFuture<'a, Result<()>>;
    /// Stores how a running background task ended (`state` and its capped
    /// `result`); `false` when it is not running any more (taken over as
    /// lost, or finished already).
    ///
    /// # Errors
    /// The backend's failure.
    fn finish_background_task<'a>(
        &'a self,
        id: &'a str,
        state: crate::BackgroundTaskState,
        result: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Marks a background task's outcome as handed to its session; `false`
    /// when it was marked already (or is gone).
    ///
    /// # Errors
    /// The backend's failure.
    fn mark_background_task_delivered<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// Sets the heartbeat (ms since the Unix epoch) of every undelivered
    /// background task `owner` runs; returns how many.
    ///
    /// # Errors
    /// The backend's failure.
    fn heartbeat_background_tasks<'a>(
        &'a self,
        owner: &'a str,
        at: i64,
    ) -> BoxFuture<'a, Result<u64>>;
    /// Up to `limit` undelivered background tasks of owners other than
    /// `owner` whose heartbeat is older than `stale_before`, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn stale_background_tasks<'a>(
        &'a self,
        owner: &'a str,
        stale_before: i64,
        limit: u32,
    ) -> BoxFuture<'a, Result<Vec<crate::BackgroundTaskRecord>>>;
    /// Takes over `task` as read by [`Self::stale_background_tasks`]:
    /// atomically makes `owner` its owner (heartbeat `at`), turning a
    /// `running` task into `lost`, if its owner and heartbeat are still
    /// those read and it is undelivered; `false` when another process got
    /// there first (or the owner came back).
    ///
    /// # Errors
    /// The backend's failure.
    fn claim_background_task<'a>(
        &'a self,
        task: &'a crate::BackgroundTaskRecord,
        owner: &'a str,
        at: i64,
    ) -> BoxFuture<'a, Result<bool>>;
    /// The session's background tasks, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_background_tasks<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<crate::BackgroundTaskRecord>>>;
    /// How many of `user_id`'s background tasks are running, in every
    /// process.
    ///
    /// # Errors
    /// The backend's failure.
    fn count_running_background_tasks<'a>(&'a self, user_id: &'a str)
    -> BoxFuture<'a, Result<u64>>;
    /// Deletes the background tasks delivered before `delivered_before` (a
    /// [`crate::now`] timestamp); returns how many.
    ///
    /// # Errors
    /// The backend's failure.
    fn prune_background_tasks<'a>(
        &'a self,
        delivered_before: &'a str,
    ) -> BoxFuture<'a, Result<u64>>;

    /// Adds a knowledge base.
    ///
    /// # Errors
    /// The backend's failure.
    fn create_knowledge_base<'a>(
        &'a self,
        kb: &'a KnowledgeBaseRecord,
    ) -> BoxFuture<'a, Result<()>>;
    /// One of the user's knowledge bases.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_knowledge_base<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<KnowledgeBaseRecord>>>;
    /// The user's knowledge bases, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_knowledge_bases<'a>(
        &'a self,
        user_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<KnowledgeBaseRecord>>>;
    /// Replaces a knowledge base's name, data and `updated_at`.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such knowledge base.
    fn update_knowledge_base<'a>(
        &'a self,
        kb: &'a KnowledgeBaseRecord,
    ) -> BoxFuture<'a, Result<()>>;
    /// Deletes a knowledge base and its document records; `false` when
    /// the user had none with that id.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_knowledge_base<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Adds a document record.
    ///
    /// # Errors
    /// The backend's failure.
    fn create_knowledge_document<'a>(
        &'a self,
        doc: &'a KnowledgeDocumentRecord,
    ) -> BoxFuture<'a, Result<()>>;
    /// One document of the user's knowledge base `kb_id`.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_knowledge_document<'a>(
        &'a self,
        user_id: &'a str,
        kb_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<KnowledgeDocumentRecord>>>;
    /// The documents of the user's knowledge base `kb_id`, oldest first.
    ///
    /// # Errors
    /// The backend's failure.
    fn list_knowledge_documents<'a>(
        &'a self,
        user_id: &'a str,
        kb_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<KnowledgeDocumentRecord>>>;
    /// Sets a document's indexing status, error text and chunk count (and
    /// `updated_at` to now); `false` when the document is gone.
    ///
    /// # Errors
    /// The backend's failure.
    fn set_knowledge_document_status<'a>(
        &'a self,
        id: &'a str,
        status: &'a str,
        error: Option<&'a str>,
        chunk_count: i64,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Deletes a document record; `false` when there was none.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_knowledge_document<'a>(
        &'a self,
        user_id: &'a str,
        kb_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool>>;
    /// Every user's documents whose indexing has not finished (neither
    /// `ready` nor `error`), oldest first: what a restarted server
    /// indexes again.
    ///
    /// # Errors
    /// The backend's failure.
    fn unfinished_knowledge_documents(&self)
    -> BoxFuture<'_, Result<Vec<KnowledgeDocumentRecord>>>;

    /// Adds a team.
    ///
    /// # Errors
    /// The backend's failure (a duplicate id included).
    fn create_team<'a>(&'a self, team: &'a crate::TeamRecord) -> BoxFuture<'a, Result<()>>;
    /// One of the user's teams.
    ///
    /// # Errors
    /// The backend's failure; a missing one is `Ok(None)`.
    fn get_team<'a>(
        &'a self,
        user_id: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<crate::TeamRecord>>>;
    /// Replaces a team's document and `updated_at`.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] when the user has no such team.
    fn update_team<'a>(&'a self, team: &'a crate::TeamRecord) -> BoxFuture<'a, Result<()>>;
    /// Deletes a team and clears the `team_id` of the user's sessions in
    /// it, atomically; `false` when the user had no such team.
    ///
    /// # Errors
    /// The backend's failure.
    fn delete_team<'a>(&'a self, user_id: &'a str, id: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// Sets (or with `None` clears) the team a session of the user takes
    /// part in; `false` when the user has no such session.
    ///
    /// # Errors
    /// The backend's failure.
    fn set_session_team<'a>(
        &'a self,
        user_id: &'a str,
        session_id: &'a str,
        team_id: Option<&'a str>,
    ) -> BoxFuture<'a, Result<bool>>;
    /// The team a session of the user takes part in (`None` when none, or
    /// no such session).
    ///
    /// # Errors
    /// The backend's failure.
    fn session_team<'a>(
        &'a self,
        user_id: &'a str,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>>>;

    /// The store of IM channels, when this backend keeps them.
    fn channels(&self) -> Option<&dyn crate::ChannelStore> {
        None
    }
}
