//! Slack over Socket Mode end to end: fake Slack, fake model, the real
//! engine.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use oxiscope_channel::slack::Slack;
use oxiscope_channel::{ChannelHost, Channels, Registry};
use oxiscope_storage::ChannelRecord;
use oxiscope_test_support::slack::{FakeSlack, SLACK_BOT_USER, SocketFault};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::world::{World, answer, system_prompt, user_texts};

const APP: &str = "xapp-1-A123-1-appsecret";
const BOT: &str = "xoxb-1-botsecret";
const WAIT: Duration = Duration::from_secs(10);

async fn start(
    w: &World,
    slack: &FakeSlack,
    routing: Value,
    app: &str,
) -> (ChannelHost, ChannelRecord) {
    let registry = Registry::new().with(
        Slack::new()
            .with_api_base(slack.api_base())
            .with_backoff(Duration::from_millis(10), Duration::from_millis(200)),
    );
    let host = ChannelHost::new(w.engine.clone(), Channels::new(w.engine.clone(), registry));
    let mut new = w.new_channel(
        routing,
        json!({}),
        json!({"app_token": app, "bot_token": BOT}),
    );
    new.channel_type = "slack".into();
    let record = host.channels().create("u", new).await.unwrap();
    host.start(record.clone()).await.unwrap();
    (host, record)
}

fn dm(ts: &str, user: &str, text: &str) -> Value {
    json!({"type": "message", "channel": "D1", "channel_type": "im", "user": user,
           "text": text, "ts": ts})
}

fn texts_to(posted: &[Value], channel: &str) -> Vec<String> {
    posted
        .iter()
        .filter(|m| m["channel"] == channel)
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

async fn wait_state(host: &ChannelHost, id: &str, state: &str) -> oxiscope_channel::ChannelStatus {
    for _ in 0..1000 {
        let status = host.status(id);
        if status.state == state {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never {state}: {:?}", host.status(id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dm_and_a_channel_mention_reach_the_routed_agent_and_are_answered() {
    let w = World::new().await;
    let slack = FakeSlack::start(APP, BOT).await.unwrap();
    let routing = json!({"bindings": [
        {"match_key": "chat_type", "match_value": "channel", "agent_id": w.expert},
        {"agent_id": w.friday},
    ]});
    let (host, record) = start(&w, &slack, routing, APP).await;
    assert_eq!(record.platform_bot_id, "A123");
    wait_state(&host, &record.id, "connected").await;

    w.model.push(answer("Hi Alice."));
    let first = slack.push_event(&dm("1.1", "U1", "hello"));
    let posted = slack.wait_posted(1, WAIT).await;
    assert_eq!(texts_to(&posted, "D1"), ["Hi Alice."]);
    assert!(slack.acked().contains(&first));

    // In a channel: chatter is not for the bot; a mention arrives twice
    // (as a message and as an app_mention) and is answered once.
    slack.push_event(
        &json!({"type": "message", "channel": "C9", "channel_type": "channel",
                             "user": "U2", "text": "lunch?", "ts": "2.1"}),
    );
    w.model.push(answer("Deploying."));
    let mention = format!("<@{SLACK_BOT_USER}> deploy please");
    slack.push_event(
        &json!({"type": "message", "channel": "C9", "channel_type": "channel",
                             "user": "U2", "text": mention, "ts": "2.2"}),
    );
    slack.push_event(
        &json!({"type": "app_mention", "channel": "C9", "user": "U2",
                             "text": mention, "ts": "2.2"}),
    );
    let posted = slack.wait_posted(2, WAIT).await;
    assert_eq!(texts_to(&posted, "C9"), ["Deploying."]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(slack.posted().len(), 2);
    let requests = w.model_requests();
    assert_eq!(requests.len(), 2);
    assert!(system_prompt(&requests[0]).contains("You are Friday."));
    assert!(system_prompt(&requests[1]).contains("You are Expert."));
    let texts = user_texts(&requests[1]);
    assert!(
        texts.contains("[Channel: slack, group chat; message from U2"),
        "{texts}"
    );
    assert!(
        texts.contains("deploy please") && !texts.contains("lunch"),
        "{texts}"
    );
    host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_socket_and_a_disconnect_reconnect_and_nothing_is_lost_or_doubled() {
    let w = World::new().await;
    let slack = FakeSlack::start(APP, BOT).await.unwrap();
    // The first socket drops right after delivering (its ack unread, so
    // the envelope comes again); the second asks to be replaced.
    slack.fault_next_socket(SocketFault::DropAfterDelivery);
    slack.fault_next_socket(SocketFault::Disconnect);
    slack.rate_limit_posts(1);
    w.model.push(answer("first"));
    w.model.push(answer("second"));
    slack.push_event(&dm("1.1", "U1", "one"));
    let (host, record) = start(&w, &slack, w.to_friday(), APP).await;
    let posted = slack.wait_posted(1, WAIT).await;
    assert_eq!(texts_to(&posted, "D1"), ["first"]);
    assert!(slack.opens() >= 3, "opened {} sockets", slack.opens());
    slack.push_event(&dm("1.2", "U1", "two"));
    let posted = slack.wait_posted(2, WAIT).await;
    assert_eq!(texts_to(&posted, "D1"), ["first", "second"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(slack.posted().len(), 2, "no reply twice");
    assert_eq!(w.model_requests().len(), 2, "no message twice");
    assert_eq!(
        wait_state(&host, &record.id, "connected").await.last_error,
        ""
    );
    host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_app_token_parks_the_channel_as_failed() {
    let w = World::new().await;
    let slack = FakeSlack::start(APP, BOT).await.unwrap();
    let (host, record) = start(&w, &slack, w.to_friday(), "xapp-1-A999-1-wrong").await;
    let status = wait_state(&host, &record.id, "failed").await;
    assert!(status.last_error.contains("invalid_auth"), "{status:?}");
    host.stop_all().await;
    // Tokens of the wrong kind are refused before anything connects.
    let registry = Registry::new().with(Slack::new());
    let channels = Channels::new(w.engine.clone(), registry);
    let mut new = w.new_channel(
        w.to_friday(),
        json!({}),
        json!({"app_token": BOT, "bot_token": BOT}),
    );
    new.channel_type = "slack".into();
    assert!(channels.create("u", new).await.is_err());
}
