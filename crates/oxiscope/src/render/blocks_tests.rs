use oxiscope_message::{Base64Source, DataBlock, DataSource, ToolCallBlock, UrlSource};
use pretty_assertions::assert_eq;

use super::*;

#[test]
fn call_title_prefers_the_key_argument() {
    let call = ToolCallBlock::new("c1", "Bash", r#"{"command":"git  status\n","timeout":5}"#);
    assert_eq!(call_title(&call), "Bash(git status)");
    let other = ToolCallBlock::new("c2", "lookup", r#"{"id":3}"#);
    assert_eq!(call_title(&other), r#"lookup({"id":3})"#);
    let broken = ToolCallBlock::new("c3", "Read", r#"{"file_path": "/a"#);
    assert_eq!(call_title(&broken), r#"Read({"file_path": "/a)"#);
}

#[test]
fn data_placeholders_estimate_the_decoded_size() {
    let b64 = DataBlock::new(DataSource::Base64(Base64Source {
        data: "A".repeat(46_424),
        media_type: "image/png".into(),
    }));
    assert_eq!(data_placeholder(&b64), "[data: image/png, ~34KB]");
    let url = DataBlock::new(DataSource::Url(UrlSource {
        url: "https://example.com/a.wav".into(),
        media_type: "audio/wav".into(),
    }))
    .with_name("a.wav");
    assert_eq!(
        data_placeholder(&url),
        "[data: audio/wav, a.wav, https://example.com/a.wav]"
    );
    assert_eq!(approx_size(10), "~10B");
    assert_eq!(approx_size(3 * 1024 * 1024 / 2), "~1.5MB");
}

#[test]
fn hint_sources_in_agentscope_form_become_labels() {
    assert_eq!(
        source_label(r#"{"label": "System", "sublabel": "Runtime State"}"#),
        "System / Runtime State"
    );
    assert_eq!(source_label("planner"), "planner");
}

#[test]
fn reminders_for_the_model_are_left_out_of_what_the_user_sees() {
    assert_eq!(
        without_reminders("<system-reminder>The user did not allow this call.</system-reminder>"),
        ""
    );
    assert_eq!(
        without_reminders("line 1\n<system-reminder>note</system-reminder>\nline 2"),
        "line 1\n\nline 2"
    );
    assert_eq!(without_reminders("ok <system-reminder>cut"), "ok");
    assert_eq!(without_reminders("a < b"), "a < b");

    let result = oxiscope_message::ToolResultBlock::new(
        "c1",
        "Bash",
        oxiscope_message::RichContent::Text(
            "<system-reminder>The user did not allow this call of \"Bash\".</system-reminder>"
                .into(),
        ),
        ToolResultState::Denied,
    );
    let plain = Painter { color: false };
    assert_eq!(
        result_block(plain, &result, None, false),
        "  ⎿ Bash (denied)\n"
    );
    assert!(result_block(plain, &result, None, true).contains("did not allow"));
}
