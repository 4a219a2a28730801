//! MiniMax (through its Anthropic-compatible API).

use super::common::key_and_endpoint_credential;

key_and_endpoint_credential! {
    /// Connection settings for MiniMax (through its Anthropic-compatible API);
    /// `type` is `minimax_credential`.
    pub struct MiniMaxCredential = "minimax_credential" {
        /// Endpoint of the API; [`MiniMaxCredential::DEFAULT_BASE_URL`] by default.
        base_url,
        /// The endpoint used when the payload names none.
        const DEFAULT_BASE_URL = "https://api.minimax.io/anthropic",
        /// A credential with a fresh id, the given key and the default endpoint.
        fn new,
        /// Points the credential at another endpoint.
        fn with_base_url,
    }
    schema {
        title: "MiniMaxCredential",
        description: "Key and endpoint for MiniMax's Anthropic-compatible API.",
        api_key: ("Api Key", "Secret key issued by MiniMax."),
        endpoint: (
            "Base Url",
            "Endpoint of MiniMax's Anthropic-compatible API \
             (the mainland China service has its own host)."
        ),
    }
}
