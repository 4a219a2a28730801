//! Usage accounting, the user token quota and the Prometheus metrics,
//! end to end over the scripted OpenAI server.

use std::collections::BTreeMap;
use std::time::Duration;

use oxiscope_server::TenantPolicy;
use oxiscope_test_support::OpenAiScript;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer};

fn answer(
    text: &str,
    input: u64,
    output: u64,
    cached: u64,
) -> oxiscope_test_support::ScriptedResponse {
    OpenAiScript::new()
        .text(text)
        .finish("stop")
        .usage(input, output, cached)
        .response()
}

/// Sends a chat and waits for its end on the stream (the usage is stored
/// before the end is published).
async fn chat_to_end(h: &Harness, user: &str, s: &Setup, text: &str) {
    // Behind the stored messages: no replay of an earlier reply's end.
    let page = h.messages(user, s).await;
    let mut sse = h.subscribe(user, s, page["event_cursor"].as_str()).await;
    let (code, body) = h.chat(user, s, user_msg(text)).await;
    assert_eq!(code, 200, "{body}");
    let events = sse.until("REPLY_END").await;
    assert_eq!(events.last().unwrap()["finished_reason"], "completed");
    // The run commits the reply (and its usage) after the event goes out:
    // wait for it, or the next chat or count may come first.
    h.wait_not_running(user, s).await;
}

async fn listed_usage(h: &Harness, user: &str, s: &Setup) -> Value {
    let (code, body) = h
        .get(&format!("/sessions/?agent_id={}", s.agent_id), user)
        .await;
    assert_eq!(code, 200, "{body}");
    let session = body["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["session"]["id"] == s.session_id.as_str())
        .unwrap();
    session["usage"].clone()
}

fn usage(input: u64, output: u64, cache_read: u64, calls: u64, runs: u64) -> Value {
    json!({
        "input_tokens": input,
        "output_tokens": output,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": 0,
        "total_tokens": input + output,
        "model_calls": calls,
        "runs": runs,
    })
}

#[tokio::test]
async fn two_chats_add_up_in_the_session_list_and_the_callers_usage() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    assert_eq!(listed_usage(&h, "u", &s).await, usage(0, 0, 0, 0, 0));

    h.fake.push(text_answer("one"));
    chat_to_end(&h, "u", &s, "first").await;
    h.fake.push(answer("two", 100, 20, 40));
    chat_to_end(&h, "u", &s, "second").await;

    assert_eq!(listed_usage(&h, "u", &s).await, usage(110, 22, 40, 2, 2));
    let (code, mine) = h.get("/usage", "u").await;
    assert_eq!(code, 200, "{mine}");
    assert_eq!(
        mine,
        json!({
            "total": usage(110, 22, 40, 2, 2),
            "window": "total",
            "window_usage": usage(110, 22, 40, 2, 2),
            "token_quota": null,
            "remaining_tokens": null,
        })
    );

    // Another user sees none of it: their own totals are zero, and
    // alice's session is not theirs to list.
    let (code, theirs) = h.get("/usage", "mallory").await;
    assert_eq!(code, 200, "{theirs}");
    assert_eq!(theirs["total"], usage(0, 0, 0, 0, 0));
    let (code, body) = h
        .get(&format!("/sessions/?agent_id={}", s.agent_id), "mallory")
        .await;
    assert_eq!(code, 404, "{body}");

    // The user's totals outlive a deleted session.
    let (code, body) = h
        .call(
            reqwest::Method::DELETE,
            &format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id),
            "u",
            None,
        )
        .await;
    assert!(code == 200 || code == 204, "{code} {body}");
    let (_, after) = h.get("/usage", "u").await;
    assert_eq!(after["total"], usage(110, 22, 40, 2, 2));
}

#[tokio::test]
async fn a_chat_over_the_token_quota_is_refused_before_the_model_is_called() {
    let h = Harness::start_with_policy(TenantPolicy {
        private_model_endpoints: true,
        user_token_quota: Some(1500),
        ..TenantPolicy::default()
    })
    .await;
    let s = h.setup("u").await;
    // Under the quota: the reply runs, and crossing the quota (1400 + 100
    // tokens) does not cut it short.
    h.fake.push(answer("within", 1400, 100, 0));
    chat_to_end(&h, "u", &s, "first").await;
    h.wait_not_running("u", &s).await;
    assert_eq!(h.fake.requests().len(), 1);

    h.fake.push(text_answer("never sent"));
    let (code, body) = h.chat("u", &s, user_msg("second")).await;
    assert_eq!(code, 429, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(detail.contains("user_token_quota"), "{detail}");
    assert!(detail.contains("1500 of 1500"), "{detail}");
    assert_eq!(h.fake.requests().len(), 1, "the model was called");
    assert_eq!(h.status("u", &s).await, "idle");

    let (_, mine) = h.get("/usage", "u").await;
    assert_eq!(mine["token_quota"], 1500);
    assert_eq!(mine["remaining_tokens"], 0);

    // The quota is per user: another user still chats.
    let t = h.setup("v").await;
    chat_to_end(&h, "v", &t, "hello").await;
    assert_eq!(h.fake.requests().len(), 2);
}

#[tokio::test]
async fn a_model_that_reports_no_usage_is_still_stopped_by_the_token_quota() {
    // Each model call counts at least 1000 tokens against the quota.
    let h = Harness::start_with_policy(TenantPolicy {
        private_model_endpoints: true,
        user_token_quota: Some(2500),
        ..TenantPolicy::default()
    })
    .await;
    let s = h.setup("u").await;
    for text in ["one", "two", "three"] {
        h.fake.push(answer(text, 0, 0, 0));
        chat_to_end(&h, "u", &s, text).await;
    }
    h.fake.push(answer("never sent", 0, 0, 0));
    let (code, body) = h.chat("u", &s, user_msg("four")).await;
    assert_eq!(code, 429, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("3000 of 2500"),
        "{body}"
    );
    assert_eq!(h.fake.requests().len(), 3, "the model was called");
    let (_, mine) = h.get("/usage", "u").await;
    // What the model reported is kept as it was; the quota charged more.
    assert_eq!(mine["total"], usage(0, 0, 0, 3, 3));
    assert_eq!(mine["remaining_tokens"], 0);
}

#[tokio::test]
async fn absurd_reported_usage_is_capped_per_call_and_never_breaks_the_usage_route() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let huge = u64::MAX / 2;
    for text in ["one", "two", "three"] {
        h.fake.push(answer(text, huge, huge, huge));
        chat_to_end(&h, "u", &s, text).await;
    }
    let (code, mine) = h.get("/usage", "u").await;
    assert_eq!(code, 200, "{mine}");
    // Ten million tokens of each kind per call at most.
    let cap = 10_000_000;
    assert_eq!(mine["total"], usage(3 * cap, 3 * cap, 3 * cap, 3, 3));
    assert_eq!(listed_usage(&h, "u", &s).await, mine["total"]);
}

/// `name{labels}` → value, checking every line is well-formed text
/// exposition.
fn parse_metrics(text: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    let mut typed = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            assert!(typed.insert(name.to_owned()), "{name} typed twice");
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let name = key.split('{').next().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s).filter(|f| typed.contains(*f)))
            .unwrap_or(name);
        assert!(typed.contains(family), "{name} has no TYPE line");
        if let Some(labels) = key.strip_prefix(name) {
            assert!(
                labels.is_empty() || (labels.starts_with('{') && labels.ends_with('}')),
                "{line}"
            );
        }
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("{line}"));
        assert!(
            samples.insert(key.to_owned(), value).is_none(),
            "{key} twice"
        );
    }
    samples
}

async fn scrape(http: &reqwest::Client, url: &str) -> BTreeMap<String, f64> {
    let resp = http.get(url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let kind = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    parse_metrics(&resp.text().await.unwrap())
}

#[tokio::test]
async fn metrics_are_served_apart_from_the_api_and_count_runs_and_tokens() {
    let h = Harness::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    tokio::spawn(oxiscope_server::serve_metrics(listener, h.state.clone()));

    // Tenants' address does not serve them.
    let (code, _) = h.get("/metrics", "u").await;
    assert_eq!(code, 404);

    let before = scrape(&h.http, &url).await;
    for key in [
        "oxiscope_runs_started_total",
        "oxiscope_runs_finished_total{outcome=\"completed\"}",
        "oxiscope_model_calls_total",
        "oxiscope_tool_calls_total",
        "oxiscope_tokens_total{kind=\"input\"}",
        "oxiscope_tokens_total{kind=\"output\"}",
        "oxiscope_run_duration_seconds_count",
        "oxiscope_run_duration_seconds_bucket{le=\"+Inf\"}",
        "oxiscope_active_runs",
        "oxiscope_bus_retained_events",
        "oxiscope_bus_queued_inputs",
    ] {
        assert!(before.contains_key(key), "{key} missing: {before:?}");
    }
    assert_eq!(before["oxiscope_runs_started_total"], 0.0);

    let s = h.setup("u").await;
    h.fake.push(text_answer("counted"));
    chat_to_end(&h, "u", &s, "hi").await;
    h.wait_not_running("u", &s).await;

    let mut after = scrape(&h.http, &url).await;
    for _ in 0..200 {
        if after["oxiscope_run_duration_seconds_count"] >= 1.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        after = scrape(&h.http, &url).await;
    }
    let moved = |key: &str| after[key] - before[key];
    assert_eq!(moved("oxiscope_runs_started_total"), 1.0);
    assert_eq!(
        moved("oxiscope_runs_finished_total{outcome=\"completed\"}"),
        1.0
    );
    assert_eq!(moved("oxiscope_model_calls_total"), 1.0);
    assert_eq!(moved("oxiscope_tokens_total{kind=\"input\"}"), 10.0);
    assert_eq!(moved("oxiscope_tokens_total{kind=\"output\"}"), 2.0);
    assert_eq!(moved("oxiscope_run_duration_seconds_count"), 1.0);
    assert_eq!(
        moved("oxiscope_run_duration_seconds_bucket{le=\"+Inf\"}"),
        1.0
    );
    assert!(after["oxiscope_bus_retained_events"] >= 1.0, "{after:?}");
}
