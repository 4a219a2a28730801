//! Runtime-state injection: telling the model the current time as a hint
//! block at the start of a reply (again once `time_interval` has passed).

use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
use oxiscope_message::{ContentBlock, Msg, RichContent};

use crate::config::InjectionConfig;

/// The hint text to inject now, or `None` when nothing is due.
pub(crate) fn runtime_hint(
    config: &InjectionConfig,
    context: &[Msg],
    now: DateTime<Utc>,
) -> Option<String> {
    if !config.inject_runtime_state {
        return None;
    }
    let (offset, zone_label) = zone(&config.timezone);
    let local = now.with_timezone(&offset).naive_local();
    if let Some(last) = last_injected_time(config, context)
        && (local - last)
            .to_std()
            .is_ok_and(|elapsed| elapsed < config.interval())
    {
        return None;
    }
    let mut fields = format!(
        "<current-time>{}</current-time>\n<timezone>{zone_label}</timezone>",
        local.format(&config.time_format)
    );
    if let Some(extra) = &config.extra_fields {
        for (key, value) in extra {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            fields.push_str(&format!("\n<{key}>{value}</{key}>"));
        }
    }
    Some(config.template.replace("{runtime_state}", &fields))
}

/// `UTC` or a fixed offset such as `+02:00`; other names fall back to UTC
/// (there is no time-zone database in the build) and say so in the label.
fn zone(name: &str) -> (FixedOffset, String) {
    let utc = FixedOffset::east_opt(0).unwrap_or_else(|| Utc.fix());
    if name.eq_ignore_ascii_case("utc") || name.is_empty() {
        return (utc, "UTC".to_owned());
    }
    match name.parse::<FixedOffset>() {
        Ok(offset) => (offset, name.to_owned()),
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
}
