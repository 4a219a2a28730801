//! Text-to-speech models: the trait, the audio stream it answers with, the
//! model classes AgentScope registers and their shipped cards.
//!
//! | concern | file |
//! |---|---|
//! | [`TtsModel`], [`TtsOptions`], [`TtsStream`], [`collect_audio`] | `model.rs` |
//! | [`TtsModelClass`] and which credential types drive which | `class.rs` |
//! | [`TtsModelCard`] and the shipped cards | `card.rs`, `cards/*.yaml` |
//! | WAV framing of PCM audio | `wav.rs` |

mod card;
mod class;
mod model;
mod wav;

pub use card::TtsModelCard;
pub use class::TtsModelClass;
pub use model::{
    AudioChunk, DEFAULT_MAX_TTS_AUDIO_BYTES, DynTtsModel, PCM_MEDIA_TYPE, TtsEvent, TtsModel,
    TtsOptions, TtsResponse, TtsStream, TtsUsage, collect_audio, collect_audio_bounded,
};
pub use wav::{pcm_to_wav, wav_header, wav_stream};
