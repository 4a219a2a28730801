//! What a tape costs: the 20-round reply recorded on a tape next to the
//! same reply unrecorded, and the replay of that tape (no model, no tool)
//! next to the original run; samples alternate.
//!
//! First figures (2026-12-02, one release run, 2 cores under a load of
//! about 11; medians): recorded 6.42 ms wall / 5.40 ms CPU against 11.42 /
//! 5.64 unrecorded (0.96x CPU; the wall figures are noise at that load);
//! the replay 9.70 ms wall / 7.27 ms CPU (0.85x wall, 1.29x CPU: it
//! compares every step as JSON where the run parsed HTTP).

use std::sync::Arc;

use oxiscope::tape::{TapeRecorder, TapeReplayer};
use oxiscope_model::DynChatModel;
use oxiscope_tool::Toolkit;

use super::measure::{Row, Samples, measure};
use super::oxi;

pub fn rows(
    rt: &tokio::runtime::Runtime,
    model: &Arc<dyn DynChatModel>,
    toolkit: &Arc<Toolkit>,
    count: usize,
) -> Vec<Row> {
    let (mut plain, mut recorded, mut replayed) =
        (Samples::default(), Samples::default(), Samples::default());
    for i in 0..=count {
        let agent = oxi::agent(model, toolkit);
        let (_, p) = measure(|| {
            rt.block_on(rt.spawn(async move { oxi::reply(&agent, "go").await }))
                .unwrap()
        });
        let recorder = TapeRecorder::new();
        let agent = oxi::agent_with(model, toolkit, recorder.clone());
        let (_, r) = measure(|| {
            rt.block_on(rt.spawn(async move { oxi::reply(&agent, "go").await }))
                .unwrap()
        });
        let replayer = TapeReplayer::new(recorder.tape());
        let agent = oxi::agent_with(model, toolkit, replayer.clone());
        let (report, y) = measure(|| {
            rt.block_on(rt.spawn(async move { replayer.run(&agent).await }))
                .unwrap()
        });
        assert_eq!(report.divergence, None, "the replay parted from its tape");
        assert_eq!(report.model_calls, 21);
        // The first round warms the connection pool.
        if i > 0 {
            plain.push(p);
            recorded.push(r);
            replayed.push(y);
        }
    }
    vec![
        Row::timed(
            "20 tool rounds recorded on a tape (floor: the same reply unrecorded)",
            &plain,
            &recorded,
            "<= 1.05x wall and CPU",
        ),
        Row::timed(
            "replay of that 20-round tape (floor: the original run)",
            &plain,
            &replayed,
            "< 1x wall",
        ),
    ]
}
