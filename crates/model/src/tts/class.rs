//! [`TtsModelClass`]: the TTS model implementations AgentScope registers,
//! their parameter schemas, and which ones a credential type drives.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::{CredentialType, Error, Result};

/// A TTS model implementation, named by its `type` wire value
/// (`"openai_tts"`, ...).
///
/// Each class has one parameter schema (the base of its cards'
/// `parameter_schema`) and one set of shipped cards. A realtime class takes
/// its text incrementally over a WebSocket; the others synthesize one text
/// per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TtsModelClass {
    /// `openai_tts`: OpenAI's `/audio/speech`.
    #[serde(rename = "openai_tts")]
    OpenAi,
    /// `gemini_tts`: Gemini `generateContent` with audio output.
    #[serde(rename = "gemini_tts")]
    Gemini,
    /// `dashscope_tts`: Qwen-TTS on DashScope's multimodal generation API.
    #[serde(rename = "dashscope_tts")]
    DashScope,
    /// `dashscope_realtime_tts`: Qwen-TTS with streaming input (WebSocket).
    #[serde(rename = "dashscope_realtime_tts")]
    DashScopeRealtime,
    /// `dashscope_cosyvoice_tts`: CosyVoice (WebSocket).
    #[serde(rename = "dashscope_cosyvoice_tts")]
    DashScopeCosyVoice,
}

impl TtsModelClass {
    /// Every class, grouped by credential type.
    pub const ALL: [Self; 5] = [
        Self::OpenAi,
        Self::Gemini,
        Self::DashScope,
        Self::DashScopeRealtime,
        Self::DashScopeCosyVoice,
    ];

    /// The `type` wire value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai_tts",
            Self::Gemini => "gemini_tts",
            Self::DashScope => "dashscope_tts",
            Self::DashScopeRealtime => "dashscope_realtime_tts",
            Self::DashScopeCosyVoice => "dashscope_cosyvoice_tts",
        }
    }

    /// Whether the class takes its text incrementally (the cards it lists
    /// are the ones whose `realtime` matches).
    #[must_use]
    pub const fn realtime(self) -> bool {
        matches!(self, Self::DashScopeRealtime)
    }

    /// The credential type whose key the class uses.
    #[must_use]
    pub const fn credential_type(self) -> CredentialType {
        match self {
            Self::OpenAi => CredentialType::OpenAi,
            Self::Gemini => CredentialType::Gemini,
            Self::DashScope | Self::DashScopeRealtime | Self::DashScopeCosyVoice => {
                CredentialType::DashScope
            }
        }
    }

    /// The JSON Schema properties of the class's parameters, in
    /// AgentScope's form (each field's keys sorted, as pydantic writes
    /// them); every parameter has a default, so none is required.
    #[must_use]
    pub fn parameter_properties(self) -> Map<String, Value> {
        let voice = |default: &str| {
            json!({
                "default": default,
                "description": "The voice to use for synthesis.",
                "title": "Voice",
                "type": "string",
            })
        };
        let properties = match self {
            Self::OpenAi => json!({
                "voice": voice("alloy"),
                "response_format": {
                    "default": "mp3",
                    "description": "The audio format of the synthesized speech.",
                    "enum": ["mp3", "opus", "aac", "flac", "wav", "pcm"],
                    "title": "Response Format",
                    "type": "string",
                },
                "instructions": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": null,
                    "description": "Additional instructions for controlling the voice (only \
                                    supported by some models, e.g. gpt-4o-mini-tts).",
                    "title": "Instructions",
                },
            }),
            Self::Gemini => json!({ "voice": voice("Kore") }),
            Self::DashScope | Self::DashScopeRealtime => json!({ "voice": voice("Cherry") }),
            Self::DashScopeCosyVoice => json!({
                "voice": voice("longanhuan"),
                "realtime": {
                    "default": false,
                    "description": "Whether to enable streaming input mode.",
                    "title": "Realtime",
                    "type": "boolean",
                },
            }),
        };
        match properties {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

impl fmt::Display for TtsModelClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TtsModelClass {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|class| class.as_str() == name)
            .ok_or_else(|| Error::UnknownModelClass {
                name: name.to_owned(),
            })
    }
}

impl CredentialType {
    /// The TTS model classes a credential of this type drives, in
    /// AgentScope's order (none for most types).
    #[must_use]
    pub const fn tts_model_classes(self) -> &'static [TtsModelClass] {
        match self {
            Self::OpenAi => &[TtsModelClass::OpenAi],
            Self::Gemini => &[TtsModelClass::Gemini],
            Self::DashScope => &[
                TtsModelClass::DashScope,
                TtsModelClass::DashScopeRealtime,
                TtsModelClass::DashScopeCosyVoice,
            ],
            Self::Anthropic
            | Self::DeepSeek
            | Self::MiniMax
            | Self::Moonshot
            | Self::Ollama
            | Self::Xai
            | Self::Volcengine => &[],
        }
    }
}
