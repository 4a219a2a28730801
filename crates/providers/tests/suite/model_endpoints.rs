//! Model endpoints restricted to public addresses through the model factory,
//! for every family: a credential pointing at this machine or a cloud
//! metadata address builds, but its calls fail with a clear error naming the
//! endpoint and the rule, and nothing reaches the endpoint.

use std::sync::Arc;

use oxiscope_message::{Msg, TextBlock};
use oxiscope_model::{
    AnthropicCredential, Credential, DynChatModel, ModelError, OllamaCredential, OpenAiCredential,
};
use oxiscope_providers::{Endpoints, MediaPolicy, ModelConfig, chat_model_with};
use oxiscope_test_support::chat::{drain, request};
use oxiscope_test_support::{FakeServer, OpenAiScript};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

fn public_only() -> MediaPolicy {
    MediaPolicy::default().with_endpoints(Endpoints::PublicOnly)
}

async fn call(model: &Arc<dyn DynChatModel>) -> Result<(), ModelError> {
    let msgs = vec![Msg::user("user", vec![TextBlock::new("Hi").into()]).unwrap()];
    let stream = model
        .call_boxed(request(&msgs), CancellationToken::new())
        .await?;
    match drain(stream).await {
        (_, Some(err)) => Err(err),
        (_, None) => Ok(()),
    }
}

/// The message of the invalid request a call fails with.
async fn refusal(model: &Arc<dyn DynChatModel>) -> String {
    match call(model).await {
        Err(ModelError::InvalidRequest { message }) => message,
        other => panic!("expected a refused endpoint, got {other:?}"),
    }
}

#[tokio::test]
async fn every_family_refuses_a_loopback_endpoint_without_sending() {
    let server = FakeServer::start().await.unwrap();
    let credentials = [
        (
            Credential::from(OpenAiCredential::new("sk-test").with_base_url(server.url("/v1"))),
            "gpt-4.1",
        ),
        (
            Credential::from(AnthropicCredential::new("sk-test").with_base_url(server.base_url())),
            "claude-sonnet-4-5",
        ),
        (
            Credential::from(OllamaCredential::new().with_host(server.base_url())),
            "llama3",
        ),
    ];
    for (credential, name) in credentials {
        let model = chat_model_with(&credential, &ModelConfig::new(name), &public_only()).unwrap();
        let message = refusal(&model).await;
        assert!(
            message.starts_with(&format!("the model endpoint {}", server.base_url()))
                && message.contains("a loopback address (127.0.0.1)")
                && message.contains("restricted to public addresses"),
            "{name}: {message}"
        );
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_metadata_base_url_is_refused_before_any_connection() {
    let credential = Credential::from(
        OpenAiCredential::new("sk-test").with_base_url("http://169.254.169.254/v1"),
    );
    let model = chat_model_with(&credential, &ModelConfig::new("gpt-4.1"), &public_only()).unwrap();

    let message = refusal(&model).await;

    assert!(
        message.starts_with(
            "the model endpoint http://169.254.169.254/v1/chat/completions resolves to a \
             link-local address"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn the_default_policy_still_reaches_a_local_server() {
    let server = FakeServer::start().await.unwrap();
    server.push(OpenAiScript::new().text("Hello.").finish("stop").response());
    let credential =
        Credential::from(OpenAiCredential::new("sk-test").with_base_url(server.url("/v1")));
    let model = chat_model_with(
        &credential,
        &ModelConfig::new("gpt-4.1"),
        &MediaPolicy::default(),
    )
    .unwrap();

    call(&model).await.unwrap();

    assert_eq!(server.request_count(), 1);
}
