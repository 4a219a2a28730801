#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;

use super::roster::{Caller, TeamData};
use super::{ops, spawn};

/// A service with one session of user `u` leading a team, and the caller
/// of that session's team tools.
async fn leader(dir: &std::path::Path) -> Caller {
    let (state, session) = crate::testing::service(dir).await;
    let caller = Caller {
        state,
        user_id: "u".into(),
        session_id: session.id,
        agent_id: session.agent_id,
    };
    ops::team_create(&caller, &json!({"name": "crew", "description": "d"}))
        .await
        .unwrap();
    caller
}

fn worker(name: &str) -> serde_json::Value {
    json!({"name": name, "description": "helps", "prompt": "start"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_added_at_once_are_all_on_the_roster() {
    let dir = tempfile::tempdir().unwrap();
    let caller = leader(dir.path()).await;
    let names = ["a", "b", "c", "d", "e", "f"];
    let inputs: Vec<_> = names.iter().map(|n| worker(n)).collect();
    let added = futures_util::future::join_all(
        inputs
            .iter()
            .map(|input| spawn::agent_create(&caller, input)),
    )
    .await;
    for outcome in &added {
        assert!(outcome.is_ok(), "{outcome:?}");
    }
    let team = caller.team().await.unwrap();
    let data = TeamData::of(&team).unwrap();
    assert_eq!(data.members.len(), names.len(), "{data:?}");
    assert_eq!(data.member_ids.len(), names.len());
    // Each member's session points at the team.
    for member in &data.members {
        let team_of = caller
            .state
            .storage()
            .session_team("u", &member.session_id)
            .await
            .unwrap();
        assert_eq!(team_of.as_deref(), Some(team.id.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_dissolved_while_members_join_leaves_no_worker_behind() {
    let dir = tempfile::tempdir().unwrap();
    let caller = leader(dir.path()).await;
    for round in 0..8 {
        if round > 0 {
            ops::team_create(&caller, &json!({"name": "crew", "description": "d"}))
                .await
                .unwrap();
        }
        let joins: Vec<_> = ["a", "b", "c"]
            .into_iter()
            .map(|name| {
                let caller = caller.clone();
                tokio::spawn(async move { spawn::agent_create(&caller, &worker(name)).await })
            })
            .collect();
        tokio::task::yield_now().await;
        ops::team_delete(&caller).await.unwrap();
        // Each member joined first and went with the team, or was refused:
        // no worker agent outlives the team either way.
        for join in joins {
            let _ = join.await.unwrap();
        }
        let agents = caller.state.storage().list_agents("u").await.unwrap();
        assert_eq!(agents.len(), 1, "round {round}: {agents:?}");
        assert!(caller.team().await.is_err());
    }
}
