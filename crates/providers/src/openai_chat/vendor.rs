//! The vendors that speak OpenAI's Chat Completions, and what sets them
//! apart: endpoint, payload quirks, accepted media.

use oxiscope_model::{
    DashScopeCredential, DeepSeekCredential, MoonshotCredential, VolcengineCredential,
};

/// A server that speaks Chat Completions.
///
/// Each vendor is a configuration of the same wire family: a default base
/// URL plus the quirks of its formatter (whether messages carry `name`,
/// whether thinking goes back as `reasoning_content`, which media it takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Vendor {
    /// OpenAI itself.
    #[default]
    OpenAi,
    /// DeepSeek: text only, thinking echoed as `reasoning_content`.
    DeepSeek,
    /// Moonshot (Kimi): remote images inlined, `reasoning_content` echoed.
    Moonshot,
    /// xAI's OpenAI-compatible endpoint; formatted as OpenAI.
    Xai,
    /// Volcengine Ark: no speaker names, `reasoning_content` when present.
    Volcengine,
    /// DashScope's OpenAI-compatible mode: no speaker names, thinking not
    /// sent back; the card's `thinking_enable` goes out as `enable_thinking`.
    DashScope,
    /// A vLLM server (no default endpoint); formatted as OpenAI.
    Vllm,
}

/// How a thinking block goes back to the vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reasoning {
    /// Thinking is dropped.
    Drop,
    /// `reasoning_content` on every assistant message, empty without thinking.
    Always,
    /// `reasoning_content` only on messages that had thinking.
    WhenPresent,
}

/// The payload quirks of a vendor's formatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quirks {
    /// Messages carry the speaker's `name`.
    pub(crate) names: bool,
    /// The user message that carries promoted tool-result media is named
    /// `system-reminder`.
    pub(crate) reminder_name: bool,
    /// Content is a plain string instead of a list of parts.
    pub(crate) string_content: bool,
    /// What happens to thinking.
    pub(crate) reasoning: Reasoning,
    /// Remote `http(s)` images are downloaded and sent inline.
    pub(crate) fetch_remote: bool,
    /// The media types accepted as input (`image/*`, ...).
    pub(crate) media: &'static [&'static str],
}

const OPENAI_MEDIA: &[&str] = &["image/*", "audio/*", "application/pdf"];

impl Vendor {
    /// Every vendor, in declaration order.
    pub const ALL: [Self; 7] = [
        Self::OpenAi,
        Self::DeepSeek,
        Self::Moonshot,
        Self::Xai,
        Self::Volcengine,
        Self::DashScope,
        Self::Vllm,
    ];

    /// The endpoint used when none is configured (`None` for vLLM, which
    /// is always self-hosted).
    #[must_use]
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("https://api.openai.com/v1"),
            Self::DeepSeek => Some(DeepSeekCredential::DEFAULT_BASE_URL),
            Self::Moonshot => Some(MoonshotCredential::DEFAULT_BASE_URL),
            Self::Xai => Some("https://api.x.ai/v1"),
            Self::Volcengine => Some(VolcengineCredential::DEFAULT_BASE_URL),
            Self::DashScope => Some(DashScopeCredential::DEFAULT_BASE_URL),
            Self::Vllm => None,
        }
    }

    /// The provider name used in errors.
    #[must_use]
    pub fn provider_name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::DeepSeek => "deepseek",
            Self::Moonshot => "moonshot",
            Self::Xai => "xai",
            Self::Volcengine => "volcengine",
            Self::DashScope => "dashscope",
            Self::Vllm => "vllm",
        }
    }

    pub(crate) fn quirks(self) -> Quirks {
        let openai = Quirks {
            names: true,
            reminder_name: true,
            string_content: false,
            reasoning: Reasoning::Drop,
            fetch_remote: false,
            media: OPENAI_MEDIA,
        };
        match self {
            Self::OpenAi | Self::Xai | Self::Vllm => openai,
            Self::DeepSeek => Quirks {
                names: false,
                reminder_name: false,
                string_content: true,
                reasoning: Reasoning::Always,
                fetch_remote: false,
                media: &[],
            },
            Self::Moonshot => Quirks {
                reasoning: Reasoning::Always,
                fetch_remote: true,
                media: &["image/*", "audio/*", "video/*"],
                ..openai
            },
            Self::Volcengine => Quirks {
                names: false,
                reasoning: Reasoning::WhenPresent,
                media: &["image/*", "video/*"],
                ..openai
            },
            Self::DashScope => Quirks {
                names: false,
                reminder_name: false,
                media: &["image/*", "audio/*", "video/*"],
                ..openai
            },
        }
    }
}
