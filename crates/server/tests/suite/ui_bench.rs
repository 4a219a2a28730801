//! A benchmark of the UI in Chromium: a session of 1,000 messages opens
//! (only its newest are drawn; older ones as the page scrolls up), then a
//! reply streams 1,000 tokens at about 1,000 a second. It prints the time
//! to the first render and the longest frame, and asserts no timing (the
//! machines that run it vary too much).

use std::time::Duration;

use oxiscope_test_support::OpenAiScript;
use serde_json::{Value, json};

use super::super::common::Harness;
use super::super::webdriver::Browser;
use super::{ENTER, sign_in};

const MESSAGES: usize = 1000;
const TOKENS: usize = 1000;

/// The messages of a long conversation, oldest first.
fn history() -> Vec<Value> {
    (0..MESSAGES)
        .map(|i| {
            let (role, name) = if i % 2 == 0 {
                ("user", "user")
            } else {
                ("assistant", "Friday")
            };
            let text = if i % 2 == 0 {
                format!("Question number {i}?")
            } else {
                format!(
                    "Answer **{i}**: a paragraph of text,\n\n- a list\n- of items\n\n`code {i}`"
                )
            };
            json!({"id": format!("m{i:05}"), "name": name, "role": role,
                   "content": [{"type": "text", "id": format!("b{i:05}"), "text": text}],
                   "created_at": "2025-01-01T00:00:00Z"})
        })
        .collect()
}

/// Milliseconds as a number from the page.
fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or(-1.0)
}

#[tokio::test]
async fn a_thousand_messages_open_and_a_thousand_tokens_stream_benchmark() {
    let Some(b) = Browser::start().await else {
        return;
    };
    let h = Harness::start().await;
    let s = h.setup("bench").await;
    let stored = h.stored_session("bench", &s).await;
    h.state
        .storage()
        .commit_reply(&s.session_id, stored.revision, &stored.state, &history())
        .await
        .unwrap();

    sign_in(&b, &h.base, "bench").await;
    b.reload().await;
    b.wait_text(".msg .md", &format!("Answer {}", MESSAGES - 1))
        .await;
    let open = b
        .js(
            "const mark = performance.getEntriesByName('oxiscope:history-drawn')[0];
             return {first_render: mark ? mark.startTime : null,
                     drawn: document.querySelectorAll('.msg').length};",
            json!([]),
        )
        .await;
    let drawn = open["drawn"].as_u64().unwrap();
    assert!(drawn < 100, "{drawn} of {MESSAGES} messages drawn at once");
    // Scrolling up draws older messages.
    b.js(
        "document.querySelector('.scroller').scrollTop = 0;",
        json!([]),
    )
    .await;
    let mut more = drawn;
    for _ in 0..100 {
        more = b
            .js(
                "return document.querySelectorAll('.msg').length;",
                json!([]),
            )
            .await
            .as_u64()
            .unwrap();
        if more > drawn {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(more > drawn, "scrolling up drew nothing more");

    // 1,000 tokens at about 1,000 a second; frames measured meanwhile.
    let mut script = OpenAiScript::new();
    for i in 0..TOKENS {
        script = script.text(if i % 50 == 49 {
            format!("t{i}\n\n")
        } else {
            format!("t{i} ")
        });
    }
    let script = script.finish("stop").usage(10, TOKENS as u64, 0);
    h.fake
        .push(script.response_paced(2, Duration::from_millis(1)));
    b.js(
        "window.bench = {longest: 0, frames: 0, longtasks: []};
         let last = performance.now();
         const tick = (t) => { window.bench.longest = Math.max(window.bench.longest, t - last);
             last = t; window.bench.frames += 1; if (!window.bench.done) requestAnimationFrame(tick); };
         requestAnimationFrame(tick);
         try { new PerformanceObserver((l) => { for (const e of l.getEntries()) window.bench.longtasks.push(e.duration); })
             .observe({type: 'longtask'}); } catch (e) { window.bench.longtasks = null; }
         window.bench.start = performance.now();",
        json!([]),
    )
    .await;
    b.type_into(".composer-input", &format!("stream please{ENTER}"))
        .await;
    b.wait_text(".msg.role-assistant .md", &format!("t{}", TOKENS - 1))
        .await;
    let stream = b
        .js(
            "window.bench.done = true;
             const lt = window.bench.longtasks;
             return {elapsed: performance.now() - window.bench.start, longest_frame: window.bench.longest,
                     frames: window.bench.frames, longest_task: lt && lt.length ? Math.max(...lt) : 0};",
            json!([]),
        )
        .await;
    eprintln!(
        "ui benchmark: {MESSAGES} messages: first render at {:.0} ms after navigation, {drawn} drawn; \
         {TOKENS} tokens streamed in {:.0} ms, {} frames, longest frame {:.0} ms, longest task {:.0} ms",
        ms(&open["first_render"]),
        ms(&stream["elapsed"]),
        stream["frames"],
        ms(&stream["longest_frame"]),
        ms(&stream["longest_task"]),
    );
    b.quit().await;
}
