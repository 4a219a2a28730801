//! What a chat model returns: responses, usage, and what it is asked with
//! (tool schemas, tool choice).

use oxiscope_message::{ContentBlock, FinishedReason, Id, Stamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Token usage and latency of one model call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Seconds from the request to the end of the response.
    pub time: f64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default)]
    pub cache_input_tokens: u64,
    /// Provider-specific counters (reasoning tokens, ...).
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

impl ChatUsage {
    /// Usage with the given token counts and no time yet.
    #[must_use]
    pub fn tokens(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            time: 0.0,
            cache_creation_input_tokens: 0,
            cache_input_tokens: 0,
            metadata: None,
        }
    }
}

/// One chunk of a model's answer, or (with `is_last`) the whole answer.
///
/// Streaming chunks carry only what is new: a text block holding just the
/// new text, a tool call holding just the new argument fragment, each with
/// the id of the block it extends. The last chunk holds every block in full,
/// the usage and the finish reason.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatResponse {
    /// Text, thinking, tool-call and data blocks.
    pub content: Vec<ContentBlock>,
    /// Whether this is the final, accumulated chunk.
    pub is_last: bool,
    /// The response id.
    #[serde(default = "Id::random")]
    pub id: Id,
    /// When the chunk was produced.
    #[serde(default = "Stamp::now")]
    pub created_at: Stamp,
    /// Usage, on the last chunk.
    #[serde(default)]
    pub usage: Option<ChatUsage>,
    /// Whether the call completed or was interrupted.
    #[serde(default)]
    pub finished_reason: FinishedReason,
    /// Provider-specific data.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

// AgentScope writes the `type` tag of these two in the middle (they are
// dataclasses with the tag declared after the required fields), so they are
// serialised by hand to keep its key order.
impl Serialize for ChatUsage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ChatUsage", 7)?;
        st.serialize_field("input_tokens", &self.input_tokens)?;
        st.serialize_field("output_tokens", &self.output_tokens)?;
        st.serialize_field("time", &self.time)?;
        st.serialize_field(
            "cache_creation_input_tokens",
            &self.cache_creation_input_tokens,
        )?;
        st.serialize_field("cache_input_tokens", &self.cache_input_tokens)?;
        st.serialize_field("type", "chat")?;
        st.serialize_field("metadata", &self.metadata)?;
        st.end()
    }
}

impl Serialize for ChatResponse {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ChatResponse", 8)?;
        st.serialize_field("content", &self.content)?;
        st.serialize_field("is_last", &self.is_last)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("created_at", &self.created_at)?;
        st.serialize_field("type", "chat_response")?;
        st.serialize_field("usage", &self.usage)?;
        st.serialize_field("finished_reason", &self.finished_reason)?;
        st.serialize_field("metadata", &self.metadata)?;
        st.end()
    }
}

/// Which tools the model may or must call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// `auto`, `none`, `required`, or the name of the one tool to call.
    pub mode: ToolChoiceMode,
    /// Restricts the tools offered to these names, when set.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
}

impl ToolChoice {
    /// The model decides.
    #[must_use]
    pub fn auto() -> Self {
        Self {
            mode: ToolChoiceMode::Auto,
            tools: None,
        }
    }

    /// No tool may be called.
    #[must_use]
    pub fn none() -> Self {
        Self {
            mode: ToolChoiceMode::None,
            tools: None,
        }
    }

    /// Some tool must be called.
    #[must_use]
    pub fn required() -> Self {
        Self {
            mode: ToolChoiceMode::Required,
            tools: None,
        }
    }

    /// This tool must be called.
    pub fn tool(name: impl Into<String>) -> Self {
        Self {
            mode: ToolChoiceMode::Tool(name.into()),
            tools: None,
        }
    }
}

/// The mode of a [`ToolChoice`]; serialised as a plain string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum ToolChoiceMode {
    /// `auto`
    #[default]
    Auto,
    /// `none`
    None,
    /// `required`
    Required,
    /// A tool name.
    Tool(String),
}

impl ToolChoiceMode {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Auto => "auto",
            Self::None => "none",
            Self::Required => "required",
            Self::Tool(name) => name,
        }
    }
}

impl Serialize for ToolChoiceMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ToolChoiceMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "auto" => Self::Auto,
            "none" => Self::None,
            "required" => Self::Required,
            _ => Self::Tool(s),
        })
    }
}

/// A tool as the model sees it: OpenAI's function-tool shape, which is
/// what AgentScope passes to every chat model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function.
    pub function: FunctionSchema,
}

/// Name, description and JSON-schema parameters of a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionSchema {
    /// The tool name.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// The JSON schema of the tool's input.
    pub parameters: Value,
}

impl ToolSchema {
    /// A function tool.
    pub fn function(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        Self {
            kind: "function".to_owned(),
            function: FunctionSchema {
                name: name.into(),
                description: description.into(),
                parameters,
            },
        }
    }
}
