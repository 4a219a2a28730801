//! Volcengine Ark (Doubao).

use super::common::key_and_endpoint_credential;

key_and_endpoint_credential! {
    /// Connection settings for Volcengine Ark (Doubao); `type` is `volcengine_credential`.
    pub struct VolcengineCredential = "volcengine_credential" {
        /// Endpoint of the API; [`VolcengineCredential::DEFAULT_BASE_URL`] by default.
        base_url,
        /// The endpoint used when the payload names none.
        const DEFAULT_BASE_URL = "https://ark.cn-beijing.volces.com/api/v3",
        /// A credential with a fresh id, the given key and the default endpoint.
        fn new,
        /// Points the credential at another endpoint.
        fn with_base_url,
    }
    schema {
        title: "Volcengine Ark API",
        description: "Key and endpoint for Volcengine Ark.",
        api_key: ("Api Key", "Secret key issued by Volcengine Ark."),
        endpoint: ("Base Url", "Endpoint of the Volcengine Ark API."),
    }
}
