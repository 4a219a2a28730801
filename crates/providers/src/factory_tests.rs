use oxiscope_model::{
    AnthropicCredential, DeepSeekCredential, GeminiCredential, OllamaCredential, OpenAiCredential,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

/// The message of an [`ModelError::InvalidRequest`], or a panic.
fn refusal(result: Result<Arc<dyn DynChatModel>, ModelError>) -> String {
    match result {
        Err(ModelError::InvalidRequest { message }) => message,
        Err(other) => panic!("not an invalid request: {other:?}"),
        Ok(model) => panic!("built {model:?}"),
    }
}

#[test]
fn the_config_reads_agentscope_names_and_defaults() {
    let full: ModelConfig = serde_json::from_value(json!({
        "model_class": "anthropic_chat",
        "model": "claude-sonnet-4-5",
        "parameters": {"max_tokens": 1000},
    }))
    .unwrap();
    assert_eq!(
        full,
        ModelConfig::new("claude-sonnet-4-5")
            .with_model_class("anthropic_chat")
            .with_parameter("max_tokens", 1000)
    );
    assert_eq!(
        serde_json::to_value(&full).unwrap(),
        json!({
            "model_class": "anthropic_chat",
            "model": "claude-sonnet-4-5",
            "parameters": {"max_tokens": 1000},
        })
    );
    let bare: ModelConfig = serde_json::from_value(json!({"model": "gpt-4.1"})).unwrap();
    assert_eq!(bare, ModelConfig::new("gpt-4.1"));
    assert!(serde_json::from_value::<ModelConfig>(json!({"model_class": "openai_chat"})).is_err());
}

#[test]
fn an_unknown_class_is_refused_by_name() {
    let credential = Credential::from(OpenAiCredential::new("sk"));
    let config = ModelConfig::new("gpt-4.1").with_model_class("made_up_chat");
    assert_eq!(
        refusal(chat_model(&credential, &config)),
        "unknown model class \"made_up_chat\""
    );
}

#[test]
fn a_class_of_another_credential_type_is_refused() {
    let credential = Credential::from(OpenAiCredential::new("sk"));
    let config = ModelConfig::new("claude-sonnet-4-5").with_model_class("anthropic_chat");
    assert_eq!(
        refusal(chat_model(&credential, &config)),
        "model class anthropic_chat takes a credential of type anthropic_credential, not \
         openai_credential"
    );
}

#[cfg(feature = "openai")]
mod openai {
    use oxiscope_model::{
        DashScopeCredential, MoonshotCredential, VolcengineCredential, XaiCredential,
    };
    use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
    use pretty_assertions::assert_eq;

    use super::*;

    fn reply() -> ScriptedResponse {
        OpenAiScript::new().text("Hello.").finish("stop").response()
    }

    #[tokio::test]
    async fn openai_chat_sends_the_parameters_to_the_credential_endpoint() {
        let server = FakeServer::start().await.unwrap();
        server.push(reply());
        let credential = OpenAiCredential::new("sk-openai")
            .with_organization("org-1")
            .with_base_url(server.url("/v1"));
        let config = ModelConfig::new("gpt-4.1")
            .with_model_class("openai_chat")
            .with_parameter("temperature", 0.25);
        let model = chat_model(&credential.into(), &config).unwrap();
        assert_eq!(model.model_name(), "gpt-4.1");
        assert!(model.context_size().is_some());

        let request = call_and_see(&server, model.as_ref()).await;
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.header("authorization"), Some("Bearer sk-openai"));
        assert_eq!(request.header("openai-organization"), Some("org-1"));
        let body = request.body_json().unwrap();
        assert_eq!(body["model"], "gpt-4.1");
        assert_eq!(body["temperature"], 0.25);
        // OpenAI's formatter: a named speaker, content as parts.
        assert_eq!(body["messages"][0]["name"], "user");
        assert!(body["messages"][0]["content"].is_array());
    }

    #[tokio::test]
    async fn a_deepseek_credential_sends_deepseek_requests_to_its_base_url() {
        let server = FakeServer::start().await.unwrap();
        let credential =
            Credential::from(DeepSeekCredential::new("sk-ds").with_base_url(server.url("/ds")));
        for class in ["", "deepseek_chat"] {
            server.push(reply());
            let config = ModelConfig::new("deepseek-chat").with_model_class(class);
            let model = chat_model(&credential, &config).unwrap();
            let request = call_and_see(&server, model.as_ref()).await;
            assert_eq!(request.path, "/ds/chat/completions");
            assert_eq!(request.header("authorization"), Some("Bearer sk-ds"));
            // DeepSeek's formatter: plain string content and no speaker names.
            let message = &request.body_json().unwrap()["messages"][0];
            assert_eq!(message, &json!({"role": "user", "content": "hi"}));
        }
    }

    #[tokio::test]
    async fn every_openai_wire_vendor_is_reached_through_its_credential() {
        let server = FakeServer::start().await.unwrap();
        let cases: [(Credential, &str, &str); 4] = [
            (
                MoonshotCredential::new("sk-moon")
                    .with_base_url(server.url("/moonshot"))
                    .into(),
                "moonshot_chat",
                "/moonshot",
            ),
            (
                VolcengineCredential::new("sk-ark")
                    .with_base_url(server.url("/ark"))
                    .into(),
                "volcengine_chat",
                "/ark",
            ),
            (
                DashScopeCredential::new("sk-dash")
                    .with_base_url(server.url("/dashscope"))
                    .into(),
                "dashscope_chat",
                "/dashscope",
            ),
            (
                // A host with a scheme is the whole base URL.
                XaiCredential::new("sk-xai")
                    .with_api_host(server.url("/xai"))
                    .into(),
                "xai_chat",
                "/xai",
            ),
        ];
        for (credential, class, prefix) in cases {
            let key = credential.secrets()[0].1.expose().to_owned();
            for name in ["", class] {
                server.push(reply());
                let config = ModelConfig::new("some-model").with_model_class(name);
                let model = chat_model(&credential, &config).unwrap();
                let request = call_and_see(&server, model.as_ref()).await;
                assert_eq!(
                    request.path,
                    format!("{prefix}/chat/completions"),
                    "{class}"
                );
                let bearer = format!("Bearer {key}");
                assert_eq!(request.header("authorization"), Some(bearer.as_str()));
            }
        }
    }

    #[test]
    fn an_xai_host_without_a_scheme_is_reached_over_https() {
        let credential = Credential::from(XaiCredential::new("sk-xai"));
        let model = chat_model(&credential, &ModelConfig::new("grok-4")).unwrap();
        let debug = format!("{model:?}");
        assert!(
            debug.contains("base_url: \"https://api.x.ai/v1\""),
            "{debug}"
        );
    }
}

#[cfg(feature = "anthropic")]
#[tokio::test]
async fn anthropic_chat_sends_the_key_and_parameters_to_the_messages_api() {
    use oxiscope_test_support::FakeServer;
    use oxiscope_test_support::anthropic::AnthropicStream;

    let server = FakeServer::start().await.unwrap();
    let credential =
        Credential::from(AnthropicCredential::new("sk-ant").with_base_url(server.base_url()));
    for (class, max_tokens) in [("", 321), ("anthropic_chat", 654)] {
        server.push(AnthropicStream::text_reply("claude-test", &["Hi."], 3, 1).into_response());
        let config = ModelConfig::new("claude-test")
            .with_model_class(class)
            .with_parameter("max_tokens", max_tokens);
        let model = chat_model(&credential, &config).unwrap();
        let request = call_and_see(&server, model.as_ref()).await;
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some("sk-ant"));
        let body = request.body_json().unwrap();
        assert_eq!(body["model"], "claude-test");
        assert_eq!(body["max_tokens"], max_tokens);
    }
}

#[cfg(feature = "ollama")]
#[tokio::test]
async fn ollama_chat_calls_the_credential_host() {
    use oxiscope_test_support::FakeServer;
    use oxiscope_test_support::ollama::OllamaStream;

    let server = FakeServer::start().await.unwrap();
    let credential = Credential::from(OllamaCredential::new().with_host(server.base_url()));
    for class in ["", "ollama_chat"] {
        server.push(
            OllamaStream::new("qwen3")
                .content("Hi.")
                .done(3, 1)
                .into_response(),
        );
        let config = ModelConfig::new("qwen3")
            .with_model_class(class)
            .with_parameter("temperature", 0.5);
        let model = chat_model(&credential, &config).unwrap();
        let request = call_and_see(&server, model.as_ref()).await;
        assert_eq!(request.path, "/api/chat");
        let body = request.body_json().unwrap();
        assert_eq!(body["model"], "qwen3");
        assert_eq!(body["options"]["temperature"], 0.5);
    }
}

/// Asks `model` one question and returns the request the server saw.
#[cfg(any(feature = "openai", feature = "anthropic", feature = "ollama"))]
async fn call_and_see(
    server: &oxiscope_test_support::FakeServer,
    model: &dyn DynChatModel,
) -> oxiscope_test_support::RecordedRequest {
    use futures_util::StreamExt;
    use oxiscope_message::Msg;
    use oxiscope_model::ChatRequest;
    use tokio_util::sync::CancellationToken;

    let before = server.request_count();
    let messages = [Msg::user("user", "hi").unwrap()];
    let request = ChatRequest {
        messages: &messages,
        tools: &[],
        tool_choice: None,
    };
    let stream = model
        .call_boxed(request, CancellationToken::new())
        .await
        .unwrap();
    let chunks: Vec<_> = stream.collect().await;
    assert!(chunks.last().unwrap().as_ref().unwrap().is_last);
    server.requests().remove(before)
}

#[test]
fn parameters_of_the_wrong_type_are_refused() {
    let cases: [(Credential, &str, bool); 2] = [
        (
            AnthropicCredential::new("sk").into(),
            "anthropic_chat",
            cfg!(feature = "anthropic"),
        ),
        (
            OllamaCredential::new().into(),
            "ollama_chat",
            cfg!(feature = "ollama"),
        ),
    ];
    for (credential, class, built_in) in cases {
        let config = ModelConfig::new("m").with_parameter("max_tokens", "lots");
        let message = refusal(chat_model(&credential, &config));
        let expected = if built_in {
            format!("the parameters of {class}: ")
        } else {
            "feature of oxiscope-providers".to_owned()
        };
        assert!(message.contains(&expected), "{message}");
    }
}

#[test]
fn a_family_left_out_of_the_build_is_refused_by_class() {
    let cases: [(Credential, &str, &str, bool); 3] = [
        (
            AnthropicCredential::new("sk").into(),
            "anthropic_chat",
            "anthropic",
            cfg!(feature = "anthropic"),
        ),
        (
            OllamaCredential::new().into(),
            "ollama_chat",
            "ollama",
            cfg!(feature = "ollama"),
        ),
        (
            DeepSeekCredential::new("sk").into(),
            "deepseek_chat",
            "openai",
            cfg!(feature = "openai"),
        ),
    ];
    for (credential, class, feature, built_in) in cases {
        let result = chat_model(&credential, &ModelConfig::new("m"));
        if built_in {
            assert!(result.is_ok(), "{class}: {result:?}");
        } else {
            assert_eq!(
                refusal(result),
                format!(
                    "model class {class} needs the `{feature}` feature of oxiscope-providers, \
                     which this build leaves out"
                )
            );
        }
    }
}

#[test]
fn openai_response_builds_from_an_openai_credential_and_refuses_another() {
    let openai = Credential::from(OpenAiCredential::new("sk"));
    let config = ModelConfig::new("o4-mini")
        .with_model_class("openai_response")
        .with_parameter("reasoning_effort", "low");
    let result = chat_model(&openai, &config);
    if cfg!(feature = "openai_response") {
        let model = result.unwrap();
        assert_eq!(model.model_name(), "o4-mini");
        let bad = config.clone().with_parameter("max_tokens", "lots");
        let message = refusal(chat_model(&openai, &bad));
        assert!(
            message.starts_with("the parameters of openai_response: "),
            "{message}"
        );
    } else {
        assert!(refusal(result).contains("`openai_response` feature"));
    }
    let anthropic = Credential::from(AnthropicCredential::new("sk"));
    assert_eq!(
        refusal(chat_model(&anthropic, &config)),
        "model class openai_response takes a credential of type openai_credential, not \
         anthropic_credential"
    );
}

#[cfg(feature = "minimax")]
#[tokio::test]
async fn minimax_chat_builds_from_a_minimax_credential_and_refuses_another() {
    use oxiscope_model::MiniMaxCredential;
    use oxiscope_test_support::FakeServer;
    use oxiscope_test_support::anthropic::AnthropicStream;

    let server = FakeServer::start().await.unwrap();
    let credential =
        Credential::from(MiniMaxCredential::new("mm-key").with_base_url(server.base_url()));
    for class in ["", "minimax_chat"] {
        server.push(AnthropicStream::text_reply("MiniMax-M3", &["Hi."], 3, 1).into_response());
        let config = ModelConfig::new("MiniMax-M3")
            .with_model_class(class)
            .with_parameter("thinking_enable", true);
        let model = chat_model(&credential, &config).unwrap();
        assert_eq!(model.context_size(), Some(1_000_000));
        let request = call_and_see(&server, model.as_ref()).await;
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some("mm-key"));
        let body = request.body_json().unwrap();
        assert_eq!(body["model"], "MiniMax-M3");
        assert_eq!(body["max_tokens"], 131_072, "the card's output size");
        assert_eq!(body["thinking"], serde_json::json!({"type": "adaptive"}));
    }
    let bad = ModelConfig::new("MiniMax-M3").with_parameter("max_tokens", 0);
    assert!(refusal(chat_model(&credential, &bad)).starts_with("the parameters of minimax_chat: "));
    let anthropic = Credential::from(AnthropicCredential::new("sk"));
    let config = ModelConfig::new("MiniMax-M3").with_model_class("minimax_chat");
    assert_eq!(
        refusal(chat_model(&anthropic, &config)),
        "model class minimax_chat takes a credential of type minimax_credential, not \
         anthropic_credential"
    );
}

#[test]
fn gemini_chat_builds_from_a_gemini_credential_and_refuses_another() {
    let gemini = Credential::from(GeminiCredential::new("key"));
    for config in [
        ModelConfig::new("gemini-2.5-pro").with_model_class("gemini_chat"),
        // An empty class means the credential's own.
        ModelConfig::new("gemini-2.5-pro").with_parameter("thinking_enable", true),
    ] {
        let result = chat_model(&gemini, &config);
        if cfg!(feature = "gemini") {
            let model = result.unwrap();
            assert_eq!(model.model_name(), "gemini-2.5-pro");
            assert_eq!(model.context_size(), Some(1_048_576));
        } else {
            assert!(refusal(result).contains("`gemini` feature"));
        }
    }
    if cfg!(feature = "gemini") {
        let bad = ModelConfig::new("gemini-2.5-pro").with_parameter("temperature", 9);
        assert!(
            refusal(chat_model(&gemini, &bad)).starts_with("the parameters of gemini_chat: "),
            "out-of-range temperature"
        );
    }
    let openai = Credential::from(OpenAiCredential::new("sk"));
    let config = ModelConfig::new("gemini-2.5-pro").with_model_class("gemini_chat");
    assert_eq!(
        refusal(chat_model(&openai, &config)),
        "model class gemini_chat takes a credential of type gemini_credential, not \
         openai_credential"
    );
}
