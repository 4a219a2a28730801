//! DeepSeek.

use super::common::key_and_endpoint_credential;

key_and_endpoint_credential! {
    /// Connection settings for DeepSeek; `type` is `deepseek_credential`.
    pub struct DeepSeekCredential = "deepseek_credential" {
        /// Endpoint of the API; [`DeepSeekCredential::DEFAULT_BASE_URL`] by default.
        base_url,
        /// The endpoint used when the payload names none.
        const DEFAULT_BASE_URL = "https://api.deepseek.com",
        /// A credential with a fresh id, the given key and the default endpoint.
        fn new,
        /// Points the credential at another endpoint.
        fn with_base_url,
    }
    schema {
        title: "DeepSeek API",
        description: "Key and endpoint for DeepSeek's API.",
        api_key: ("Api Key", "Secret key issued by DeepSeek."),
        endpoint: ("Base Url", "Endpoint of the DeepSeek API."),
    }
}
