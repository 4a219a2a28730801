//! Usage counters: added per session and per user and day, read back
//! only by their owner, summed over a window of days.

use oxiscope_storage::UsageCounts;
use pretty_assertions::assert_eq;

use super::backends::{Site, storage_tests};

storage_tests!(
    usage_adds_up_per_session_and_per_user_and_stays_with_its_owner,
    usage_survives_reopening_and_huge_counts_do_not_wrap,
    adding_to_a_saturated_counter_keeps_it_at_the_maximum_and_readable,
);

fn spent(input: u64, output: u64, calls: u64) -> UsageCounts {
    UsageCounts {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: input / 2,
        cache_write_tokens: 1,
        model_calls: calls,
        runs: 1,
    }
}

async fn usage_adds_up_per_session_and_per_user_and_stays_with_its_owner(site: &Site) {
    let store = site.open().await;
    store
        .add_usage("alice", "s1", "2026-11-30", &spent(100, 10, 1))
        .await
        .unwrap();
    store
        .add_usage("alice", "s1", "2026-12-01", &spent(200, 20, 2))
        .await
        .unwrap();
    store
        .add_usage("alice", "s2", "2026-12-01", &spent(1, 1, 1))
        .await
        .unwrap();

    let s1 = store.session_usage("alice", "s1").await.unwrap();
    assert_eq!(
        s1,
        UsageCounts {
            input_tokens: 300,
            output_tokens: 30,
            cache_read_tokens: 150,
            cache_write_tokens: 2,
            model_calls: 3,
            runs: 2,
        }
    );
    assert_eq!(s1.total_tokens(), 330);

    // Another user reads zeros for alice's session and for themselves.
    assert_eq!(
        store.session_usage("mallory", "s1").await.unwrap(),
        UsageCounts::default()
    );
    assert!(store.user_usage("mallory", None).await.unwrap().is_empty());
    assert_eq!(
        store.session_usage("alice", "missing").await.unwrap(),
        UsageCounts::default()
    );

    let all = store.user_usage("alice", None).await.unwrap();
    assert_eq!(
        (all.input_tokens, all.output_tokens, all.runs),
        (301, 31, 3)
    );
    let today = store.user_usage("alice", Some("2026-12-01")).await.unwrap();
    assert_eq!((today.input_tokens, today.model_calls), (201, 3));
    assert!(
        store
            .user_usage("alice", Some("2026-12-02"))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn usage_survives_reopening_and_huge_counts_do_not_wrap(site: &Site) {
    {
        let store = site.open().await;
        store
            .add_usage("bob", "s", "2026-12-01", &spent(u64::MAX, 5, 1))
            .await
            .unwrap();
        drop(store);
    }
    let store = site.open().await;
    let s = store.session_usage("bob", "s").await.unwrap();
    assert_eq!(s.input_tokens, i64::MAX as u64);
    assert_eq!(s.output_tokens, 5);
    assert_eq!(s.total_tokens(), i64::MAX as u64 + 5);
}

async fn adding_to_a_saturated_counter_keeps_it_at_the_maximum_and_readable(site: &Site) {
    let store = site.open().await;
    let max = i64::MAX as u64;
    // Twice on one day (the upsert adds to a full counter), once on
    // another (the window sums two full days).
    for day in ["2026-12-01", "2026-12-01", "2026-12-02"] {
        store
            .add_usage("eve", "s", day, &spent(u64::MAX, 7, u64::MAX))
            .await
            .unwrap();
    }
    let s = store.session_usage("eve", "s").await.unwrap();
    assert_eq!((s.input_tokens, s.output_tokens), (max, 21));
    assert_eq!((s.model_calls, s.runs), (max, 3));
    let all = store.user_usage("eve", None).await.unwrap();
    assert_eq!((all.input_tokens, all.output_tokens), (max, 21));
    assert_eq!(all.model_calls, max);
    let day = store.user_usage("eve", Some("2026-12-02")).await.unwrap();
    assert_eq!((day.input_tokens, day.runs), (max, 1));
}
