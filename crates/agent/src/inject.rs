//! Runtime-state injection: before a reasoning step, what changed in the
//! agent's world is told to the model as one hint block. Four dimensions,
//! each with its own timing:
//!
//! | dimension | when |
//! |---|---|
//! | time | no time recorded in the context yet, or `time_interval` hours passed |
//! | open tasks | unfinished tasks, while the context shows neither a task tool call nor an earlier tasks hint |
//! | context usage | first step of a reply, once the prompt is within `context_buffer_ratio` of the compression threshold |
//! | tool failures | the last `tool_retries_limit` (min 3) results are failures of the same tool with the same arguments |
//!
//! `extra_fields` ride along with any injection but never cause one.

use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
use oxiscope_message::{ContentBlock, Msg, RichContent, ToolResultState};
use oxiscope_tool::{TaskState, TasksContext};
use serde_json::Value;

use crate::config::InjectionConfig;

/// The prompt's size near the compression threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ContextUsage {
    /// Prompt tokens now.
    pub(crate) tokens: usize,
    /// The compression threshold in tokens.
    pub(crate) threshold: usize,
    /// Whether to invite the agent to call `CompressContext`.
    pub(crate) invite: bool,
}

/// A run of identical failing tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FailureStreak {
    /// The tool.
    pub(crate) tool: String,
    /// How many failures in a row.
    pub(crate) count: usize,
    /// The id of the newest failing call.
    pub(crate) last_id: String,
}

/// What the injection may report now.
#[derive(Debug)]
pub(crate) struct Facts<'a> {
    pub(crate) now: DateTime<Utc>,
    pub(crate) tasks: &'a TasksContext,
    pub(crate) usage: Option<ContextUsage>,
    pub(crate) failure: Option<FailureStreak>,
}

/// The hint text to inject now, or `None` when nothing is due.
pub(crate) fn runtime_hint(
    config: &InjectionConfig,
    context: &[Msg],
    facts: &Facts<'_>,
) -> Option<String> {
    if !config.inject_runtime_state {
        return None;
    }
    let mut fields: Vec<String> = Vec::new();
    let (offset, zone_label) = zone(&config.timezone, facts.now);
    let local = facts.now.with_timezone(&offset).naive_local();
    let time_due = last_injected_time(config, context).is_none_or(|last| {
        (local - last)
            .to_std()
            .map_or(true, |elapsed| elapsed >= config.interval())
    });
    if time_due {
        fields.push(format!(
            "<current-time>{}</current-time>\n<timezone>{zone_label}</timezone>",
            local.format(&config.time_format)
        ));
    }
    if let Some(tasks) = tasks_field(config, context, facts.tasks) {
        fields.push(tasks);
    }
    if let Some(u) = facts.usage {
        let mut text = format!(
            "<context-usage>The prompt holds about {} tokens; the context is compressed \
             automatically above {} tokens.",
            u.tokens, u.threshold
        );
        if u.invite {
            text.push_str(
                " If you are between two pieces of work, you may call `CompressContext` now to \
                 compress it yourself at a good moment.",
            );
        }
        text.push_str("</context-usage>");
        fields.push(text);
    }
    if let Some(f) = &facts.failure {
        let hint = config
            .tool_retries_hint
            .replace("{tool_name}", &f.tool)
            .replace("{count}", &f.count.to_string());
        fields.push(format!("<tool-failure>{hint}</tool-failure>"));
    }
    if fields.is_empty() {
        return None;
    }
    if let Some(extra) = &config.extra_fields {
        for (key, value) in extra {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            fields.push(format!("<{key}>{value}</{key}>"));
        }
    }
    Some(
        config
            .template
            .replace("{runtime_state}", &fields.join("\n")),
    )
}

/// The open-tasks field, unless the context already shows the tasks.
fn tasks_field(config: &InjectionConfig, context: &[Msg], tasks: &TasksContext) -> Option<String> {
    let in_progress = tasks
        .tasks
        .iter()
        .filter(|t| t.state == TaskState::InProgress)
        .count();
    let pending = tasks
        .tasks
        .iter()
        .filter(|t| t.state == TaskState::Pending)
        .count();
    if in_progress + pending == 0 {
        return None;
    }
    let default_names = ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"];
    let is_task_tool = |name: &str| match &config.task_tool_names {
        Some(names) => names.iter().any(|n| n == name),
        None => default_names.contains(&name),
    };
    let seen = context
        .iter()
        .flat_map(|m| m.content.iter())
        .any(|b| match b {
            ContentBlock::ToolCall(c) => is_task_tool(&c.name),
            ContentBlock::Hint(h) => {
                h.source.as_deref() == Some(config.injection_source.as_str())
                    && h.hint.text("").contains("<tasks>")
            }
            _ => false,
        });
    if seen {
        return None;
    }
    Some(format!(
        "<tasks>You have {in_progress} in-progress and {pending} pending tasks. Call `TaskList` \
         to see them if you do not remember them.</tasks>"
    ))
}

/// The run of identical failing calls at the end of the context, when it
/// is at least `limit` long (`limit` is at least 3).
pub(crate) fn failure_streak(context: &[Msg], limit: u32) -> Option<FailureStreak> {
    let limit = limit.max(3) as usize;
    let mut streak: Option<(String, Value, usize, String)> = None;
    'outer: for msg in context.iter().rev() {
        if msg.role == oxiscope_message::Role::User {
            // A new request: earlier failures were already hinted at.
            break;
        }
        for block in msg.content.iter().rev() {
            let ContentBlock::ToolResult(r) = block else {
                continue;
            };
            if r.finished_at.is_none() {
                continue;
            }
            if r.state != ToolResultState::Error {
                break 'outer;
            }
            let input = msg
                .tool_calls()
                .find(|c| c.id == r.id)
                .map(|c| normalise(&c.input))
                .unwrap_or(Value::Null);
            match &mut streak {
                None => streak = Some((r.name.clone(), input, 1, r.id.to_string())),
                Some((name, args, count, _)) => {
                    if *name != r.name || *args != input {
                        break 'outer;
                    }
                    *count += 1;
                }
            }
        }
    }
    let (tool, _, count, last_id) = streak?;
    (count >= limit).then_some(FailureStreak {
        tool,
        count,
        last_id,
    })
}

/// Arguments compared without regard to key order or spacing.
fn normalise(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.trim().to_owned()))
}

/// The offset in force at `now` for `name`: `UTC`, a fixed offset such as
/// `+02:00`, or an IANA zone such as `Asia/Shanghai` (daylight saving
/// applied). An unknown name falls back to UTC and the label says `UTC`,
/// so the model is never told a zone whose time it was not given.
fn zone(name: &str, now: DateTime<Utc>) -> (FixedOffset, String) {
    let utc = FixedOffset::east_opt(0).unwrap_or_else(|| Utc.fix());
    let name = name.trim();
    if name.eq_ignore_ascii_case("utc") || name.is_empty() {
        return (utc, "UTC".to_owned());
    }
    if let Ok(offset) = name.parse::<FixedOffset>() {
        return (offset, name.to_owned());
    }
    match name.parse::<chrono_tz::Tz>() {
        Ok(tz) => (now.with_timezone(&tz).offset().fix(), tz.name().to_owned()),
        Err(_) => (utc, "UTC".to_owned()),
    }
}

use chrono::Offset;

/// The time of the newest earlier injection found in the context.
fn last_injected_time(config: &InjectionConfig, context: &[Msg]) -> Option<NaiveDateTime> {
    for msg in context.iter().rev() {
        for block in msg.content.iter().rev() {
            let ContentBlock::Hint(hint) = block else {
                continue;
            };
            if hint.source.as_deref() != Some(config.injection_source.as_str()) {
                continue;
            }
            let RichContent::Text(text) = &hint.hint else {
                continue;
            };
            let Some(start) = text.find("<current-time>") else {
                continue;
            };
            let rest = &text[start + "<current-time>".len()..];
            let Some(end) = rest.find("</current-time>") else {
                continue;
            };
            if let Ok(t) = NaiveDateTime::parse_from_str(&rest[..end], &config.time_format) {
                return Some(t);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use oxiscope_message::HintBlock;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, h, m, 0).unwrap()
    }

    fn runtime_hint(
        config: &InjectionConfig,
        context: &[Msg],
        now: DateTime<Utc>,
    ) -> Option<String> {
        let tasks = TasksContext::default();
        let facts = Facts {
            now,
            tasks: &tasks,
            usage: None,
            failure: None,
        };
        super::runtime_hint(config, context, &facts)
    }

    #[test]
    fn the_time_is_injected_once_per_interval() {
        let config = InjectionConfig::default();
        let mut context: Vec<Msg> = Vec::new();
        let hint = runtime_hint(&config, &context, at(10, 0)).unwrap();
        assert!(
            hint.contains("<current-time>2026-11-30T10:00:00</current-time>"),
            "{hint}"
        );
        let mut reply = Msg::reply("a", "r");
        reply
            .content
            .push(HintBlock::new(hint, Some(config.injection_source.clone())).into());
        context.push(reply);
        assert_eq!(runtime_hint(&config, &context, at(10, 20)), None);
        assert!(runtime_hint(&config, &context, at(10, 31)).is_some());
    }

    #[test]
    fn a_failure_streak_counts_identical_failures_of_the_current_request_only() {
        use oxiscope_message::{Role, ToolCallBlock, ToolResultBlock};
        let fail = |m: &mut Msg, id: &str, args: &str| {
            m.content.push(ToolCallBlock::new(id, "Bash", args).into());
            let mut r = ToolResultBlock::new(id, "Bash", "boom", ToolResultState::Error);
            r.finished_at = Some("2026-11-30T00:00:00".into());
            m.content.push(r.into());
        };
        let mut reply = Msg::reply("a", "r");
        fail(&mut reply, "1", r#"{"command": "make", "timeout": 5}"#);
        fail(&mut reply, "2", r#"{"timeout": 5, "command": "make"}"#);
        assert_eq!(failure_streak(std::slice::from_ref(&reply), 3), None);
        fail(&mut reply, "3", r#"{ "command":"make","timeout":5 }"#);
        let streak = failure_streak(std::slice::from_ref(&reply), 3).unwrap();
        assert_eq!((streak.tool.as_str(), streak.count), ("Bash", 3));
        // Other arguments break the streak; a new request ends the scan.
        let mut other = reply.clone();
        fail(&mut other, "4", r#"{"command": "make test"}"#);
        assert_eq!(failure_streak(std::slice::from_ref(&other), 3), None);
        let next = Msg::from_text("u", Role::User, "try again");
        assert_eq!(failure_streak(&[reply, next], 3), None);
    }

    #[test]
    fn no_injection_when_switched_off() {
        let config = InjectionConfig {
            inject_runtime_state: false,
            ..InjectionConfig::default()
        };
        assert_eq!(runtime_hint(&config, &[], at(1, 0)), None);
    }

    #[test]
    fn fixed_offsets_shift_the_time() {
        let config = InjectionConfig {
            timezone: "+02:00".into(),
            ..InjectionConfig::default()
        };
        let hint = runtime_hint(&config, &[], at(10, 0)).unwrap();
        assert!(hint.contains("T12:00:00") && hint.contains("<timezone>+02:00</timezone>"));
    }

    #[test]
    fn named_zones_use_the_offset_in_force() {
        let config = InjectionConfig {
            timezone: "Europe/Berlin".into(),
            ..InjectionConfig::default()
        };
        // 30 November: standard time, UTC+1.
        let winter = runtime_hint(&config, &[], at(10, 0)).unwrap();
        assert!(winter.contains("T11:00:00"), "{winter}");
        assert!(winter.contains("<timezone>Europe/Berlin</timezone>"));
        // 1 July: summer time, UTC+2.
        let summer_now = Utc.with_ymd_and_hms(2026, 7, 1, 10, 0, 0).unwrap();
        let summer = runtime_hint(&config, &[], summer_now).unwrap();
        assert!(summer.contains("T12:00:00"), "{summer}");
    }

    #[test]
    fn unknown_zones_fall_back_to_utc_and_say_so() {
        let config = InjectionConfig {
            timezone: "Mars/Olympus".into(),
            ..InjectionConfig::default()
        };
        let hint = runtime_hint(&config, &[], at(10, 0)).unwrap();
        assert!(hint.contains("T10:00:00") && hint.contains("<timezone>UTC</timezone>"));
    }
}
