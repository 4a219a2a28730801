//! The media policy through the model factory, for every family: a data
//! block naming a file outside the allowed roots, or an internal address,
//! fails the call with a clear error before anything is sent; one inside
//! the roots reaches the provider as bytes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oxiscope_http::reqwest::Url;
use oxiscope_message::{DataBlock, DataSource, Msg, TextBlock, UrlSource};
use oxiscope_model::{
    AnthropicCredential, Credential, DynChatModel, ModelError, MoonshotCredential,
    OllamaCredential, OpenAiCredential,
};
use oxiscope_providers::{MediaPolicy, ModelConfig, RemoteMedia, chat_model_with};
use oxiscope_test_support::anthropic::AnthropicStream;
use oxiscope_test_support::chat::{drain, request};
use oxiscope_test_support::ollama::OllamaStream;
use oxiscope_test_support::{FakeServer, OpenAiScript, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// `PNG` in base64, the bytes of the workspace's image.
const IMAGE_B64: &str = "iVBORw==";

/// A workspace holding `cat.png`, and a secret beside it.
struct Files {
    _tmp: tempfile::TempDir,
    workspace: PathBuf,
    secret: PathBuf,
}

fn files() -> Files {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    std::fs::write(workspace.join("cat.png"), b"\x89PNG").unwrap();
    let secret = tmp.path().join("secret.key");
    std::fs::write(&secret, b"hunter2").unwrap();
    Files {
        _tmp: tmp,
        workspace,
        secret,
    }
}

/// What a service gives a tenant's model.
fn service_policy(workspace: &Path) -> MediaPolicy {
    MediaPolicy {
        file_roots: Some(vec![workspace.to_path_buf()]),
        remote: RemoteMedia::PublicOnly,
        ..MediaPolicy::default()
    }
}

fn image_at(url: &str) -> Vec<Msg> {
    let block = DataBlock::new(DataSource::Url(UrlSource::new(url, "image/png").unwrap()));
    vec![
        Msg::user(
            "user",
            vec![TextBlock::new("What is this?").into(), block.into()],
        )
        .unwrap(),
    ]
}

fn file_url(path: &Path) -> String {
    Url::from_file_path(path).unwrap().to_string()
}

async fn call(model: &Arc<dyn DynChatModel>, msgs: &[Msg]) -> Result<(), ModelError> {
    let stream = model
        .call_boxed(request(msgs), CancellationToken::new())
        .await?;
    match drain(stream).await {
        (_, Some(err)) => Err(err),
        (_, None) => Ok(()),
    }
}

/// Asserts that a call with an image at `url` fails with an invalid
/// request naming the URL and containing `rule`, and sends nothing.
async fn assert_refused(model: &Arc<dyn DynChatModel>, server: &FakeServer, url: &str, rule: &str) {
    let err = call(model, &image_at(url)).await.unwrap_err();
    let ModelError::InvalidRequest { message } = &err else {
        panic!("{url}: not an invalid request: {err:?}");
    };
    assert!(
        message.starts_with(&format!("cannot inline media from {url}: ")) && message.contains(rule),
        "{url}: {message}"
    );
    assert_eq!(server.request_count(), 0, "{url} was sent");
}

/// The forbidden inputs every family refuses under the service policy.
async fn assert_forbidden_inputs_refused(
    model: &Arc<dyn DynChatModel>,
    server: &FakeServer,
    f: &Files,
) {
    let outside = "outside the directories media may be read from";
    assert_refused(model, server, &file_url(&f.secret), outside).await;
    let climbing = format!("{}/../secret.key", file_url(&f.workspace));
    let normalised = Url::parse(&climbing).unwrap().to_string();
    assert_refused(model, server, &normalised, outside).await;
    std::os::unix::fs::symlink(&f.secret, f.workspace.join("link.png")).unwrap();
    assert_refused(
        model,
        server,
        &file_url(&f.workspace.join("link.png")),
        outside,
    )
    .await;
}

/// The JSON body of the one request the server received.
fn sent_body(server: &FakeServer) -> Value {
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].body_json().unwrap()
}

#[tokio::test]
async fn openai_sends_a_workspace_file_and_refuses_others() {
    let f = files();
    let server = FakeServer::start().await.unwrap();
    let credential =
        Credential::from(OpenAiCredential::new("sk-test").with_base_url(server.url("/v1")));
    let model = chat_model_with(
        &credential,
        &ModelConfig::new("gpt-4.1"),
        &service_policy(&f.workspace),
    )
    .unwrap();

    assert_forbidden_inputs_refused(&model, &server, &f).await;

    server.push(OpenAiScript::new().text("A cat.").finish("stop").response());
    call(&model, &image_at(&file_url(&f.workspace.join("cat.png"))))
        .await
        .unwrap();
    let body = sent_body(&server);
    assert_eq!(
        body["messages"][0]["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{IMAGE_B64}")
    );
}

#[tokio::test]
async fn anthropic_sends_a_workspace_file_and_refuses_others() {
    let f = files();
    let server = FakeServer::start().await.unwrap();
    let credential =
        Credential::from(AnthropicCredential::new("sk-test").with_base_url(server.base_url()));
    let model = chat_model_with(
        &credential,
        &ModelConfig::new("claude-sonnet-4-5"),
        &service_policy(&f.workspace),
    )
    .unwrap();

    assert_forbidden_inputs_refused(&model, &server, &f).await;

    server
        .push(AnthropicStream::text_reply("claude-sonnet-4-5", &["A cat."], 3, 2).into_response());
    call(&model, &image_at(&file_url(&f.workspace.join("cat.png"))))
        .await
        .unwrap();
    let body = sent_body(&server);
    assert_eq!(
        body["messages"][0]["content"][1]["source"]["data"],
        IMAGE_B64
    );
}

#[tokio::test]
async fn ollama_sends_a_workspace_file_and_refuses_others() {
    let f = files();
    let server = FakeServer::start().await.unwrap();
    let credential = Credential::from(OllamaCredential::new().with_host(server.base_url()));
    let model = chat_model_with(
        &credential,
        &ModelConfig::new("llava"),
        &service_policy(&f.workspace),
    )
    .unwrap();

    assert_forbidden_inputs_refused(&model, &server, &f).await;

    server.push(
        OllamaStream::new("llava")
            .content("A cat.")
            .done(3, 2)
            .into_response(),
    );
    call(&model, &image_at(&file_url(&f.workspace.join("cat.png"))))
        .await
        .unwrap();
    let body = sent_body(&server);
    assert_eq!(body["messages"][0]["images"][0], IMAGE_B64);
}

#[tokio::test]
async fn downloads_follow_the_remote_rule_in_every_family() {
    let f = files();
    let server = FakeServer::start().await.unwrap();
    let media = FakeServer::start().await.unwrap();
    let port = media.addr().port();
    let credentials = [
        Credential::from(AnthropicCredential::new("k").with_base_url(server.base_url())),
        Credential::from(OllamaCredential::new().with_host(server.base_url())),
        // Moonshot takes no image URLs: the formatter downloads them.
        Credential::from(MoonshotCredential::new("k").with_base_url(server.url("/v1"))),
    ];
    for credential in &credentials {
        let config = ModelConfig::new("some-model");
        let public_only =
            chat_model_with(credential, &config, &service_policy(&f.workspace)).unwrap();
        for url in [
            media.url("/cat.png"),
            format!("http://localhost:{port}/cat.png"),
            "http://169.254.169.254/latest/meta-data/iam/".to_owned(),
        ] {
            assert_refused(&public_only, &server, &url, "which is not fetched").await;
        }
        let deny = service_policy(&f.workspace).with_remote(RemoteMedia::Deny);
        let deny = chat_model_with(credential, &config, &deny).unwrap();
        assert_refused(
            &deny,
            &server,
            &media.url("/cat.png"),
            "not downloaded here",
        )
        .await;
    }
    assert_eq!(media.request_count(), 0);

    // The default policy (a library user's) still downloads from anywhere.
    media.push(ScriptedResponse::new(200).with_body(b"\x89PNG".to_vec()));
    server.push(
        OllamaStream::new("llava")
            .content("A cat.")
            .done(3, 2)
            .into_response(),
    );
    let credential = Credential::from(OllamaCredential::new().with_host(server.base_url()));
    let model = oxiscope_providers::chat_model(&credential, &ModelConfig::new("llava")).unwrap();
    call(&model, &image_at(&media.url("/cat.png")))
        .await
        .unwrap();
    assert_eq!(sent_body(&server)["messages"][0]["images"][0], IMAGE_B64);
}

#[tokio::test]
async fn a_model_policy_reaches_formatters_given_before_or_after_it() {
    use oxiscope_providers::anthropic::{AnthropicChatFormatter, AnthropicChatModel};
    use oxiscope_providers::openai_chat::{OpenAiChatFormatter, OpenAiChatModel, Vendor};

    let f = files();
    let msgs = image_at(&file_url(&f.secret));
    let policy = service_policy(&f.workspace);
    let refused = |result: Result<Value, ModelError>| matches!(result, Err(ModelError::InvalidRequest { message }) if message.contains("outside"));

    let anthropic = AnthropicChatModel::new("k", "claude-sonnet-4-5")
        .unwrap()
        .with_media_policy(policy.clone())
        .with_chat_formatter(AnthropicChatFormatter::new());
    assert!(refused(anthropic.request_body(request(&msgs)).await));

    for formatter in [
        OpenAiChatFormatter::chat(Vendor::OpenAi),
        OpenAiChatFormatter::multi_agent(Vendor::OpenAi),
    ] {
        let openai = OpenAiChatModel::builder("gpt-4.1")
            .with_media_policy(policy.clone())
            .with_formatter(formatter)
            .build()
            .unwrap();
        assert!(refused(openai.request_body(request(&msgs)).await));
    }
}
