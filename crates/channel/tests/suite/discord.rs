//! Discord over the Gateway end to end: fake Discord, fake model, the
//! real engine.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use oxiscope_channel::discord::{Discord, INTENTS};
use oxiscope_channel::{ChannelHost, Channels, Registry};
use oxiscope_storage::ChannelRecord;
use oxiscope_test_support::discord::FakeDiscord;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::world::{World, answer, system_prompt};

const TOKEN: &str = "MTIz.discord-bot.token";
const WAIT: Duration = Duration::from_secs(10);

async fn start(
    w: &World,
    fake: &FakeDiscord,
    routing: Value,
    token: &str,
) -> (ChannelHost, ChannelRecord) {
    let registry = Registry::new().with(
        Discord::new()
            .with_api_base(fake.api_base())
            .with_backoff(Duration::from_millis(10), Duration::from_millis(200)),
    );
    let host = ChannelHost::new(w.engine.clone(), Channels::new(w.engine.clone(), registry));
    let credentials = json!({"application_id": "123", "bot_token": token});
    let mut new = w.new_channel(routing, json!({}), credentials);
    new.channel_type = "discord".into();
    let record = host.channels().create("u", new).await.unwrap();
    host.start(record.clone()).await.unwrap();
    (host, record)
}

fn texts_to(posted: &[(String, Value)], channel: &str) -> Vec<String> {
    posted
        .iter()
        .filter(|(c, _)| c == channel)
        .map(|(_, m)| m["content"].as_str().unwrap().to_owned())
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
async fn a_dm_and_a_guild_mention_reach_the_routed_agent_and_are_answered() {
    let w = World::new().await;
    let fake = FakeDiscord::start(TOKEN, Duration::from_millis(100))
        .await
        .unwrap();
    let routing = json!({"bindings": [
        {"match_key": "chat_type", "match_value": "guild", "agent_id": w.expert},
        {"agent_id": w.friday},
    ]});
    let (host, record) = start(&w, &fake, routing, TOKEN).await;
    assert_eq!(record.platform_bot_id, "123");
    wait_state(&host, &record.id, "connected").await;
    assert_eq!(fake.identifies()[0]["d"]["intents"], json!(INTENTS));

    w.model.push(answer("Hi in the DM."));
    fake.push_message("50", None, "7", "hello", false);
    let posted = fake.wait_posted(1, WAIT).await;
    assert_eq!(texts_to(&posted, "50"), ["Hi in the DM."]);

    fake.push_message("60", Some("1"), "8", "chatter", false);
    w.model.push(answer("x".repeat(2500).as_str()));
    fake.push_message("60", Some("1"), "8", "write a lot", true);
    let posted = fake.wait_posted(3, WAIT).await;
    let guild = texts_to(&posted, "60");
    assert_eq!(guild.len(), 2, "2,500 characters in two messages");
    assert!(guild.iter().all(|t| t.chars().count() <= 2000));
    let requests = w.model_requests();
    assert_eq!(
        requests.len(),
        2,
        "the unmentioned message reached no model"
    );
    assert!(system_prompt(&requests[1]).contains("You are Expert."));
    // Heartbeats were sent and acknowledged all along.
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(fake.heartbeats() >= 2, "{} heartbeats", fake.heartbeats());
    assert_eq!(host.status(&record.id).state, "connected");
    host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_socket_resumes_the_session_and_nothing_is_lost_or_doubled() {
    let w = World::new().await;
    let fake = FakeDiscord::start(TOKEN, Duration::from_millis(200))
        .await
        .unwrap();
    let (host, record) = start(&w, &fake, w.to_friday(), TOKEN).await;
    wait_state(&host, &record.id, "connected").await;
    w.model.push(answer("first"));
    fake.push_message("50", None, "7", "one", false);
    fake.wait_posted(1, WAIT).await;

    fake.drop_socket();
    // Sent while the bot was away: replayed on resume.
    w.model.push(answer("second"));
    fake.push_message("50", None, "7", "two", false);
    fake.rate_limit_posts(1);
    let posted = fake.wait_posted(2, WAIT).await;
    assert_eq!(texts_to(&posted, "50"), ["first", "second"]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fake.posted().len(), 2, "no reply twice");
    assert_eq!(w.model_requests().len(), 2, "no message twice");
    assert_eq!(fake.identifies().len(), 1, "resumed, not identified again");
    assert_eq!(fake.resumes(), 1);
    host.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_parks_the_channel_as_failed() {
    let w = World::new().await;
    let fake = FakeDiscord::start(TOKEN, Duration::from_millis(200))
        .await
        .unwrap();
    let (host, record) = start(&w, &fake, w.to_friday(), "wrong.token").await;
    let status = wait_state(&host, &record.id, "failed").await;
    assert!(status.last_error.contains("Unauthorized"), "{status:?}");
    host.stop_all().await;
}
