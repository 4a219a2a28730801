//! Moonshot AI (Kimi).

use super::common::key_and_endpoint_credential;

key_and_endpoint_credential! {
    /// Connection settings for Moonshot AI (Kimi); `type` is `moonshot_credential`.
    pub struct MoonshotCredential = "moonshot_credential" {
        /// Endpoint of the API; [`MoonshotCredential::DEFAULT_BASE_URL`] by default.
        base_url,
        /// The endpoint used when the payload names none.
        const DEFAULT_BASE_URL = "https://api.moonshot.cn/v1",
        /// A credential with a fresh id, the given key and the default endpoint.
        fn new,
        /// Points the credential at another endpoint.
        fn with_base_url,
    }
    schema {
        title: "Moonshot API",
        description: "Key and endpoint for Moonshot AI's API.",
        api_key: ("Api Key", "Secret key issued by Moonshot AI."),
        endpoint: ("Base Url", "Endpoint of the Moonshot AI API."),
    }
}
