//! `oxiscope chat` driven in a pseudo-terminal against the fake OpenAI
//! server: streamed text, confirmations, Ctrl+C, sessions across processes.

use std::time::Duration;

use oxiscope_test_support::OpenAiScript;
use rexpect::session::{PtySession, spawn_command};

use super::chat_env::{ChatEnv, bash, text};

const TIMEOUT_MS: u64 = 30_000;

fn spawn(env: &ChatEnv, args: &[&str]) -> PtySession {
    spawn_command(env.chat(args), Some(TIMEOUT_MS)).unwrap()
}

fn leave(mut p: PtySession) {
    p.exp_string("user> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_session_streams_text_asks_once_and_remembers_the_accepted_rule() {
    let env = ChatEnv::new();
    env.answer(&text("Hello from the fake model."));
    env.answer(&bash("call_1", "touch one.txt"));
    env.answer(&bash("call_2", "touch one.txt two.txt"));
    env.answer(&text("Both files are there."));

    let mut p = spawn(&env, &["--session", "work"]);
    p.exp_string("user> ").unwrap();
    p.send_line("hello").unwrap();
    p.exp_string("Oxiscope: Hello from the fake model.")
        .unwrap();
    p.exp_string("tokens: 20 in ").unwrap();

    p.exp_string("user> ").unwrap();
    p.send_line("make two files").unwrap();
    p.exp_string("Bash(touch one.txt)").unwrap();
    p.exp_string("suggested rules: Bash(touch:*)").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    p.send_line("a").unwrap();
    // The second call matches the accepted rule: it runs without a prompt.
    let between = p.exp_string("Oxiscope: Both files are there.").unwrap();
    assert!(between.contains("Bash(touch one.txt two.txt)"), "{between}");
    assert!(!between.contains("[N] deny"), "asked twice: {between}");
    leave(p);

    assert!(env.work().join("one.txt").exists());
    assert!(env.work().join("two.txt").exists());
    assert_eq!(env.requests().len(), 4);
    // The prompt history is kept in the data dir, answers to confirmations not.
    let history = std::fs::read_to_string(env.data().join("history.txt")).unwrap();
    assert!(history.contains("make two files"), "{history}");
    assert!(!history.lines().any(|l| l == "a"), "{history}");

    // A new process resumes the saved conversation, showing where it stands.
    env.answer(&text("I remember."));
    let mut p = spawn(&env, &["--session", "work"]);
    p.exp_string("(resuming session work: ").unwrap();
    p.exp_string("user: make two files").unwrap();
    p.exp_string("Oxiscope: ").unwrap();
    p.exp_string("Bash(touch one.txt two.txt)").unwrap();
    let shown = p.exp_string("Both files are there.").unwrap();
    assert!(
        !shown.contains("hello"),
        "more than the last exchange: {shown}"
    );
    p.exp_string("user> ").unwrap();
    p.send_line("what did we do?").unwrap();
    p.exp_string("Oxiscope: I remember.").unwrap();
    leave(p);
    let sent = serde_json::to_string(&env.messages(4)).unwrap();
    assert!(sent.contains("hello"), "{sent}");
    assert!(sent.contains("touch one.txt two.txt"), "{sent}");
    assert!(sent.contains("what did we do?"), "{sent}");
}

#[test]
fn ctrl_c_interrupts_a_streaming_reply_and_the_console_goes_on() {
    let env = ChatEnv::new();
    let slow = OpenAiScript::new()
        .text("Counting: one")
        .text(", two")
        .text(", three")
        .finish("stop");
    env.answer_slowly(&slow, 2, Duration::from_secs(60));
    env.answer(&text("Still here."));

    let mut p = spawn(&env, &[]);
    p.exp_string("user> ").unwrap();
    p.send_line("count slowly").unwrap();
    p.exp_string("Counting: one").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("[interrupted]").unwrap();
    p.exp_string("user> ").unwrap();
    p.send_line("are you there?").unwrap();
    p.exp_string("Oxiscope: Still here.").unwrap();
    leave(p);
    // The interrupted partial answer stays in the context.
    let sent = serde_json::to_string(&env.messages(1)).unwrap();
    assert!(sent.contains("Counting: one"), "{sent}");
}

#[test]
fn a_confirmation_left_open_is_asked_again_in_a_new_process() {
    let env = ChatEnv::new();
    env.answer(&bash("call_1", "touch later.txt"));
    let mut p = spawn(&env, &["--session", "paused"]);
    p.exp_string("user> ").unwrap();
    p.send_line("make a file").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    // The process dies while the question is open.
    p.process_mut()
        .kill(rexpect::process::Signal::SIGKILL)
        .unwrap();
    assert!(!env.work().join("later.txt").exists());

    env.answer(&text("Made it."));
    let mut p = spawn(&env, &["--session", "paused"]);
    p.exp_string("waiting for your confirmation").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("Oxiscope: Made it.").unwrap();
    leave(p);
    assert!(env.work().join("later.txt").exists());
}

#[test]
fn ctrl_d_or_ctrl_c_at_a_confirmation_interrupts_the_reply() {
    let env = ChatEnv::new();
    env.answer(&bash("call_1", "touch never.txt"));
    env.answer(&text("Fine."));
    let mut p = spawn(&env, &[]);
    p.exp_string("user> ").unwrap();
    p.send_line("make a file").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    p.send_control('d').unwrap();
    p.exp_string("[interrupted]").unwrap();
    p.exp_string("user> ").unwrap();
    p.send_line("ok").unwrap();
    p.exp_string("Oxiscope: Fine.").unwrap();
    // Ctrl+C at a confirmation does the same.
    env.answer(&bash("call_2", "touch nor.txt"));
    env.answer(&text("Okay."));
    p.exp_string("user> ").unwrap();
    p.send_line("another file").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("[interrupted]").unwrap();
    p.exp_string("user> ").unwrap();
    p.send_line("ok").unwrap();
    p.exp_string("Oxiscope: Okay.").unwrap();
    p.exp_string("user> ").unwrap();
    p.send_line("exit").unwrap();
    p.exp_eof().unwrap();
    assert!(!env.work().join("never.txt").exists());
    assert!(!env.work().join("nor.txt").exists());
}

#[test]
fn a_denied_call_shows_as_denied_without_the_note_for_the_model() {
    let env = ChatEnv::new();
    env.answer(&bash("call_1", "touch no.txt"));
    env.answer(&text("Understood."));
    let mut p = spawn(&env, &[]);
    p.exp_string("user> ").unwrap();
    p.send_line("make a file").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    p.send_line("n").unwrap();
    let shown = p.exp_string("Oxiscope: Understood.").unwrap();
    assert!(shown.contains("Bash (denied)"), "{shown}");
    assert!(!shown.contains("system-reminder"), "{shown}");
    assert!(!shown.contains("did not allow"), "{shown}");
    leave(p);
    // The model still reads the note.
    let sent = serde_json::to_string(&env.messages(1)).unwrap();
    assert!(sent.contains("did not allow"), "{sent}");
}

#[test]
fn an_always_allowed_rule_is_saved_in_the_project_and_holds_in_the_next_console() {
    let env = ChatEnv::new();
    let settings = env.work().join(".oxiscope/settings.toml");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        "# my notes\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
    env.answer(&bash("call_1", "touch kept.txt"));
    env.answer(&text("Made one."));
    let mut p = spawn(&env, &[]);
    p.exp_string("user> ").unwrap();
    p.send_line("make a file").unwrap();
    p.exp_string("[N] deny: ").unwrap();
    p.send_line("a").unwrap();
    p.exp_string("(saved Bash(touch:*) to ").unwrap();
    p.exp_string("settings.toml)").unwrap();
    p.exp_string("Oxiscope: Made one.").unwrap();
    leave(p);
    let saved = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(
        saved,
        "# my notes\n[permissions]\nallow = [\"Bash(touch:*)\"]\ndeny = [\"Bash(rm:*)\"]\n"
    );

    // A new console in the same directory runs the same command unasked.
    env.answer(&bash("call_2", "touch again.txt"));
    env.answer(&text("Made another."));
    let mut p = spawn(&env, &[]);
    p.exp_string("user> ").unwrap();
    p.send_line("make another").unwrap();
    let shown = p.exp_string("Oxiscope: Made another.").unwrap();
    assert!(!shown.contains("[N] deny"), "asked again: {shown}");
    leave(p);
    assert!(env.work().join("again.txt").exists());
}

/// What a terminal shows of `raw`: each line after its carriage returns
/// and erase-to-end-of-line sequences.
fn screen(raw: &str) -> Vec<String> {
    raw.split('\n')
        .map(|line| {
            let mut shown: Vec<char> = Vec::new();
            let mut cursor = 0;
            let mut rest = line;
            while let Some(c) = rest.chars().next() {
                if let Some(after) = rest.strip_prefix("\x1b[K") {
                    shown.truncate(cursor);
                    rest = after;
                    continue;
                }
                rest = &rest[c.len_utf8()..];
                match c {
                    '\r' => cursor = 0,
                    c => {
                        if cursor < shown.len() {
                            shown[cursor] = c;
                        } else {
                            shown.push(c);
                        }
                        cursor += 1;
                    }
                }
            }
            shown.into_iter().collect()
        })
        .collect()
}

#[test]
fn a_spinner_turns_while_the_first_token_is_awaited_and_is_gone_after() {
    let env = ChatEnv::new();
    env.answer_slowly(&text("Here at last."), 0, Duration::from_millis(150));
    let mut p = spawn(&env, &[]);
    p.exp_string("user> ").unwrap();
    p.send_line("take your time").unwrap();
    let raw = p.exp_string("Here at last.").unwrap();
    leave(p);
    // rexpect reads each byte as a char.
    let raw = String::from_utf8(raw.chars().map(|c| c as u8).collect()).unwrap();
    let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    assert!(raw.contains(frames), "no spinner: {raw:?}");
    let shown = screen(&raw);
    assert!(
        !shown.iter().any(|l| l.contains(frames)),
        "the spinner stayed: {shown:?}"
    );
    // The answer's line starts where the spinner was.
    assert_eq!(
        shown.last().map(String::as_str),
        Some("Oxiscope: "),
        "{shown:?}"
    );
}
