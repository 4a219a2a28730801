//! [`ChannelStore`](crate::ChannelStore) for the SQL backends:
//! [`channel_sql!`] writes the same implementation for each, from
//! statements with `$n` placeholders (SQLite reads them as `?n`).

/// `impl ChannelStore for $backend` (whose `pool` field is visible where
/// the macro is used); `$sql` spells a statement for the backend.
macro_rules! channel_sql {
    ($backend:ty, $sql:expr) => {
        const _: () = {
            use $crate::channel::{
                ChannelChatRecord, ChannelRecord, ChannelSessionRecord, ChannelStore,
                channel_chat_row, channel_row, channel_session_row,
            };
            use $crate::error::Result;
            use $crate::storage::BoxFuture;

            const CHANNEL_COLUMNS: &str = "id, user_id, channel_type, name, platform_bot_id, \
                 enabled, sealed_credentials, data, created_at, updated_at";
            const SESSION_COLUMNS: &str =
                "channel_id, session_key, session_id, user_id, agent_id, chat_id, created_at";

            fn sql(statement: &str) -> String {
                let spell: fn(&str) -> String = $sql;
                spell(statement)
            }

            impl $backend {
                async fn channels_where(
                    &self,
                    filter: &str,
                    user: Option<&str>,
                ) -> Result<Vec<ChannelRecord>> {
                    let statement = sql(&format!(
                        "SELECT {CHANNEL_COLUMNS} FROM channels WHERE {filter} \
                         ORDER BY created_at, id"
                    ));
                    let mut query = sqlx::query(&statement);
                    if let Some(user) = user {
                        query = query.bind(user);
                    }
                    let rows = query.fetch_all(&self.pool).await?;
                    rows.iter().map(channel_row).collect()
                }

                async fn channel_session_get(
                    &self,
                    channel_id: &str,
                    key: &str,
                ) -> Result<Option<ChannelSessionRecord>> {
                    let row = sqlx::query(&sql(&format!(
                        "SELECT {SESSION_COLUMNS} FROM channel_sessions \
                         WHERE channel_id = $1 AND session_key = $2"
                    )))
                    .bind(channel_id)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?;
                    row.as_ref().map(channel_session_row).transpose()
                }
            }

            impl ChannelStore for $backend {
                fn create_channel<'a>(&'a self, c: &'a ChannelRecord) -> BoxFuture<'a, Result<()>> {
                    Box::pin(async move {
                        sqlx::query(&sql(&format!(
                            "INSERT INTO channels ({CHANNEL_COLUMNS}) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
                        )))
                        .bind(&c.id)
                        .bind(&c.user_id)
                        .bind(&c.channel_type)
                        .bind(c.name.as_deref())
                        .bind(&c.platform_bot_id)
                        .bind(i64::from(c.enabled))
                        .bind(&c.sealed_credentials)
                        .bind(serde_json::to_string(&c.data)?)
                        .bind(&c.created_at)
                        .bind(&c.updated_at)
                        .execute(&self.pool)
                        .await?;
                        Ok(())
                    })
                }

                fn get_channel<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<Option<ChannelRecord>>> {
                    Box::pin(async move {
                        let row = sqlx::query(&sql(&format!(
                            "SELECT {CHANNEL_COLUMNS} FROM channels WHERE user_id = $1 AND id = $2"
                        )))
                        .bind(user_id)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?;
                        row.as_ref().map(channel_row).transpose()
                    })
                }

                fn list_channels<'a>(
                    &'a self,
                    user_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<ChannelRecord>>> {
                    Box::pin(self.channels_where("user_id = $1", Some(user_id)))
                }

                fn enabled_channels(&self) -> BoxFuture<'_, Result<Vec<ChannelRecord>>> {
                    Box::pin(self.channels_where("enabled <> 0", None))
                }

                fn update_channel<'a>(&'a self, c: &'a ChannelRecord) -> BoxFuture<'a, Result<()>> {
                    Box::pin(async move {
                        let done = sqlx::query(&sql(
                            "UPDATE channels SET name = $1, enabled = $2, data = $3, \
                             updated_at = $4 WHERE user_id = $5 AND id = $6",
                        ))
                        .bind(c.name.as_deref())
                        .bind(i64::from(c.enabled))
                        .bind(serde_json::to_string(&c.data)?)
                        .bind(&c.updated_at)
                        .bind(&c.user_id)
                        .bind(&c.id)
                        .execute(&self.pool)
                        .await?;
                        $crate::rows::found(done.rows_affected(), "channel", &c.id)
                    })
                }

                fn delete_channel<'a>(
                    &'a self,
                    user_id: &'a str,
                    id: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(async move {
                        let mut tx = self.pool.begin().await?;
                        let done = sqlx::query(&sql(
                            "DELETE FROM channels WHERE user_id = $1 AND id = $2",
                        ))
                        .bind(user_id)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                        if done.rows_affected() == 0 {
                            return Ok(false);
                        }
                        for table in ["channel_sessions", "channel_chats", "channel_inbound"] {
                            sqlx::query(&sql(&format!(
                                "DELETE FROM {table} WHERE channel_id = $1"
                            )))
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                        }
                        tx.commit().await?;
                        Ok(true)
                    })
                }

                fn claim_channel_session<'a>(
                    &'a self,
                    r: &'a ChannelSessionRecord,
                ) -> BoxFuture<'a, Result<ChannelSessionRecord>> {
                    Box::pin(async move {
                        sqlx::query(&sql(&format!(
                            "INSERT INTO channel_sessions ({SESSION_COLUMNS}) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7) \
                             ON CONFLICT (channel_id, session_key) DO NOTHING"
                        )))
                        .bind(&r.channel_id)
                        .bind(&r.session_key)
                        .bind(&r.session_id)
                        .bind(&r.user_id)
                        .bind(&r.agent_id)
                        .bind(&r.chat_id)
                        .bind(&r.created_at)
                        .execute(&self.pool)
                        .await?;
                        Ok(self
                            .channel_session_get(&r.channel_id, &r.session_key)
                            .await?
                            .unwrap_or_else(|| r.clone()))
                    })
                }

                fn release_channel_session<'a>(
                    &'a self,
                    channel_id: &'a str,
                    session_key: &'a str,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(async move {
                        sqlx::query(&sql(
                            "DELETE FROM channel_sessions \
                             WHERE channel_id = $1 AND session_key = $2",
                        ))
                        .bind(channel_id)
                        .bind(session_key)
                        .execute(&self.pool)
                        .await?;
                        Ok(())
                    })
                }

                fn channel_sessions<'a>(
                    &'a self,
                    channel_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<ChannelSessionRecord>>> {
                    Box::pin(async move {
                        let rows = sqlx::query(&sql(&format!(
                            "SELECT {SESSION_COLUMNS} FROM channel_sessions \
                             WHERE channel_id = $1 ORDER BY created_at, session_key"
                        )))
                        .bind(channel_id)
                        .fetch_all(&self.pool)
                        .await?;
                        rows.iter().map(channel_session_row).collect()
                    })
                }

                fn record_channel_chat<'a>(
                    &'a self,
                    c: &'a ChannelChatRecord,
                ) -> BoxFuture<'a, Result<()>> {
                    Box::pin(async move {
                        sqlx::query(&sql(
                            "INSERT INTO channel_chats \
                             (channel_id, chat_id, name, chat_type, last_seen) \
                             VALUES ($1, $2, $3, $4, $5) \
                             ON CONFLICT (channel_id, chat_id) DO UPDATE SET \
                             name = excluded.name, chat_type = excluded.chat_type, \
                             last_seen = excluded.last_seen",
                        ))
                        .bind(&c.channel_id)
                        .bind(&c.chat_id)
                        .bind(&c.name)
                        .bind(&c.chat_type)
                        .bind(&c.last_seen)
                        .execute(&self.pool)
                        .await?;
                        Ok(())
                    })
                }

                fn channel_chats<'a>(
                    &'a self,
                    channel_id: &'a str,
                ) -> BoxFuture<'a, Result<Vec<ChannelChatRecord>>> {
                    Box::pin(async move {
                        let rows = sqlx::query(&sql(
                            "SELECT channel_id, chat_id, name, chat_type, last_seen \
                             FROM channel_chats WHERE channel_id = $1 \
                             ORDER BY last_seen DESC, chat_id",
                        ))
                        .bind(channel_id)
                        .fetch_all(&self.pool)
                        .await?;
                        rows.iter().map(channel_chat_row).collect()
                    })
                }

                fn take_inbound<'a>(
                    &'a self,
                    channel_id: &'a str,
                    message_id: &'a str,
                    at: &'a str,
                ) -> BoxFuture<'a, Result<bool>> {
                    Box::pin(async move {
                        let done = sqlx::query(&sql(
                            "INSERT INTO channel_inbound (channel_id, message_id, seen_at) \
                             VALUES ($1, $2, $3) ON CONFLICT (channel_id, message_id) DO NOTHING",
                        ))
                        .bind(channel_id)
                        .bind(message_id)
                        .bind(at)
                        .execute(&self.pool)
                        .await?;
                        Ok(done.rows_affected() == 1)
                    })
                }

                fn prune_inbound<'a>(&'a self, before: &'a str) -> BoxFuture<'a, Result<u64>> {
                    Box::pin(async move {
                        let done =
                            sqlx::query(&sql("DELETE FROM channel_inbound WHERE seen_at < $1"))
                                .bind(before)
                                .execute(&self.pool)
                                .await?;
                        Ok(done.rows_affected())
                    })
                }
            }
        };
    };
}
pub(crate) use channel_sql;
