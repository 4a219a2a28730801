//! Telegram end to end: fake Bot API, fake model, the real engine.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use oxiscope_channel::Handled;
use oxiscope_test_support::telegram::{TelegramFault, group_message, private_message};
use oxiscope_test_support::{OpenAiScript, ScriptedResponse};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::world::{TOKEN, World, answer, system_prompt, texts_to, user_texts};

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_and_a_group_message_reach_the_routed_agent_and_the_replies_arrive() {
    let w = World::new().await;
    let channel = w
        .start(json!({"bindings": [
            {"match_key": "chat_type", "match_value": "group", "agent_id": w.expert},
            {"agent_id": w.friday},
        ]}))
        .await;
    w.model.push(answer("Hello Alice."));
    w.telegram
        .push_message(&private_message(1, 7, "Alice", "hi there"));
    let sent = w.telegram.wait_sent(1, WAIT).await;
    assert_eq!(texts_to(&sent, 7), ["Hello Alice."]);

    // A group message without a mention is not for the bot; one with it is.
    w.telegram.push_message(&group_message(
        2,
        -100,
        "Product Team",
        8,
        "Bob",
        "chatter",
        false,
    ));
    w.model.push(answer("Hello team."));
    w.telegram.push_message(&group_message(
        3,
        -100,
        "Product Team",
        8,
        "Bob",
        "status?",
        true,
    ));
    let sent = w.telegram.wait_sent(2, WAIT).await;
    assert_eq!(texts_to(&sent, -100), ["Hello team."]);

    let requests = w.model_requests();
    assert_eq!(
        requests.len(),
        2,
        "the unmentioned message reached no model"
    );
    assert!(system_prompt(&requests[0]).contains("You are Friday."));
    assert!(system_prompt(&requests[1]).contains("You are Expert."));
    // The agent is told where it is.
    let dm = user_texts(&requests[0]);
    assert!(
        dm.contains("[Channel: telegram, private chat; message from Alice (user id 7)]"),
        "{dm}"
    );
    assert!(dm.contains("hi there"), "{dm}");
    let group = user_texts(&requests[1]);
    assert!(group.contains("group chat \\\"Product Team\\\""), "{group}");
    assert!(
        group.contains("status?") && !group.contains("chatter"),
        "{group}"
    );

    let sessions = w.sessions_of(&channel).await;
    let agents: Vec<(&str, &str)> = sessions
        .iter()
        .map(|s| (s.chat_id.as_str(), s.agent_id.as_str()))
        .collect();
    assert_eq!(
        agents,
        [("7", w.friday.as_str()), ("-100", w.expert.as_str())]
    );
    // The session says where it came from.
    let session = w
        .storage
        .get_session("u", &sessions[1].session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        session.config["origin"],
        json!({"type": "channel", "channel_id": channel.id, "chat_id": "-100",
               "chat_name": "Product Team", "channel_user_id": null})
    );
    // Both chats are known for routing.
    let chats = w
        .storage
        .channels()
        .unwrap()
        .channel_chats(&channel.id)
        .await
        .unwrap();
    assert_eq!(chats.len(), 2);
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_by_chat_by_user_and_per_member_sessions() {
    let w = World::new().await;
    let channel = w
        .start(json!({"bindings": [
            {"match_key": "chat_id", "match_value": "-200", "agent_id": w.expert},
            {"match_key": "user_id", "match_value": "9", "agent_id": w.expert},
            {"match_key": "chat_type", "match_value": "group", "agent_id": w.friday,
             "session_scope": "per_chat_user"},
            {"agent_id": w.friday},
        ]}))
        .await;
    let script = [
        group_message(1, -200, "Experts", 8, "Bob", "one", true),
        private_message(2, 9, "Carol", "two"),
        group_message(3, -300, "Lobby", 8, "Bob", "three", true),
        group_message(4, -300, "Lobby", 10, "Dan", "four", true),
        group_message(5, -300, "Lobby", 8, "Bob", "five", true),
    ];
    for (i, message) in script.into_iter().enumerate() {
        w.model.push(answer(&format!("answer {i}")));
        w.telegram.push_message(&message);
        // One at a time: the fake model answers in order.
        w.telegram.wait_sent(i + 1, WAIT).await;
    }
    let sent = w.telegram.sent();
    assert_eq!(texts_to(&sent, -300), ["answer 2", "answer 3", "answer 4"]);
    let sessions = w.sessions_of(&channel).await;
    let expert = sessions.iter().filter(|s| s.agent_id == w.expert).count();
    assert_eq!(expert, 2, "the -200 chat and user 9");
    let lobby: Vec<_> = sessions.iter().filter(|s| s.chat_id == "-300").collect();
    assert_eq!(lobby.len(), 2, "one session per member of the lobby");
    // Bob's second message joined his first session: its model request
    // holds both of his messages and none of Dan's.
    let last = w.model_requests().pop().unwrap();
    let texts = user_texts(&last);
    assert!(
        texts.contains("three") && texts.contains("five") && !texts.contains("four"),
        "{texts}"
    );
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_is_split_to_the_platforms_limit() {
    let w = World::new().await;
    w.start(w.to_friday()).await;
    let long = "word ".repeat(2000);
    w.model.push(answer(&long));
    w.telegram
        .push_message(&private_message(1, 7, "Alice", "talk a lot"));
    let sent = w.telegram.wait_sent(3, WAIT).await;
    let texts = texts_to(&sent, 7);
    assert_eq!(
        texts.len(),
        3,
        "10,000 characters in 4,096-character pieces"
    );
    assert!(texts.iter().all(|t| t.chars().count() <= 4096));
    assert_eq!(texts.join(" ").split_whitespace().count(), 2000);
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_a_5xx_and_a_429_are_retried_and_nothing_is_lost_or_doubled() {
    let w = World::new().await;
    let t = &w.telegram;
    t.fail_next("getUpdates", TelegramFault::Status(502));
    t.fail_next("getUpdates", TelegramFault::Drop);
    t.fail_next("getUpdates", TelegramFault::RateLimit(1));
    t.fail_next("sendMessage", TelegramFault::Status(500));
    t.fail_next("sendMessage", TelegramFault::RateLimit(1));
    w.model.push(answer("first"));
    w.model.push(answer("second"));
    t.push_message(&private_message(1, 7, "Alice", "one"));
    let channel = w.start(w.to_friday()).await;
    let sent = t.wait_sent(1, WAIT).await;
    assert_eq!(texts_to(&sent, 7), ["first"]);
    let status = w.wait_state(&channel.id, "connected").await;
    assert_eq!(status.last_error, "", "cleared once connected again");
    // The same message delivered again (a platform redelivery, or another
    // replica's poll) is handled once.
    t.push_message(&private_message(1, 7, "Alice", "one"));
    t.push_message(&private_message(2, 7, "Alice", "two"));
    let sent = t.wait_sent(2, WAIT).await;
    assert_eq!(texts_to(&sent, 7), ["first", "second"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(t.sent().len(), 2, "no reply twice");
    assert_eq!(w.model_requests().len(), 2, "no message twice");
    // Every update was confirmed.
    for _ in 0..200 {
        if t.pending() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(t.pending(), 0);
    assert!(
        t.calls("sendMessage").len() >= 4,
        "the failed sends were tried again"
    );
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_update_is_skipped_and_the_next_one_served() {
    let w = World::new().await;
    w.start(w.to_friday()).await;
    w.telegram
        .push_raw(json!({"update_id": 1, "message": {"message_id": "not a number"}}));
    w.model.push(answer("still here"));
    w.telegram
        .push_message(&private_message(3, 7, "Alice", "hello?"));
    let sent = w.telegram.wait_sent(1, WAIT).await;
    assert_eq!(texts_to(&sent, 7), ["still here"]);
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_park_the_channel_as_failed() {
    let w = World::new().await;
    let new = w.new_channel(w.to_friday(), json!({}), json!({"bot_token": "1:wrong"}));
    let record = w.host.channels().create("u", new).await.unwrap();
    w.host.start(record.clone()).await.unwrap();
    let status = w.wait_state(&record.id, "failed").await;
    assert!(status.last_error.contains("Unauthorized"), "{status:?}");
    assert!(
        !status.last_error.contains("1:wrong"),
        "the token is not shown"
    );
    w.host.stop(&record.id).await;
    assert_eq!(w.host.status(&record.id).state, "stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_with_a_wrong_or_missing_secret_token_is_refused() {
    let w = World::new().await;
    let new = w.new_channel(
        w.to_friday(),
        json!({"mode": "webhook", "webhook_url": "https://bots.example.com/hook"}),
        json!({"bot_token": TOKEN, "webhook_secret": "s3cret-token"}),
    );
    let record = w.host.channels().create("u", new).await.unwrap();
    w.host.start(record.clone()).await.unwrap();
    w.wait_state(&record.id, "connected").await;
    let set = w.telegram.calls("setWebhook");
    assert_eq!(set[0]["secret_token"], "s3cret-token");
    assert_eq!(set[0]["url"], "https://bots.example.com/hook");

    let update = json!({"update_id": 5, "message": private_message(1, 7, "Alice", "hook")});
    let body = update.to_string();
    for secret in [None, Some("wrong"), Some("s3cret-token ")] {
        let refused = w.host.webhook(&record.id, secret, body.as_bytes()).await;
        assert!(refused.is_err(), "{secret:?}: {refused:?}");
    }
    assert!(w.model_requests().is_empty());
    w.model.push(answer("via the hook"));
    let handled = w
        .host
        .webhook(&record.id, Some("s3cret-token"), body.as_bytes())
        .await
        .unwrap();
    assert!(matches!(handled, Handled::Submitted { .. }), "{handled:?}");
    let sent = w.telegram.wait_sent(1, WAIT).await;
    assert_eq!(texts_to(&sent, 7), ["via the hook"]);
    // Telegram retries a delivery it got no 200 for: the same one is
    // handled once.
    let again = w
        .host
        .webhook(&record.id, Some("s3cret-token"), body.as_bytes())
        .await
        .unwrap();
    assert_eq!(again, Handled::Duplicate);
    let junk = w
        .host
        .webhook(&record.id, Some("s3cret-token"), b"{not json")
        .await;
    assert!(junk.is_err());
    w.host.stop_all().await;
}

/// The model asks to write `note.txt` in the session's workspace.
fn write_call(path: &std::path::Path) -> ScriptedResponse {
    let args = json!({"file_path": path, "content": "written from the chat"}).to_string();
    OpenAiScript::new()
        .tool_call(0, "call_1", "Write")
        .tool_args(0, args)
        .finish("tool_calls")
        .usage(10, 5, 0)
        .response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_that_asks_is_approved_by_a_typed_reply_from_the_asker() {
    let w = World::new().await;
    let channel = w.start(json!({"bindings": [{"agent_id": w.friday}]})).await;
    // Sessions have a workspace of their own, named after the session:
    // the first message opens it, and its answer is plain text.
    w.model.push(answer("Ready."));
    w.telegram
        .push_message(&group_message(1, -100, "Ops", 7, "Alice", "hello", true));
    w.telegram.wait_sent(1, WAIT).await;
    let session_id = w.sessions_of(&channel).await[0].session_id.clone();
    let dir = w.engine.workspaces().dir("u", &session_id).unwrap();
    let note = dir.join("note.txt");
    w.model.push(write_call(&note));
    w.telegram.push_message(&group_message(
        2,
        -100,
        "Ops",
        7,
        "Alice",
        "write a note",
        true,
    ));
    let sent = w.telegram.wait_sent(2, WAIT).await;
    let prompt = texts_to(&sent, -100).pop().unwrap();
    assert!(
        prompt.contains("Write") && prompt.contains("approve"),
        "{prompt}"
    );

    // Another member of the group cannot answer for Alice: theirs is a
    // message like any other.
    w.model.push(answer("Bob, only Alice can approve."));
    w.telegram
        .push_message(&group_message(3, -100, "Ops", 8, "Bob", "approve", true));
    // ... which closes the parked reply; ask again, and Alice approves.
    let sent = w.telegram.wait_sent(3, WAIT).await;
    assert_eq!(texts_to(&sent, -100)[2], "Bob, only Alice can approve.");
    assert!(!note.exists());
    w.model.push(write_call(&note));
    w.telegram.push_message(&group_message(
        4,
        -100,
        "Ops",
        7,
        "Alice",
        "write it again",
        true,
    ));
    w.telegram.wait_sent(4, WAIT).await;
    w.model.push(answer("The note is written."));
    w.telegram
        .push_message(&group_message(5, -100, "Ops", 7, "Alice", "approve", true));
    let sent = w.telegram.wait_sent(5, WAIT).await;
    assert_eq!(texts_to(&sent, -100)[4], "The note is written.");
    assert_eq!(
        std::fs::read_to_string(&note).unwrap(),
        "written from the chat"
    );
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_polling_one_bot_answer_each_message_once() {
    let w = World::new().await;
    let channel = w.start(w.to_friday()).await;
    let (_engine, other) = w.replica();
    other.start(channel.clone()).await.unwrap();
    for i in 0..6 {
        w.model.push(answer(&format!("answer {i}")));
        let chat = if i % 2 == 0 { 7 } else { 8 };
        w.telegram.push_message(&private_message(
            i + 1,
            chat,
            "Alice",
            &format!("question {i}"),
        ));
        // Both replicas see the update until one confirms it.
        w.telegram
            .wait_sent(usize::try_from(i).unwrap() + 1, WAIT)
            .await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sent = w.telegram.sent();
    assert_eq!(texts_to(&sent, 7), ["answer 0", "answer 2", "answer 4"]);
    assert_eq!(texts_to(&sent, 8), ["answer 1", "answer 3", "answer 5"]);
    assert_eq!(
        w.model_requests().len(),
        6,
        "each message reached the model once"
    );
    assert_eq!(
        w.sessions_of(&channel).await.len(),
        2,
        "one session per chat"
    );
    other.stop_all().await;
    w.host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_whose_session_was_deleted_gets_a_new_one() {
    let w = World::new().await;
    let channel = w.start(w.to_friday()).await;
    w.model.push(answer("one"));
    w.telegram
        .push_message(&private_message(1, 7, "Alice", "hi"));
    w.telegram.wait_sent(1, WAIT).await;
    let first = w.sessions_of(&channel).await[0].session_id.clone();
    w.storage.delete_session("u", &first).await.unwrap();
    w.model.push(answer("two"));
    w.telegram
        .push_message(&private_message(2, 7, "Alice", "still there?"));
    let sent = w.telegram.wait_sent(2, WAIT).await;
    assert_eq!(texts_to(&sent, 7), ["one", "two"]);
    let sessions = w.sessions_of(&channel).await;
    assert_eq!(sessions.len(), 1);
    assert_ne!(sessions[0].session_id, first);
    // The new session does not remember the deleted one's conversation.
    let last = w.model_requests().pop().unwrap();
    assert!(
        !user_texts(&last).contains("\"hi\""),
        "{}",
        user_texts(&last)
    );
    w.host.stop_all().await;
}
