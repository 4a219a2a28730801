//! The tool-call journal: a call is journaled once per idempotency key,
//! finished once, listed per session (unfinished ones are in doubt), and
//! cleared with its reply.

use oxiscope_storage::{RESULT_LIMIT, ToolCallRecord};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::backends::{Site, storage_tests};

storage_tests!(
    a_tool_call_is_journaled_once_finished_once_and_cleared_with_its_session,
    a_huge_result_is_capped_and_the_journal_outlives_reopening,
);

async fn a_tool_call_is_journaled_once_finished_once_and_cleared_with_its_session(site: &Site) {
    let store = site.open().await;
    let first = ToolCallRecord::start("s1", "r1", "call_a", "Bash");
    assert_eq!(first.idempotency_key, "s1:r1:call_a");
    assert!(store.start_tool_call(&first).await.unwrap());
    // Started again (by whoever): one entry.
    assert!(!store.start_tool_call(&first).await.unwrap());
    let second = ToolCallRecord::start("s1", "r1", "call_b", "Write");
    assert!(store.start_tool_call(&second).await.unwrap());
    let other = ToolCallRecord::start("s2", "r9", "call_a", "Bash");
    assert!(store.start_tool_call(&other).await.unwrap());

    let result = json!({"state": "success", "output": "done"});
    assert!(
        store
            .finish_tool_call(&first.idempotency_key, &result)
            .await
            .unwrap()
    );
    // A second finish changes nothing; an unknown key is no entry.
    assert!(
        !store
            .finish_tool_call(&first.idempotency_key, &json!("again"))
            .await
            .unwrap()
    );
    assert!(!store.finish_tool_call("nope", &result).await.unwrap());

    let calls = store.list_tool_calls("s1").await.unwrap();
    let keys: Vec<(&str, bool)> = calls
        .iter()
        .map(|c| (c.call_id.as_str(), c.in_doubt()))
        .collect();
    assert_eq!(keys, [("call_a", false), ("call_b", true)]);
    assert_eq!(calls[0].result, Some(result));
    assert!(calls[0].finished_at.is_some());
    assert_eq!(calls[1].tool_name, "Write");
    assert_eq!(calls[1].result, None);

    assert_eq!(store.clear_tool_calls("s1").await.unwrap(), 2);
    assert_eq!(store.list_tool_calls("s1").await.unwrap(), Vec::new());
    assert_eq!(store.list_tool_calls("s2").await.unwrap().len(), 1);
}

async fn a_huge_result_is_capped_and_the_journal_outlives_reopening(site: &Site) {
    let store = site.open().await;
    let call = ToolCallRecord::start("s", "r", "c", "Read");
    store.start_tool_call(&call).await.unwrap();
    let huge = json!({"output": "x".repeat(RESULT_LIMIT * 4)});
    store
        .finish_tool_call(&call.idempotency_key, &huge)
        .await
        .unwrap();
    drop(store);
    let store = site.open().await;
    let calls = store.list_tool_calls("s").await.unwrap();
    let kept = calls[0].result.as_ref().unwrap().as_str().unwrap();
    assert!(kept.len() <= RESULT_LIMIT + 16, "{}", kept.len());
    assert!(kept.ends_with("[cut]"));
}
