//! The shape the Anthropic and Ollama formatters share.
//!
//! A chat formatter holds a [`MediaLoader`](crate::media::MediaLoader) in
//! `media` and the accepted media types in `media_types`, and hands both to
//! a borrowed view that converts messages. A multi-agent formatter wraps a
//! chat formatter and a history prompt, and folds the speakers of each
//! [`Group`](super::history::Group) with its own `speakers` method.

/// The default text that introduces the folded conversation.
pub const DEFAULT_HISTORY_PROMPT: &str = "# Conversation History\nThe content between \
     <history></history> tags contains your conversation history\n";

/// Declares a chat formatter `$ty` accepting `$media_types` by default,
/// whose view `$view` has the fields `media` and `media_types` and an async
/// `chat_message(&self, &Msg, &mut Vec<Value>)`: the struct, `new`,
/// `Default` (as `new`), the media builders, `$ty::$fn` making the view,
/// the [`Formatter`](oxiscope_model::Formatter) that converts every message
/// with it, and the same conversion one message at a time for the models'
/// message cache (messages with linked media are never kept: their bytes are
/// read anew on every call).
macro_rules! chat_formatter {
    (
        $(#[$meta:meta])*
        pub struct $ty:ident;
        $(#[$new_meta:meta])*
        fn new() accepting $media_types:expr;
        view: $fn:ident -> $view:ident;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $ty {
            pub(crate) media: $crate::media::MediaLoader,
            pub(crate) media_types: Vec<String>,
        }

        impl Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $ty {
            $(#[$new_meta])*
            #[must_use]
            pub fn new() -> Self {
                Self {
                    media: $crate::media::MediaLoader::default(),
                    media_types: $media_types,
                }
            }

            /// Downloads remote media with `http`.
            #[must_use]
            pub fn with_http_client(mut self, http: oxiscope_http::HttpClient) -> Self {
                self.media.http = Some(http);
                self
            }

            /// Reads and downloads media as `policy` allows (default: any
            /// local file, any URL, 20 MiB and 30 s per file).
            #[must_use]
            pub fn with_media_policy(mut self, policy: $crate::MediaPolicy) -> Self {
                self.media.policy = policy;
                self
            }

            /// Caps each inlined file at `max_bytes` and each download at
            /// `timeout` (the limits of the media policy).
            #[must_use]
            pub fn with_media_limits(
                mut self,
                max_bytes: u64,
                timeout: std::time::Duration,
            ) -> Self {
                self.media.policy = self.media.policy.with_limits(max_bytes, timeout);
                self
            }

            pub(crate) fn $fn(&self) -> $view<'_> {
                $view {
                    media: &self.media,
                    media_types: &self.media_types,
                }
            }
        }

        impl oxiscope_model::Formatter for $ty {
            fn supported_input_media_types(&self) -> &[String] {
                &self.media_types
            }

            fn format<'a>(
                &'a self,
                msgs: &'a [oxiscope_message::Msg],
            ) -> futures_util::future::BoxFuture<
                'a,
                Result<Vec<serde_json::Value>, oxiscope_model::ModelError>,
            > {
                Box::pin(async move {
                    let view = self.$fn();
                    let mut out = Vec::with_capacity(msgs.len());
                    for msg in msgs {
                        view.chat_message(msg, &mut out).await?;
                    }
                    Ok(out)
                })
            }
        }

        impl $crate::body_cache::PerMessage for $ty {
            fn format_one<'a>(
                &'a self,
                msg: &'a oxiscope_message::Msg,
                out: &'a mut Vec<serde_json::Value>,
            ) -> futures_util::future::BoxFuture<'a, Result<(), oxiscope_model::ModelError>> {
                Box::pin(async move { self.$fn().chat_message(msg, out).await })
            }

            fn cacheable(&self, msg: &oxiscope_message::Msg) -> bool {
                $crate::body_cache::only_inline_media(msg)
            }
        }
    };
}

/// Declares a multi-agent formatter over the chat formatter `$chat` (made
/// by `chat_formatter!` with the view maker `$fn`): the struct, `Default`,
/// `new`, its builders, and the [`Formatter`](oxiscope_model::Formatter)
/// that formats system and tool groups as the chat formatter does and folds
/// each group of speakers with the struct's own
/// `async fn speakers(&self, &[&Msg], first: bool) -> Result<Value, ModelError>`.
macro_rules! multi_agent_formatter {
    (
        $(#[$meta:meta])*
        pub struct $ty:ident($chat:ident, $fn:ident);
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        pub struct $ty {
            chat: $chat,
            history_prompt: String,
        }

        impl Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $ty {
            /// A formatter with the default history prompt and media settings.
            #[must_use]
            pub fn new() -> Self {
                Self {
                    chat: $chat::new(),
                    history_prompt: $crate::common::formatter::DEFAULT_HISTORY_PROMPT.to_owned(),
                }
            }

            /// Replaces the text that introduces the folded conversation.
            #[must_use]
            pub fn with_history_prompt(mut self, prompt: impl Into<String>) -> Self {
                self.history_prompt = prompt.into();
                self
            }

            /// Downloads remote media with `http`.
            #[must_use]
            pub fn with_http_client(mut self, http: oxiscope_http::HttpClient) -> Self {
                self.chat = self.chat.with_http_client(http);
                self
            }

            /// Reads and downloads media as `policy` allows.
            #[must_use]
            pub fn with_media_policy(mut self, policy: $crate::MediaPolicy) -> Self {
                self.chat = self.chat.with_media_policy(policy);
                self
            }

            /// Caps each inlined file at `max_bytes` and each download at `timeout`.
            #[must_use]
            pub fn with_media_limits(
                mut self,
                max_bytes: u64,
                timeout: std::time::Duration,
            ) -> Self {
                self.chat = self.chat.with_media_limits(max_bytes, timeout);
                self
            }
        }

        impl oxiscope_model::Formatter for $ty {
            fn supported_input_media_types(&self) -> &[String] {
                oxiscope_model::Formatter::supported_input_media_types(&self.chat)
            }

            fn format<'a>(
                &'a self,
                msgs: &'a [oxiscope_message::Msg],
            ) -> futures_util::future::BoxFuture<
                'a,
                Result<Vec<serde_json::Value>, oxiscope_model::ModelError>,
            > {
                Box::pin(async move {
                    let view = self.chat.$fn();
                    let mut out = Vec::new();
                    let mut first = true;
                    for group in $crate::common::history::group(msgs) {
                        match group {
                            $crate::common::history::Group::System(msg)
                            | $crate::common::history::Group::Tools(msg) => {
                                view.chat_message(msg, &mut out).await?;
                            }
                            $crate::common::history::Group::Speakers(speakers) => {
                                out.push(self.speakers(&speakers, first).await?);
                                first = false;
                            }
                        }
                    }
                    Ok(out)
                })
            }
        }
    };
}

pub(crate) use {chat_formatter, multi_agent_formatter};
