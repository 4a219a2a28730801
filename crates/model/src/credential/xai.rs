//! xAI (Grok).

use super::common::key_and_endpoint_credential;

key_and_endpoint_credential! {
    /// Connection settings for the xAI API; `type` is `xai_credential`.
    pub struct XaiCredential = "xai_credential" {
        /// Host name of the API, without a scheme; [`XaiCredential::DEFAULT_API_HOST`]
        /// by default.
        api_host,
        /// The host used when the payload names none.
        const DEFAULT_API_HOST = "api.x.ai",
        /// A credential with a fresh id, the given key and the default host.
        fn new,
        /// Points the credential at another host (no scheme).
        fn with_api_host,
    }
    schema {
        title: "xAI API",
        description: "Key and host for xAI's Grok API.",
        api_key: ("Api Key", "Secret key issued by xAI."),
        endpoint: (
            "API Host",
            "Host name of the API without a scheme; change it for a compatible \
             or self-hosted server."
        ),
    }
}
