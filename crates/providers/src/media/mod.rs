//! Media inputs: what a formatter may read from this machine's disk and
//! download from the network when a message's data block names a URL, and
//! the one reader and one downloader every formatter uses.
//!
//! A [`MediaPolicy`] is given to a model ([`crate::chat_model_with`], or
//! `with_media_policy` on a model or formatter); its default reads any
//! local file and downloads any `http(s)` URL, as a library user on their
//! own machine expects. A multi-tenant service confines files to the
//! tenant's workspace and downloads from public addresses only.

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
mod file;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
mod loader;
mod policy;

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
pub(crate) use loader::MediaLoader;
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "ollama",
    feature = "gemini"
))]
pub(crate) use policy::refused_endpoint;
pub use policy::{
    DEFAULT_MAX_MEDIA_BYTES, DEFAULT_MEDIA_TIMEOUT, Endpoints, MediaPolicy, RemoteMedia,
};
