//! Alibaba Cloud DashScope (Qwen and hosted third-party models).

use super::common::key_and_endpoint_credential;

key_and_endpoint_credential! {
    /// Connection settings for Alibaba Cloud DashScope (Qwen and hosted third-party models);
    /// `type` is `dashscope_credential`.
    pub struct DashScopeCredential = "dashscope_credential" {
        /// Endpoint of the API; [`DashScopeCredential::DEFAULT_BASE_URL`] by default.
        base_url,
        /// The endpoint used when the payload names none.
        const DEFAULT_BASE_URL = "https://dashscope.aliyuncs.com/compatible-mode/v1",
        /// A credential with a fresh id, the given key and the default endpoint.
        fn new,
        /// Points the credential at another endpoint.
        fn with_base_url,
    }
    schema {
        title: "DashScope API",
        description: "Key and endpoint for Alibaba Cloud Model Studio (DashScope).",
        api_key: ("API Key", "Secret key issued by DashScope."),
        endpoint: ("API Base URL", "Endpoint of DashScope's OpenAI-compatible mode."),
    }
}
