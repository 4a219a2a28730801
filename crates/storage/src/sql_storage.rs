//! One [`Storage`](crate::Storage) implementation for the SQL backends:
//! each backend has inherent `async fn`s of the same names and signatures
//! (`agent_insert`, `session_get`, `reply_commit`, ...), and
//! [`impl_storage!`] boxes them into the object-safe trait.

/// A statement written for PostgreSQL (`$n` placeholders, `COLLATE "C"`
/// byte-order sorts, `FOR UPDATE` row locks) as SQLite reads it (`?n`;
/// its default collation already compares bytes, and a transaction that
/// reads before it writes holds the write lock from its `BEGIN
/// IMMEDIATE`, so there is no row lock to take).
pub(crate) fn sqlite_spelling(statement: &str) -> String {
    statement
        .replace(" COLLATE \"C\"", "")
        .replace(" FOR UPDATE", "")
        .replace('$', "?")
}

/// The owner-scoped tables a plain delete works on (agents take their
/// sessions along: `agent_delete_cascade`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum OwnedTable {
    Credentials,
    Schedules,
}

/// The library tables a plain delete works on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LibraryTable {
    Mcp,
    Skill,
}

/// `impl Storage for $backend` by boxing its inherent methods.
macro_rules! impl_storage {
    ($backend:ty) => {
        const _: () = {
            use serde_json::Value;

            use $crate::error::Result;
            use $crate::knowledge::{KnowledgeBaseRecord, KnowledgeDocumentRecord};
            use $crate::record::{
                AgentRecord, ApiKeyRecord, CredentialRecord, McpLibraryRecord, MessagePage,
                ScheduleRecord, SessionRecord, SkillLibraryRecord,
            };
            use $crate::sql_storage::{LibraryTable, OwnedTable};
            use $crate::storage::{BoxFuture, Storage};
            use $crate::usage::UsageCounts;

            impl Storage for $backend {
                fn ping(&self) -> BoxFuture<'_, Result<()>> {
                    Box::pin(self.ping_db())
                }

                fn create_agent<'a>(&'a self, agent: &'a AgentRecord) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.agent_insert(agent))
                }

                fn get_agent<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<AgentRecord>>> {
                    Box::pin(self.agent_get(user_id, id))
                }

                fn list_agents<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<AgentRecord>>> {
                    Box::pin(self.agent_list(user_id))
                }

                fn update_agent<'a>(&'a self, agent: &'a AgentRecord) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.agent_update(agent))
                }

                fn delete_agent<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.agent_delete_cascade(user_id, id))
                }

                fn create_credential<'a>(
                    &'a self,
                    c: &'a CredentialRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.credential_insert(c))
                }

                fn get_credential<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<CredentialRecord>>> {
                    Box::pin(self.credential_get(user_id, id))
                }

                fn list_credentials<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<CredentialRecord>>> {
                    Box::pin(self.credential_list(user_id))
                }

                fn update_credential<'a>(
                    &'a self,
                    c: &'a CredentialRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.credential_update(c))
                }

                fn delete_credential<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.delete_owned(OwnedTable::Credentials, user_id, id))
                }

                fn create_session<'a>(&'a self, s: &'a SessionRecord) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.session_insert(s))
                }

                fn get_session<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<SessionRecord>>> {
                    Box::pin(self.session_get(user_id, id))
                }

                fn find_session<'a>(
                    &'a self,
                    user_id: &'a str,
                    agent_id: &'a str,
                    workspace_id: &'a str,
                ) -> BoxFuture<'a, Result<Option<SessionRecord>>> {
                    Box::pin(self.session_find(user_id, agent_id, workspace_id))
                }

                fn list_sessions<'a>(
                    &'a self,
                    user_id: &'a str,
                    agent_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<SessionRecord>>> {
                    Box::pin(self.session_list(user_id, agent_id))
                }

                fn count_sessions<'a>(&'a self, user_id: &'a str) -> BoxFuture<'a, Result<u64>> {
                    Box::pin(self.session_count(user_id))
                }

                fn update_session_config<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                    config: &'a Value,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.session_update_config(user_id, id, config))
                }

                fn name_session_if_auto<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                    name: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.session_name_if_auto(user_id, id, name))
                }

                fn delete_session<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.session_delete(user_id, id))
                }

                fn commit_reply<'a>(
                    &'a self,
                    session_id: &'a str,
                    expected_revision: i64,
                    state: &'a Value,
                    messages: &'a [Value],
                ) -> BoxFuture<'a, Result<i64>> {
                    Box::pin(self.reply_commit(session_id, expected_revision, state, messages))
                }

                fn list_messages<'a>(
                    &'a self,
                    session_id: &'a str,
                    before: Option<&'a str>,
                    offset: u32,
                    limit: u32,
                ) -> BoxFuture<'a, Result<MessagePage>> {
                    Box::pin(self.message_page(session_id, before, offset, limit))
                }

                fn create_schedule<'a>(
                    &'a self,
                    s: &'a ScheduleRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.schedule_insert(s))
                }

                fn list_schedules<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<ScheduleRecord>>> {
                    Box::pin(self.schedule_list(user_id))
                }

                fn delete_schedule<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.delete_owned(OwnedTable::Schedules, user_id, id))
                }

                fn get_schedule<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<ScheduleRecord>>> {
                    Box::pin(self.schedule_get(user_id, id))
                }

                fn update_schedule<'a>(
                    &'a self,
                    s: &'a ScheduleRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.schedule_update(s))
                }

                fn list_all_schedules(&self) -> BoxFuture<'_, Result<Vec<ScheduleRecord>>> {
                    Box::pin(self.schedule_list_all())
                }

                fn list_due_schedules<'a>(
                    &'a self,
                    at: &'a str,
                ) -> BoxFuture<'a, Result<Vec<ScheduleRecord>>> {
                    Box::pin(self.schedule_list_due(at))
                }

                fn create_api_key<'a>(
                    &'a self,
                    key: &'a ApiKeyRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.api_key_insert(key))
                }

                fn find_api_key<'a>(
                    &'a self,
                    hash: &'a str,
                ) -> BoxFuture<'a, Result<Option<ApiKeyRecord>>> {
                    Box::pin(self.api_key_find(hash))
                }

                fn list_api_keys(&self) -> BoxFuture<'_, Result<Vec<ApiKeyRecord>>> {
                    Box::pin(self.api_key_list())
                }

                fn delete_api_key<'a>(&'a self, hash: &'a str) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.api_key_delete(hash))
                }

                fn create_library_mcp<'a>(
                    &'a self,
                    m: &'a McpLibraryRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.library_mcp_insert(m))
                }

                fn get_library_mcp<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<McpLibraryRecord>>> {
                    Box::pin(self.library_mcp_get(user_id, id))
                }

                fn list_library_mcps<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<McpLibraryRecord>>> {
                    Box::pin(self.library_mcp_list(user_id))
                }

                fn update_library_mcp<'a>(
                    &'a self,
                    m: &'a McpLibraryRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.library_mcp_update(m))
                }

                fn delete_library_mcp<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.library_delete(LibraryTable::Mcp, user_id, id))
                }

                fn create_library_skill<'a>(
                    &'a self,
                    s: &'a SkillLibraryRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.library_skill_insert(s))
                }

                fn get_library_skill<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<SkillLibraryRecord>>> {
                    Box::pin(self.library_skill_get(user_id, id))
                }

                fn list_library_skills<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<SkillLibraryRecord>>> {
                    Box::pin(self.library_skill_list(user_id))
                }

                fn delete_library_skill<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.library_delete(LibraryTable::Skill, user_id, id))
                }

                fn add_usage<'a>(
                    &'a self,
                    user_id: &'a str,
                    session_id: &'a str,
                    day: &'a str,
                    delta: &'a UsageCounts,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.usage_add(user_id, session_id, day, delta))
                }

                fn session_usage<'a>(
                    &'a self,
                    user_id: &'a str,
                    session_id: &'a str,
                ) -> BoxFuture<'a, Result<UsageCounts>> {
                    Box::pin(self.usage_of_session(user_id, session_id))
                }

                fn user_usage<'a>(
                    &'a self,
                    user_id: &'a str,
                    since: Option<&'a str>,
                ) -> BoxFuture<'a, Result<UsageCounts>> {
                    Box::pin(self.usage_of_user(user_id, since))
                }

                fn start_tool_call<'a>(
                    &'a self,
                    call: &'a $crate::journal::ToolCallRecord,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.tool_call_start(call))
                }

                fn finish_tool_call<'a>(
                    &'a self,
                    key: &'a str,
                    result: &'a Value,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.tool_call_finish(key, result))
                }

                fn list_tool_calls<'a>(
                    &'a self,
                    session_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<$crate::journal::ToolCallRecord>>> {
                    Box::pin(self.tool_call_list(session_id))
                }

                fn clear_tool_calls<'a>(
                    &'a self,
                    session_id: &'a str,
                ) -> BoxFuture<'a, Result<u64>> {
                    Box::pin(self.tool_call_clear(session_id))
                }

                fn create_background_task<'a>(
                    &'a self,
                    task: &'a $crate::BackgroundTaskRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.background_insert(task))
                }

                fn finish_background_task<'a>(
                    &'a self,
                    id: &'a str,
                    state: $crate::BackgroundTaskState,
                    result: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.background_finish(id, state, result))
                }

                fn mark_background_task_delivered<'a>(
                    &'a self,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.background_delivered(id))
                }

                fn heartbeat_background_tasks<'a>(
                    &'a self,
                    owner: &'a str,
                    at: i64,
                ) -> BoxFuture<'a, Result<u64>> {
                    Box::pin(self.background_heartbeat(owner, at))
                }

                fn stale_background_tasks<'a>(
                    &'a self,
                    owner: &'a str,
                    stale_before: i64,
                    limit: u32,
                ) -> BoxFuture<'a, Result<Vec<$crate::BackgroundTaskRecord>>> {
                    Box::pin(self.background_stale(owner, stale_before, limit))
                }

                fn claim_background_task<'a>(
                    &'a self,
                    task: &'a $crate::BackgroundTaskRecord,
                    owner: &'a str,
                    at: i64,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.background_claim(task, owner, at))
                }

                fn list_background_tasks<'a>(
                    &'a self,
                    session_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<$crate::BackgroundTaskRecord>>> {
                    Box::pin(self.background_list(session_id))
                }

                fn count_running_background_tasks<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<u64>> {
                    Box::pin(self.background_running_of(user_id))
                }

                fn prune_background_tasks<'a>(
                    &'a self,
                    delivered_before: &'a str,
                ) -> BoxFuture<'a, Result<u64>> {
                    Box::pin(self.background_prune(delivered_before))
                }

                fn create_knowledge_base<'a>(
                    &'a self,
                    kb: &'a KnowledgeBaseRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.kb_insert(kb))
                }

                fn get_knowledge_base<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<KnowledgeBaseRecord>>> {
                    Box::pin(self.kb_get(user_id, id))
                }

                fn list_knowledge_bases<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<KnowledgeBaseRecord>>> {
                    Box::pin(self.kb_list(user_id))
                }

                fn update_knowledge_base<'a>(
                    &'a self,
                    kb: &'a KnowledgeBaseRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.kb_update(kb))
                }

                fn delete_knowledge_base<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.kb_delete(user_id, id))
                }

                fn create_knowledge_document<'a>(
                    &'a self,
                    doc: &'a KnowledgeDocumentRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.kdoc_insert(doc))
                }

                fn get_knowledge_document<'a>(
                    &'a self,
                    user_id: &'a str,
                    kb_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<KnowledgeDocumentRecord>>> {
                    Box::pin(self.kdoc_get(user_id, kb_id, id))
                }

                fn list_knowledge_documents<'a>(
                    &'a self,
                    user_id: &'a str,
                    kb_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<KnowledgeDocumentRecord>>> {
                    Box::pin(self.kdoc_list(user_id, kb_id))
                }

                fn set_knowledge_document_status<'a>(
                    &'a self,
                    id: &'a str,
                    status: &'a str,
                    error: Option<&'a str>,
                    chunk_count: i64,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(async move {
                        let now = $crate::record::now();
                        self.kdoc_set_status(id, status, error, chunk_count, &now)
                            .await
                    })
                }

                fn delete_knowledge_document<'a>(
                    &'a self,
                    user_id: &'a str,
                    kb_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.kdoc_delete(user_id, kb_id, id))
                }

                fn unfinished_knowledge_documents(
                    &self,
                ) -> BoxFuture<'_, Result<Vec<KnowledgeDocumentRecord>>> {
                    Box::pin(self.kdoc_unfinished())
                }

                fn create_team<'a>(
                    &'a self,
                    team: &'a $crate::TeamRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.team_insert(team))
                }

                fn get_team<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<$crate::TeamRecord>>> {
                    Box::pin(self.team_get(user_id, id))
                }

                fn update_team<'a>(
                    &'a self,
                    team: &'a $crate::TeamRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(self.team_update(team))
                }

                fn delete_team<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.team_delete(user_id, id))
                }

                fn set_session_team<'a>(
                    &'a self,
                    user_id: &'a str,
                    session_id: &'a str,
                    team_id: Option<&'a str>,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(self.session_team_set(user_id, session_id, team_id))
                }

                fn session_team<'a>(
                    &'a self,
                    user_id: &'a str,
                    session_id: &'a str,
                ) -> BoxFuture<'a, Result<Option<String>>> {
                    Box::pin(self.session_team_get(user_id, session_id))
                }

                fn channels(&self) -> Option<&dyn $crate::ChannelStore> {
                    Some(self)
                }
            }
        };
    };
}
pub(crate) use impl_storage;
