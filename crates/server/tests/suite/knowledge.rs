//! Knowledge bases through the API, embedding with the deterministic
//! hashing embedder (the offline model's test is `knowledge_offline`):
//! the catalogue routes, knowledge-base CRUD, uploads indexed in the
//! background and searched, downloads with tokens, agents searching
//! attached knowledge bases, hostile uploads, indexing after a restart.

use std::io::Write as _;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use oxiscope_rag::{HashingEmbedder, ParseLimits};
use oxiscope_server::{AppState, AuthMode, KnowledgeSettings, Sealer, ServerConfig, app};
use oxiscope_storage::{InMemoryBus, KnowledgeDocumentRecord, SqliteStorage};
use oxiscope_test_support::OpenAiScript;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer};

pub(crate) const DIMENSIONS: u32 = 64;

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/knowledge/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

pub(crate) const VOLCANO: &str = "Volcanoes erupt molten rock called lava. Lava flows \
    downhill and cools into basalt. Magma chambers feed every eruption.";

/// Settings with the hashing embedder as the offline model, a 1 MiB
/// upload limit and an 8 MiB inflation limit.
pub(crate) fn settings() -> KnowledgeSettings {
    let dims = NonZeroU32::new(DIMENSIONS).unwrap();
    KnowledgeSettings::default()
        .with_offline_model(Arc::new(HashingEmbedder::new(dims)))
        .with_max_upload_bytes(1 << 20)
        .with_parse_limits(ParseLimits {
            max_decompressed_bytes: 8 << 20,
            ..ParseLimits::default()
        })
}

async fn start() -> Harness {
    Harness::start_custom(AuthMode::DevHeader, |c| c.with_knowledge(settings())).await
}

pub(crate) async fn create_kb(h: &Harness, user: &str, name: &str, dimensions: u32) -> String {
    let (code, body) = h
        .post(
            "/knowledge_bases/",
            user,
            json!({
                "name": name,
                "description": "Facts about nature.",
                "embedding_model_config": {"type": "local", "credential_id": "local", "model": "offline", "dimensions": dimensions},
                "chunker_config": {"type": "approx_token", "parameters": {"chunk_size": 64, "overlap": 8}},
            }),
        )
        .await;
    assert_eq!(code, 201, "{body}");
    body["knowledge_base_id"].as_str().unwrap().to_owned()
}

/// Uploads `bytes` as `filename` (with a `content_type` field when given).
pub(crate) async fn upload(
    h: &Harness,
    user: &str,
    kb: &str,
    filename: &str,
    bytes: &[u8],
    content_type: Option<&str>,
) -> (u16, Value) {
    let boundary = "kbBoundary9f8e7d6c5b4a";
    let mut body = Vec::new();
    body.extend(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend(bytes);
    body.extend(b"\r\n");
    if let Some(ct) = content_type {
        body.extend(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"content_type\"\r\n\r\n{ct}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend(format!("--{boundary}--\r\n").as_bytes());
    let res = h
        .http
        .post(format!("{}/knowledge_bases/{kb}/documents", h.base))
        .header("x-user-id", user)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    let code = res.status().as_u16();
    let text = res.text().await.unwrap();
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Waits until every document of `ids` is `ready` or `error`.
pub(crate) async fn wait_indexed(h: &Harness, user: &str, kb: &str, ids: &[&str]) -> Vec<Value> {
    let path = format!(
        "/knowledge_bases/{kb}/documents/status?ids={}",
        ids.join(",")
    );
    for _ in 0..3000 {
        let (code, body) = h.get(&path, user).await;
        assert_eq!(code, 200, "{body}");
        let items = body["items"].as_array().unwrap().clone();
        if items.len() == ids.len()
            && items
                .iter()
                .all(|d| d["status"] == "ready" || d["status"] == "error")
        {
            return items;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("indexing did not finish");
}

pub(crate) async fn search(h: &Harness, user: &str, kb: &str, query: &str) -> Vec<Value> {
    let (code, body) = h
        .post(
            &format!("/knowledge_bases/{kb}/search"),
            user,
            json!({"query": query, "top_k": 3}),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["total"], body["results"].as_array().unwrap().len());
    body["results"].as_array().unwrap().clone()
}

/// Uploads the text, PDF and Word documents; their ids, once indexed.
pub(crate) async fn upload_three(h: &Harness, user: &str, kb: &str) -> [String; 3] {
    let mut ids = Vec::new();
    for (name, bytes) in [
        ("volcanoes.txt", VOLCANO.as_bytes().to_vec()),
        ("sample.pdf", fixture("sample.pdf")),
        ("sample.docx", fixture("sample.docx")),
    ] {
        let (code, body) = upload(h, user, kb, name, &bytes, None).await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["filename"], name);
        assert_eq!(body["status"], "pending");
        ids.push(body["document_id"].as_str().unwrap().to_owned());
    }
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let items = wait_indexed(h, user, kb, &refs).await;
    for item in &items {
        assert_eq!(item["status"], "ready", "{item}");
        assert!(item["chunk_count"].as_i64().unwrap() > 0, "{item}");
    }
    [ids[0].clone(), ids[1].clone(), ids[2].clone()]
}

/// The reference document (AgentScope's, stripped of prose).
fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/agentscope-2.0.11/openapi.stripped.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `value` validates against the reference's component schema `name`.
fn assert_shape(reference: &Value, name: &str, value: &Value) {
    let schema = json!({
        "$ref": format!("#/components/schemas/{name}"),
        "components": reference["components"],
    });
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{value}");
}

#[tokio::test]
async fn every_reference_knowledge_operation_is_documented_alike() {
    let reference = reference();
    let ours = oxiscope_server::openapi_document(AuthMode::DevHeader);
    let names = |op: &Value| -> std::collections::BTreeSet<(String, String, bool)> {
        op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_owned(),
                    p["in"].as_str().unwrap().to_owned(),
                    p["required"].as_bool().unwrap_or(false),
                )
            })
            .collect()
    };
    let mut checked = 0;
    for (path, item) in reference["paths"].as_object().unwrap() {
        if !path.starts_with("/knowledge_bases") {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            checked += 1;
            let mine = &ours["paths"][path][method];
            assert!(mine.is_object(), "missing {method} {path}");
            assert_eq!(names(mine), names(op), "{method} {path}");
            let codes = |o: &Value| -> Vec<String> {
                o["responses"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .cloned()
                    .collect()
            };
            assert_eq!(codes(mine), codes(op), "{method} {path}");
        }
    }
    assert_eq!(checked, 16);
}

#[tokio::test]
async fn catalogue_routes_answer_in_agentscope_shapes() {
    let h = start().await;
    let reference = reference();
    let (code, models) = h.get("/knowledge_bases/embedding_models", "alice").await;
    assert_eq!(code, 200, "{models}");
    assert_shape(&reference, "ListKbEmbeddingModelsResponse", &models);
    assert_eq!(models["providers"][0]["credential"]["id"], "local");
    assert_eq!(models["providers"][0]["models"][0]["dimensions"], 384);
    // A credential that drives embedding models is offered too.
    h.setup("alice").await;
    let (_, models) = h.get("/knowledge_bases/embedding_models", "alice").await;
    assert_eq!(models["providers"].as_array().unwrap().len(), 2, "{models}");
    assert_eq!(
        models["providers"][1]["credential"]["data"]["api_key"],
        oxiscope_model::SECRET_MASK
    );

    let (code, chunkers) = h.get("/knowledge_bases/chunkers", "alice").await;
    assert_eq!(code, 200);
    assert_shape(&reference, "ListChunkersResponse", &chunkers);
    assert_eq!(chunkers["chunkers"][0]["type"], "approx_token");

    let (code, types) = h
        .get("/knowledge_bases/supported_content_types", "alice")
        .await;
    assert_eq!(code, 200);
    assert_shape(&reference, "ListSupportedContentTypesResponse", &types);
    for media in ["application/pdf", "text/plain"] {
        assert!(
            types["media_types"]
                .as_array()
                .unwrap()
                .contains(&json!(media))
        );
    }
    assert!(
        types["extensions"]
            .as_array()
            .unwrap()
            .contains(&json!(".docx"))
    );

    let (code, schema) = h
        .get("/knowledge_bases/middleware/parameters_schema", "alice")
        .await;
    assert_eq!(code, 200);
    assert_shape(&reference, "KbMiddlewareParametersSchemaResponse", &schema);
    assert_eq!(
        schema["parameter_schema"]["properties"]["mode"]["enum"],
        json!(["static", "agentic"])
    );
}

#[tokio::test]
async fn knowledge_bases_are_created_listed_renamed_and_deleted_per_user() {
    let h = start().await;
    let reference = reference();
    let first = create_kb(&h, "alice", "Volcanoes", DIMENSIONS).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = create_kb(&h, "alice", "Cats", DIMENSIONS).await;

    let (code, list) = h.get("/knowledge_bases/", "alice").await;
    assert_eq!(code, 200, "{list}");
    assert_shape(&reference, "ListKnowledgeBasesResponse", &list);
    assert_eq!(list["total"], 2);
    // Newest first by default.
    assert_eq!(list["knowledge_bases"][0]["id"], second.as_str());
    let view = &list["knowledge_bases"][1];
    assert_eq!(view["name"], "Volcanoes");
    assert_eq!(view["description"], "Facts about nature.");
    assert_eq!(view["credential_name"], "Offline (built in)");
    assert_eq!(view["document_count"], 0);
    assert_eq!(view["embedding_model_config"]["dimensions"], DIMENSIONS);

    let (_, page) = h
        .get("/knowledge_bases/?page_size=1&page=2&desc=false", "alice")
        .await;
    assert_eq!(page["total"], 2);
    assert_eq!(page["knowledge_bases"][0]["id"], second.as_str());
    let (_, named) = h.get("/knowledge_bases/?name=VOLC", "alice").await;
    assert_eq!(named["total"], 1);
    let (_, by_id) = h
        .get(&format!("/knowledge_bases/?id={first}"), "alice")
        .await;
    assert_eq!(by_id["knowledge_bases"][0]["name"], "Volcanoes");
    assert_eq!(
        h.get("/knowledge_bases/?page_size=500", "alice").await.0,
        422
    );
    assert_eq!(
        h.get("/knowledge_bases/?orderby=name", "alice").await.0,
        422
    );

    // Another user sees nothing and changes nothing.
    let (_, theirs) = h.get("/knowledge_bases/", "bob").await;
    assert_eq!(theirs["total"], 0);
    let path = format!("/knowledge_bases/{first}");
    let rename = json!({"name": "Lava"});
    let (code, _) = h
        .call(reqwest::Method::PATCH, &path, "bob", Some(rename.clone()))
        .await;
    assert_eq!(code, 404);
    assert_eq!(
        h.call(reqwest::Method::DELETE, &path, "bob", None).await.0,
        404
    );

    let (code, renamed) = h
        .call(reqwest::Method::PATCH, &path, "alice", Some(rename))
        .await;
    assert_eq!(code, 200, "{renamed}");
    assert_shape(&reference, "KnowledgeBaseView", &renamed);
    assert_eq!(renamed["name"], "Lava");

    // Wrong sizes and unknown chunkers are refused.
    let (code, _) = h
        .post(
            "/knowledge_bases/",
            "alice",
            json!({"name": "x", "embedding_model_config": {"type": "local", "credential_id": "local", "model": "m", "dimensions": 3}}),
        )
        .await;
    assert_eq!(code, 422);
    let (code, _) = h
        .post(
            "/knowledge_bases/",
            "alice",
            json!({"name": "x", "embedding_model_config": {"type": "local", "credential_id": "local", "model": "m", "dimensions": DIMENSIONS},
                   "chunker_config": {"type": "sentence"}}),
        )
        .await;
    assert_eq!(code, 422);
    let (code, _) = h
        .post(
            "/knowledge_bases/",
            "alice",
            json!({"name": "x", "embedding_model_config": {"type": "openai_credential", "credential_id": "nope", "model": "m", "dimensions": 8}}),
        )
        .await;
    assert_eq!(code, 404);

    let (code, _) = h.call(reqwest::Method::DELETE, &path, "alice", None).await;
    assert_eq!(code, 204);
    let (_, list) = h.get("/knowledge_bases/", "alice").await;
    assert_eq!(list["total"], 1);
}

#[tokio::test]
async fn documents_are_indexed_searched_downloaded_and_deleted() {
    let h = start().await;
    let reference = reference();
    let kb = create_kb(&h, "alice", "Nature", DIMENSIONS).await;
    let [text, pdf, docx] = upload_three(&h, "alice", &kb).await;

    let (code, docs) = h
        .get(&format!("/knowledge_bases/{kb}/documents"), "alice")
        .await;
    assert_eq!(code, 200, "{docs}");
    assert_shape(&reference, "ListKnowledgeDocumentsResponse", &docs);
    assert_eq!(docs["total"], 3);
    let (_, only_pdf) = h
        .get(
            &format!("/knowledge_bases/{kb}/documents?keywords=PDF&status=ready"),
            "alice",
        )
        .await;
    assert_eq!(only_pdf["documents"][0]["id"], pdf.as_str());
    assert_eq!(only_pdf["documents"][0]["content_type"], "application/pdf");

    let hits = search(&h, "alice", &kb, "volcanoes lava eruption").await;
    assert_shape(
        &reference,
        "SearchKnowledgeBaseResponse",
        &json!({"results": hits, "total": hits.len()}),
    );
    assert_eq!(hits[0]["document_id"], text.as_str());
    assert!(
        hits[0]["chunk"]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("lava")
    );
    let hits = search(&h, "alice", &kb, "Second page text").await;
    assert_eq!(hits[0]["document_id"], pdf.as_str());
    let hits = search(&h, "alice", &kb, "Cats sleep hours per day").await;
    assert_eq!(hits[0]["document_id"], docx.as_str());

    let (code, chunks) = h
        .get(
            &format!("/knowledge_bases/{kb}/documents/{pdf}/chunks?page_size=10"),
            "alice",
        )
        .await;
    assert_eq!(code, 200, "{chunks}");
    assert_shape(&reference, "ListDocumentChunksResponse", &chunks);
    let texts: Vec<&str> = chunks["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("Second page text.")),
        "{texts:?}"
    );

    // Downloads: as the owner, or with a token and no identity.
    let doc_path = format!("/knowledge_bases/{kb}/documents/{pdf}");
    let res = h
        .http
        .get(format!("{}{doc_path}?download=true", h.base))
        .header("x-user-id", "alice")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert!(
        res.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment")
    );
    assert_eq!(res.bytes().await.unwrap().to_vec(), fixture("sample.pdf"));
    let (code, token) = h
        .post(&format!("{doc_path}/download_token"), "alice", json!({}))
        .await;
    assert_eq!(code, 200, "{token}");
    assert_shape(&reference, "DocumentDownloadTokenResponse", &token);
    let token = token["token"].as_str().unwrap();
    let res = h
        .http
        .get(format!("{}{doc_path}?token={token}", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), fixture("sample.pdf"));
    let other = h
        .http
        .get(format!(
            "{}/knowledge_bases/{kb}/documents/{text}?token={token}",
            h.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status().as_u16(), 403);
    let forged = h
        .http
        .get(format!("{}{doc_path}?token=abc", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status().as_u16(), 401);
    assert_eq!(h.get(&doc_path, "bob").await.0, 404);

    // A deleted document is no longer found.
    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/knowledge_bases/{kb}/documents/{docx}"),
            "alice",
            None,
        )
        .await;
    assert_eq!(code, 204);
    let hits = search(&h, "alice", &kb, "Cats sleep hours per day").await;
    assert!(
        hits.iter().all(|hit| hit["document_id"] != docx.as_str()),
        "{hits:?}"
    );
    let (_, status) = h
        .get(
            &format!("/knowledge_bases/{kb}/documents/status?ids={docx},{text}"),
            "alice",
        )
        .await;
    assert_eq!(status["items"].as_array().unwrap().len(), 1);
    let (_, list) = h.get("/knowledge_bases/", "alice").await;
    assert_eq!(list["knowledge_bases"][0]["document_count"], 2);
    assert_eq!(list["knowledge_bases"][0]["status_counts"]["ready"], 2);

    // Deleting the knowledge base takes its files and vectors along.
    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/knowledge_bases/{kb}"),
            "alice",
            None,
        )
        .await;
    assert_eq!(code, 204);
    assert!(!h.dir.path().join("knowledge").join(&kb).exists());
    let (code, _) = h
        .post(
            &format!("/knowledge_bases/{kb}/search"),
            "alice",
            json!({"query": "lava"}),
        )
        .await;
    assert_eq!(code, 404);
    assert_eq!(h.get(&doc_path, "alice").await.0, 404);
}

/// Attaches `kb` to the session with these middleware parameters.
pub(crate) async fn attach(h: &Harness, user: &str, s: &Setup, kb: &str, parameters: Value) {
    let (code, body) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id),
            user,
            Some(
                json!({"knowledge_config": {"knowledge_base_ids": [kb], "parameters": parameters}}),
            ),
        )
        .await;
    assert_eq!(code, 200, "{body}");
}

/// Runs one reply to `text`; returns the model requests it made.
pub(crate) async fn run_reply(h: &Harness, user: &str, s: &Setup, text: &str) -> Vec<String> {
    let before = h.fake.request_count();
    let mut sse = h.subscribe(user, s, None).await;
    let (code, body) = h.chat(user, s, user_msg(text)).await;
    assert_eq!(code, 200, "{body}");
    sse.until("REPLY_END").await;
    h.wait_not_running(user, s).await;
    h.fake.requests()[before..]
        .iter()
        .map(oxiscope_test_support::RecordedRequest::body_text)
        .collect()
}

/// Whether a chat-completions request offers the `search_knowledge` tool.
fn offers_search(request: &str) -> bool {
    let body: Value = serde_json::from_str(request).unwrap();
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["function"]["name"] == "search_knowledge")
}

/// The agentic run: the model calls `search_knowledge`, the next request
/// carries the hits; the static run: the first request carries the hint.
pub(crate) async fn agents_find_the_volcano(h: &Harness, user: &str, kb: &str) {
    let s = h.setup(user).await;
    attach(h, user, &s, kb, json!({"mode": "agentic", "top_k": 2})).await;
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "search_knowledge")
            .tool_args(0, json!({"query": "volcanoes lava eruption"}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    h.fake.push(text_answer("Lava cools into basalt."));
    let requests = run_reply(h, user, &s, "What happens to lava?").await;
    assert_eq!(requests.len(), 2);
    assert!(offers_search(&requests[0]), "the tool is offered");
    assert!(!requests[0].contains("cools into basalt"));
    assert!(requests[1].contains("cools into basalt"), "{}", requests[1]);
    assert!(requests[1].contains("volcanoes.txt"));

    attach(h, user, &s, kb, json!({"mode": "static", "top_k": 2})).await;
    h.fake.push(text_answer("Basalt."));
    let requests = run_reply(h, user, &s, "Tell me about volcanoes, lava and eruption").await;
    assert_eq!(requests.len(), 1);
    assert!(!offers_search(&requests[0]), "static mode offers no tool");
    assert!(requests[0].contains("cools into basalt"), "{}", requests[0]);
}

#[tokio::test]
async fn agents_search_the_knowledge_bases_attached_to_their_session() {
    let h = start().await;
    let kb = create_kb(&h, "alice", "Nature", DIMENSIONS).await;
    upload_three(&h, "alice", &kb).await;
    agents_find_the_volcano(&h, "alice", &kb).await;
}

/// A zip whose one deflated entry inflates to 64 MiB of zeros.
fn zip_bomb() -> Vec<u8> {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        encoder.write_all(&zeros).unwrap();
    }
    let deflated = encoder.finish().unwrap();
    let name = "word/document.xml";
    let size: u32 = 64 << 20;
    let compressed = u32::try_from(deflated.len()).unwrap();
    let name_len = u16::try_from(name.len()).unwrap();
    let mut out = Vec::new();
    out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
    out.extend_from_slice(&[20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&compressed.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&deflated);
    let central = u32::try_from(out.len()).unwrap();
    out.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    out.extend_from_slice(&[20, 0, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&compressed.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&[0; 12]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    let central_len = u32::try_from(out.len()).unwrap() - central;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
    out.extend_from_slice(&central_len.to_le_bytes());
    out.extend_from_slice(&central.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

#[tokio::test]
async fn hostile_uploads_are_refused_or_fail_cleanly() {
    let h = start().await;
    let kb = create_kb(&h, "alice", "Nature", DIMENSIONS).await;

    let (code, body) = upload(&h, "alice", &kb, "big.txt", &vec![b'a'; 2 << 20], None).await;
    assert_eq!(code, 413, "{body}");
    let (code, body) = upload(&h, "alice", &kb, "tool.exe", b"MZ\x90\x00", None).await;
    assert_eq!(code, 415, "{body}");
    let (code, body) = upload(
        &h,
        "alice",
        &kb,
        "notes.txt",
        b"hello",
        Some("application/x-msdownload"),
    )
    .await;
    assert_eq!(code, 415, "{body}");
    // Nothing was kept of the refused uploads.
    let dir = h.dir.path().join("knowledge").join(&kb);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let (_, docs) = h
        .get(&format!("/knowledge_bases/{kb}/documents"), "alice")
        .await;
    assert_eq!(docs["total"], 0);

    // A path in the file name is dropped.
    let (code, body) = upload(
        &h,
        "alice",
        &kb,
        "../../../etc/evil.txt",
        b"calm words",
        None,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["filename"], "evil.txt");

    // A zip bomb in Word's clothing fails indexing, with the reason.
    let (code, body) = upload(&h, "alice", &kb, "bomb.docx", &zip_bomb(), None).await;
    assert_eq!(code, 201, "{body}");
    let id = body["document_id"].as_str().unwrap().to_owned();
    let items = wait_indexed(&h, "alice", &kb, &[&id]).await;
    assert_eq!(items[0]["status"], "error");
    assert!(
        items[0]["error"].as_str().unwrap().contains("decompresses"),
        "{}",
        items[0]
    );
    // A damaged PDF too.
    let (_, body) = upload(&h, "alice", &kb, "broken.pdf", b"%PDF-1.4 garbage", None).await;
    let id = body["document_id"].as_str().unwrap().to_owned();
    assert_eq!(
        wait_indexed(&h, "alice", &kb, &[&id]).await[0]["status"],
        "error"
    );

    // Another user's knowledge base is not found, whatever the route.
    let (code, _) = upload(&h, "mallory", &kb, "a.txt", b"x", None).await;
    assert_eq!(code, 404);
    assert_eq!(
        h.get(&format!("/knowledge_bases/{kb}/documents"), "mallory")
            .await
            .0,
        404
    );
    let (code, _) = h
        .post(
            &format!("/knowledge_bases/{kb}/search"),
            "mallory",
            json!({"query": "calm"}),
        )
        .await;
    assert_eq!(code, 404);
    let (code, _) = h
        .post(
            &format!("/knowledge_bases/{kb}/search"),
            "alice",
            json!({"query": "calm", "top_k": 0}),
        )
        .await;
    assert_eq!(code, 422);
    // A form without a file.
    let res = h
        .http
        .post(format!("{}/knowledge_bases/{kb}/documents", h.base))
        .header("x-user-id", "alice")
        .header("content-type", "multipart/form-data; boundary=b")
        .body("--b\r\nContent-Disposition: form-data; name=\"content_type\"\r\n\r\ntext/plain\r\n--b--\r\n")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 422);
}

#[tokio::test]
async fn documents_left_unfinished_are_indexed_after_a_restart() {
    let h = start().await;
    let kb = create_kb(&h, "alice", "Nature", DIMENSIONS).await;
    // A server stopped while this document was being parsed.
    let id = oxiscope_storage::new_id();
    let dir = h.dir.path().join("knowledge").join(&kb);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&id), VOLCANO).unwrap();
    let doc = KnowledgeDocumentRecord {
        id: id.clone(),
        knowledge_base_id: kb.clone(),
        user_id: "alice".into(),
        filename: "volcanoes.txt".into(),
        content_type: Some("text/plain".into()),
        size: VOLCANO.len() as i64,
        status: "parsing".into(),
        error: None,
        chunk_count: 0,
        created_at: oxiscope_storage::now(),
        updated_at: oxiscope_storage::now(),
    };
    h.state
        .storage()
        .create_knowledge_document(&doc)
        .await
        .unwrap();

    // The next server over the same data directory picks it up.
    let storage = Arc::new(SqliteStorage::open(h.dir.path()).await.unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::new(
        storage,
        Arc::new(InMemoryBus::new()),
        Sealer::from_key(&[3; 32]),
        ServerConfig::new(h.dir.path())
            .with_auth(AuthMode::DevHeader)
            .with_listen_addr(addr)
            .with_knowledge(settings()),
    );
    assert_eq!(state.resume_knowledge_indexing().await.unwrap(), 1);
    let router = app(state.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let mut status = String::new();
    for _ in 0..500 {
        let doc = state
            .storage()
            .get_knowledge_document("alice", &kb, &id)
            .await
            .unwrap()
            .unwrap();
        status = doc.status;
        if status == "ready" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, "ready");
    let res = reqwest::Client::new()
        .post(format!("http://{addr}/knowledge_bases/{kb}/search"))
        .header("x-user-id", "alice")
        .header("content-type", "application/json")
        .body(json!({"query": "lava basalt"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert_eq!(body["results"][0]["document_id"], id.as_str());
    // Nothing is left to resume.
    assert_eq!(state.resume_knowledge_indexing().await.unwrap(), 0);
}

/// A tenant cannot fill the server's disk: knowledge bases, documents and
/// stored bytes are bounded per user, and one user's quota does not touch
/// another's.
#[tokio::test]
async fn a_tenant_cannot_fill_the_disk_past_its_quotas() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_knowledge(settings().with_quotas(2, 3, 100))
    })
    .await;
    let kb = create_kb(&h, "mallory", "One", DIMENSIONS).await;
    create_kb(&h, "mallory", "Two", DIMENSIONS).await;
    let request = json!({
        "name": "Three",
        "embedding_model_config": {"type": "local", "credential_id": "local", "model": "offline", "dimensions": DIMENSIONS},
    });
    let (code, body) = h.post("/knowledge_bases/", "mallory", request).await;
    assert_eq!(code, 403, "{body}");
    // Names and descriptions are bounded too (they are stored and shown
    // to agents).
    assert!(body["detail"].as_str().unwrap().contains("most"), "{body}");
    let (code, body) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/knowledge_bases/{kb}"),
            "mallory",
            Some(json!({"description": "x".repeat(100_000)})),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    // Another user still creates theirs.
    let theirs = create_kb(&h, "alice", "Alice's", DIMENSIONS).await;

    // Bytes: 60 fit, 60 more would pass the 100-byte quota.
    let (code, body) = upload(&h, "mallory", &kb, "a.txt", &[b'a'; 60], None).await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = upload(&h, "mallory", &kb, "b.txt", &[b'b'; 60], None).await;
    assert_eq!(code, 413, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("quota"), "{body}");
    // Documents: three at most, whatever their size.
    for name in ["c.txt", "d.txt"] {
        let (code, body) = upload(&h, "mallory", &kb, name, b"tiny", None).await;
        assert_eq!(code, 201, "{body}");
    }
    let (code, body) = upload(&h, "mallory", &kb, "e.txt", b"tiny", None).await;
    assert_eq!(code, 403, "{body}");
    // Nothing of the refused uploads is on disk.
    let dir = h.dir.path().join("knowledge").join(&kb);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
    // Alice's quota is her own.
    let (code, body) = upload(&h, "alice", &theirs, "a.txt", &[b'a'; 90], None).await;
    assert_eq!(code, 201, "{body}");

    // Deleting a document frees its share.
    let (_, docs) = h
        .get(&format!("/knowledge_bases/{kb}/documents"), "mallory")
        .await;
    let first = docs["documents"][0]["id"].as_str().unwrap().to_owned();
    let (code, _) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/knowledge_bases/{kb}/documents/{first}"),
            "mallory",
            None,
        )
        .await;
    assert_eq!(code, 204);
    let (code, body) = upload(&h, "mallory", &kb, "f.txt", b"tiny", None).await;
    assert_eq!(code, 201, "{body}");
}

/// Uploads sent at once cannot each spend what is left of one quota: with
/// 100 bytes allowed, one 60-byte file of eight fits and the rest are
/// refused; the documents quota holds the same way.
#[tokio::test]
async fn concurrent_uploads_do_not_overshoot_the_quotas() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_knowledge(settings().with_quotas(10, 3, 100))
    })
    .await;
    let kb = create_kb(&h, "mallory", "One", DIMENSIONS).await;
    let names: Vec<String> = (0..8).map(|i| format!("f{i}.txt")).collect();
    let bytes = [b'a'; 60];
    let uploads = names
        .iter()
        .map(|name| upload(&h, "mallory", &kb, name, &bytes, None));
    let codes: Vec<u16> = futures_util::future::join_all(uploads)
        .await
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == 201).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| [201, 413].contains(c)), "{codes:?}");

    let other = create_kb(&h, "mallory", "Two", DIMENSIONS).await;
    let uploads = names
        .iter()
        .map(|name| upload(&h, "mallory", &other, name, b"tiny", None));
    let codes: Vec<u16> = futures_util::future::join_all(uploads)
        .await
        .into_iter()
        .map(|(code, _)| code)
        .collect();
    // One document is kept already: two more fit.
    assert_eq!(codes.iter().filter(|c| **c == 201).count(), 2, "{codes:?}");
    let (_, docs) = h
        .get(&format!("/knowledge_bases/{other}/documents"), "mallory")
        .await;
    assert_eq!(docs["total"], 2);
}

/// An upload form is a file and a few small fields: an endless stream of
/// small parts after the file is refused instead of read for ever.
#[tokio::test]
async fn an_upload_with_endless_small_form_fields_is_refused() {
    let h = start().await;
    let kb = create_kb(&h, "mallory", "Nature", DIMENSIONS).await;
    let boundary = "b0undary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n"
    );
    for i in 0..5000 {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"x{i}\"\r\n\r\n{}\r\n",
            "y".repeat(1000)
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    let res = h
        .http
        .post(format!("{}/knowledge_bases/{kb}/documents", h.base))
        .header("x-user-id", "mallory")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 422);
    let dir = h.dir.path().join("knowledge").join(&kb);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let (_, docs) = h
        .get(&format!("/knowledge_bases/{kb}/documents"), "mallory")
        .await;
    assert_eq!(docs["total"], 0);
}

/// A knowledge base deleted while its documents are being indexed leaves
/// nothing behind: no files, no vectors (an insert that lands after the
/// delete must not bring its collection back).
#[tokio::test]
async fn deleting_a_knowledge_base_while_it_indexes_leaves_nothing_behind() {
    let h = start().await;
    for round in 0..3 {
        let kb = create_kb(&h, "mallory", &format!("Race {round}"), DIMENSIONS).await;
        let text = VOLCANO.repeat(4000);
        for i in 0..4 {
            let (code, body) = upload(
                &h,
                "mallory",
                &kb,
                &format!("{i}.txt"),
                text.as_bytes(),
                None,
            )
            .await;
            assert_eq!(code, 201, "{body}");
        }
        let (code, _) = h
            .call(
                reqwest::Method::DELETE,
                &format!("/knowledge_bases/{kb}"),
                "mallory",
                None,
            )
            .await;
        assert_eq!(code, 204);
        // Let the indexing tasks finish.
        let store = oxiscope_rag::SqliteVectorStore::open(h.dir.path().join("knowledge"))
            .await
            .unwrap();
        // Absent for a whole second in a row: the tasks are done.
        let (mut absent, mut checks) = (0, 0);
        while absent < 50 {
            checks += 1;
            assert!(checks < 500, "the deleted knowledge base's vectors stay");
            tokio::time::sleep(Duration::from_millis(20)).await;
            let left = oxiscope_rag::VectorStore::has_collection(&store, &format!("kb_{kb}"))
                .await
                .unwrap();
            absent = if left { 0 } else { absent + 1 };
        }
        assert!(!h.dir.path().join("knowledge").join(&kb).exists());
    }
}

/// One user's flood of uploads takes at most their share of the indexing
/// slots: another user's document is indexed meanwhile, not after them all.
#[tokio::test]
async fn one_users_upload_flood_does_not_hold_up_anothers_document() {
    let h = start().await;
    let flood = create_kb(&h, "mallory", "Flood", DIMENSIONS).await;
    let theirs = create_kb(&h, "alice", "Alice's", DIMENSIONS).await;
    let text = VOLCANO.repeat(7000);
    let mut ids = Vec::new();
    for i in 0..6 {
        let (code, body) = upload(
            &h,
            "mallory",
            &flood,
            &format!("{i}.txt"),
            text.as_bytes(),
            None,
        )
        .await;
        assert_eq!(code, 201, "{body}");
        ids.push(body["document_id"].as_str().unwrap().to_owned());
    }
    let (code, body) = upload(&h, "alice", &theirs, "a.txt", VOLCANO.as_bytes(), None).await;
    assert_eq!(code, 201, "{body}");
    let id = body["document_id"].as_str().unwrap().to_owned();
    assert_eq!(
        wait_indexed(&h, "alice", &theirs, &[&id]).await[0]["status"],
        "ready"
    );
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let (_, body) = h
        .get(
            &format!(
                "/knowledge_bases/{flood}/documents/status?ids={}",
                ids.join(",")
            ),
            "mallory",
        )
        .await;
    let waiting = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["status"] == "pending")
        .count();
    assert!(
        waiting >= 2,
        "alice's document waited behind mallory's: {body}"
    );
    // Mallory's are all indexed in the end.
    for d in wait_indexed(&h, "mallory", &flood, &ids).await {
        assert_eq!(d["status"], "ready", "{d}");
    }
}

/// A document a browser opens inline (a PDF, an SVG-free image, text) is
/// sandboxed like a workspace file, with the caller's identity or a token.
#[tokio::test]
async fn documents_served_inline_carry_the_sandboxing_policy() {
    let h = start().await;
    let kb = create_kb(&h, "alice", "Nature", DIMENSIONS).await;
    let (code, body) = upload(&h, "alice", &kb, "sample.pdf", &fixture("sample.pdf"), None).await;
    assert_eq!(code, 201, "{body}");
    let id = body["document_id"].as_str().unwrap().to_owned();
    let doc_path = format!("/knowledge_bases/{kb}/documents/{id}");
    let (code, token) = h
        .post(&format!("{doc_path}/download_token"), "alice", json!({}))
        .await;
    assert_eq!(code, 200, "{token}");
    let token = token["token"].as_str().unwrap().to_owned();
    let as_owner = h
        .http
        .get(format!("{}{doc_path}", h.base))
        .header("x-user-id", "alice")
        .send()
        .await
        .unwrap();
    let with_token = h
        .http
        .get(format!("{}{doc_path}?token={token}", h.base))
        .send()
        .await
        .unwrap();
    for res in [as_owner, with_token] {
        assert_eq!(res.status().as_u16(), 200);
        let headers = res.headers();
        assert!(
            headers["content-disposition"]
                .to_str()
                .unwrap()
                .starts_with("inline")
        );
        assert_eq!(
            headers["content-security-policy"],
            "sandbox; default-src 'none'"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["cache-control"], "private, no-cache");
    }
}

/// The hashing embedder, except that it never answers for a text that
/// says "stall": an embedding endpoint that hangs.
#[derive(Debug)]
struct HangsOnStall(HashingEmbedder);

impl oxiscope_model::EmbeddingModel for HangsOnStall {
    fn model_name(&self) -> &str {
        "hangs-on-stall"
    }

    fn dimensions(&self) -> Option<NonZeroU32> {
        oxiscope_model::EmbeddingModel::dimensions(&self.0)
    }

    async fn embed(
        &self,
        request: oxiscope_model::EmbeddingRequest<'_>,
    ) -> Result<oxiscope_model::EmbeddingResponse, oxiscope_model::ModelError> {
        if request.texts.iter().any(|t| t.contains("stall")) {
            std::future::pending::<()>().await;
        }
        oxiscope_model::EmbeddingModel::embed(&self.0, request).await
    }
}

/// Documents whose embedding hangs hold the indexing slots only until
/// the time limit: each is marked `error`, saying so, and another
/// tenant's document waiting behind them is indexed.
#[tokio::test]
async fn a_document_whose_embedding_hangs_errs_at_the_time_limit_and_frees_its_slot() {
    let dims = NonZeroU32::new(DIMENSIONS).unwrap();
    let mut knowledge = settings()
        .with_offline_model(Arc::new(HangsOnStall(HashingEmbedder::new(dims))))
        .with_document_time_limit(Duration::from_secs(1));
    knowledge.indexing_concurrency = 2;
    let h = Harness::start_custom(AuthMode::DevHeader, |c| c.with_knowledge(knowledge)).await;
    // Two tenants' hanging documents take both slots.
    let mut stalled = Vec::new();
    for user in ["mallory", "eve"] {
        let kb = create_kb(&h, user, "Stalls", DIMENSIONS).await;
        let text = "This document makes the embedder stall.";
        let (code, body) = upload(&h, user, &kb, "stall.txt", text.as_bytes(), None).await;
        assert_eq!(code, 201, "{body}");
        stalled.push((user, kb, body["document_id"].as_str().unwrap().to_owned()));
    }
    let theirs = create_kb(&h, "alice", "Alice's", DIMENSIONS).await;
    let (code, body) = upload(&h, "alice", &theirs, "a.txt", VOLCANO.as_bytes(), None).await;
    assert_eq!(code, 201, "{body}");
    let id = body["document_id"].as_str().unwrap().to_owned();

    let indexed = tokio::time::timeout(
        Duration::from_secs(20),
        wait_indexed(&h, "alice", &theirs, &[&id]),
    )
    .await
    .expect("alice's document waited behind the hanging ones");
    assert_eq!(indexed[0]["status"], "ready", "{}", indexed[0]);
    assert!(indexed[0]["chunk_count"].as_i64().unwrap() > 0);
    for (user, kb, doc) in &stalled {
        let items = wait_indexed(&h, user, kb, &[doc]).await;
        assert_eq!(items[0]["status"], "error", "{}", items[0]);
        let message = items[0]["error"].as_str().unwrap_or_default();
        assert!(message.contains("time limit of 1 s"), "{}", items[0]);
    }
}
