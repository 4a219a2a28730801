//! The stream contract, as a property over the recorded AgentScope
//! scenarios with random model failures (before the stream, mid-stream,
//! retryable or not, with or without retries), hanging model calls and
//! interrupts at random points:
//! - a stream that starts a reply begins with exactly one `REPLY_START`;
//! - it ends with exactly one `REPLY_END`, last, or — a parked reply — with
//!   its `REQUIRE_*` event and no `REPLY_END`;
//! - the reply message the agent stores is exactly the message rebuilt from
//!   the stream with `new_reply_msg` + `apply_event` (for a resumed reply:
//!   the stored message before, then the input event, then the stream);
//! - a refused input changes nothing in the state.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentState, ModelConfig, ReActConfig, ReplyInput, apply_event};
use oxiscope_message::{AgentEvent, Msg, PermissionBehavior, PermissionRule};
use oxiscope_model::{DynChatModel, ModelError};
use oxiscope_test_support::fixtures::load;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::common::rebuild;
use super::conformance::{agentscope_injection, events, toolkit, turns};

/// What happens to one scripted model turn.
#[derive(Debug, Clone)]
enum Fault {
    Keep,
    /// The call fails before streaming (503: retryable; 400: not).
    Refuse(u16),
    /// The stream breaks after this many chunks.
    Break(usize),
    /// The stream stops after this many chunks until interrupted.
    Hang(usize),
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        6 => Just(Fault::Keep),
        1 => prop_oneof![Just(503u16), Just(400u16)].prop_map(Fault::Refuse),
        1 => (0usize..6).prop_map(Fault::Break),
        1 => (0usize..6).prop_map(Fault::Hang),
    ]
}

fn apply_fault(turn: ScriptedTurn, fault: &Fault) -> ScriptedTurn {
    let broken = ModelError::Stream {
        message: "connection reset".to_owned(),
    };
    match fault {
        Fault::Keep => turn,
        Fault::Refuse(status) => ScriptedTurn::error(ModelError::Provider {
            provider: "scripted".to_owned(),
            status: *status,
            code: None,
            message: "refused".to_owned(),
            request_id: None,
            retry_after: None,
        }),
        Fault::Break(after) => turn.fail_after(*after, broken),
        Fault::Hang(after) => turn.hang_after(*after),
    }
}

struct Scenario {
    name: String,
    phases: Vec<Value>,
    events: Vec<Vec<AgentEvent>>,
}

fn scenarios() -> Vec<Scenario> {
    let Value::Array(all) = load("streams/index.json") else {
        panic!("no scenario index")
    };
    all.iter()
        .map(|s| {
            let name = s["scenario"].as_str().unwrap().to_owned();
            let phases: Vec<Value> = s["phases"].as_array().unwrap().clone();
            let events = phases
                .iter()
                .map(|p| {
                    events(&format!(
                        "streams/{name}.{}.events.json",
                        p["phase"].as_str().unwrap()
                    ))
                })
                .collect();
            Scenario {
                name,
                phases,
                events,
            }
        })
        .collect()
}

fn agent_for(scenario: &Scenario, model: Arc<ScriptedModel>, max_retries: u32) -> Agent {
    let mut state = AgentState::default();
    for tool in ["get_weather", "take_screenshot"] {
        state.permission_context.add_rule(PermissionRule::new(
            tool,
            None,
            PermissionBehavior::Allow,
            "session",
        ));
    }
    let dynamic: Arc<dyn DynChatModel> = model;
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday, a helpful assistant.")
        .toolkit(toolkit())
        .injection_config(agentscope_injection(scenario.name != "h_no_injection"))
        .react_config(ReActConfig {
            max_iters: if scenario.name == "f_exceed_max_iters" {
                2
            } else {
                50
            },
            ..ReActConfig::default()
        })
        .model_config(ModelConfig { max_retries })
        .workdir(std::env::temp_dir())
        .state(state)
        .build()
        .unwrap()
}

/// The phase's input, pointed at our reply.
fn input_of(name: &str, phase: &Value, reply_id: &str) -> ReplyInput {
    let json = load(&format!(
        "streams/{name}.{}.input.json",
        phase["phase"].as_str().unwrap()
    ));
    if phase["input_kind"] == "Msg" {
        return serde_json::from_value::<Msg>(json).unwrap().into();
    }
    let mut ours = json;
    ours["reply_id"] = json!(reply_id);
    let event: AgentEvent = serde_json::from_value(ours).unwrap();
    ReplyInput::try_from(event).unwrap()
}

/// Reads a reply's stream; interrupts after `interrupt_at` events, and
/// whenever the stream stalls (a hanging model call). Time is paused, so a
/// stall is seen as soon as every task waits.
async fn read(agent: &Agent, input: ReplyInput, interrupt_at: Option<usize>) -> Vec<AgentEvent> {
    let mut stream = agent.reply_stream(input);
    let mut out = Vec::new();
    let mut interrupted = false;
    loop {
        if !interrupted && interrupt_at == Some(out.len()) {
            stream.interrupt();
            interrupted = true;
        }
        match tokio::time::timeout(Duration::from_secs(600), stream.next()).await {
            Ok(Some(event)) => out.push(event),
            Ok(None) => return out,
            Err(_) => {
                assert!(!interrupted, "the stream stalled after an interrupt");
                stream.interrupt();
                interrupted = true;
            }
        }
    }
}

fn check_phase(
    at: &str,
    input: &ReplyInput,
    events: &[AgentEvent],
    before: &AgentState,
    after: &AgentState,
) -> Result<(), TestCaseError> {
    let types: Vec<&str> = events.iter().map(|e| e.event_type().as_str()).collect();
    if events.is_empty() {
        prop_assert!(
            matches!(input, ReplyInput::Interrupt(_)),
            "{at}: only an interrupt may start nothing"
        );
        prop_assert_eq!(before, after, "{}: an empty reply changed the state", at);
        return Ok(());
    }
    prop_assert_eq!(types[0], "REPLY_START", "{}: {:?}", at, types);
    let starts = types.iter().filter(|t| **t == "REPLY_START").count();
    prop_assert_eq!(starts, 1, "{}: {:?}", at, types);
    let ends = types.iter().filter(|t| **t == "REPLY_END").count();
    let last = *types.last().unwrap();
    match ends {
        0 => {
            prop_assert!(
                last == "REQUIRE_USER_CONFIRM" || last == "REQUIRE_EXTERNAL_EXECUTION",
                "{at}: no REPLY_END and not parked: {types:?}"
            );
            prop_assert!(after.is_parked(), "{at}: ended on {last} but not parked");
        }
        1 => prop_assert_eq!(last, "REPLY_END", "{}: {:?}", at, types),
        _ => prop_assert!(false, "{at}: {ends} REPLY_ENDs: {types:?}"),
    }
    let AgentEvent::ReplyStart(start) = &events[0] else {
        unreachable!()
    };
    let stored = after.context.iter().rev().find(|m| m.id == start.reply_id);
    let previous = before
        .context
        .iter()
        .rev()
        .find(|m| m.id == start.reply_id)
        .cloned();
    let refused = events.len() == 2
        && matches!(&events[1], AgentEvent::ReplyEnd(e) if e.error.is_some())
        && !matches!(input, ReplyInput::Msgs(_) | ReplyInput::Continue);
    if refused {
        prop_assert_eq!(before, after, "{}: a refused input changed the state", at);
        return Ok(());
    }
    let rebuilt = match previous {
        None => rebuild(events, None),
        Some(mut m) => {
            let input_event: Option<AgentEvent> = match input {
                ReplyInput::Confirm(e) => Some(e.clone().into()),
                ReplyInput::External(e) => Some(e.clone().into()),
                ReplyInput::Interrupt(e) => Some(e.clone().into()),
                ReplyInput::Msgs(_) | ReplyInput::Continue => None,
            };
            if let Some(e) = input_event {
                apply_event(&mut m, &e).unwrap();
            }
            rebuild(events, Some(m))
        }
    };
    prop_assert_eq!(stored, Some(&rebuilt), "{}: stored vs rebuilt", at);
    Ok(())
}

fn run_case(
    scenario: &Scenario,
    faults: &[Fault],
    interrupts: &[Option<usize>],
    max_retries: u32,
) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let scripted: Vec<ScriptedTurn> = scenario.events.iter().flat_map(|e| turns(e)).collect();
        let faulty = scripted
            .into_iter()
            .enumerate()
            .map(|(i, t)| apply_fault(t, faults.get(i).unwrap_or(&Fault::Keep)));
        let model = Arc::new(ScriptedModel::new(faulty));
        let agent = agent_for(scenario, model, max_retries);
        for (index, phase) in scenario.phases.iter().enumerate() {
            let at = format!("{} / {}", scenario.name, phase["phase"]);
            let before = agent.state().await;
            let input = input_of(&scenario.name, phase, &before.reply_context.reply_id);
            let interrupt_at = interrupts.get(index).copied().flatten();
            let events = read(&agent, input.clone(), interrupt_at).await;
            let after = agent.state().await;
            check_phase(&at, &input, &events, &before, &after)?;
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_stream_has_one_start_one_end_and_rebuilds_the_stored_reply(
        pick in any::<prop::sample::Index>(),
        faults in prop::collection::vec(fault(), 0..8),
        interrupts in prop::collection::vec(prop::option::weighted(0.3, 0usize..30), 0..3),
        max_retries in 0u32..3,
    ) {
        let all = scenarios();
        let scenario = &all[pick.index(all.len())];
        run_case(scenario, &faults, &interrupts, max_retries)?;
    }
}

#[test]
fn the_recorded_scenarios_keep_the_contract_without_faults() {
    for scenario in &scenarios() {
        run_case(scenario, &[], &[], 0).unwrap();
    }
}
