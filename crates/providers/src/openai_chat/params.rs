//! Generation parameters, from the model card's names to a vendor's wire
//! names.
//!
//! Parameters are given as the model card's `parameter_schema` names them
//! (`max_tokens`, `thinking_enable`, `voice`, ...); most are the wire names
//! too and go into the body unchanged. DashScope's compatible mode is the
//! exception this module handles:
//!
//! | card | DashScope body |
//! |---|---|
//! | `thinking_enable` (default `false`) | `enable_thinking`, always sent |
//! | `voice` | `audio: {"voice", "format": "pcm16"}` and `modalities: ["text", "audio"]` |
//! | `parallel_tool_calls: true` (the default) | left out; `false` is sent with tools |
//!
//! A wire name given directly (`enable_thinking`, `audio`, `modalities`)
//! wins over the card name's translation.

use serde_json::{Map, Value, json};

use super::Vendor;

/// `params`, named as `vendor`'s API names them.
pub(crate) fn wire_parameters(vendor: Vendor, params: Map<String, Value>) -> Map<String, Value> {
    match vendor {
        Vendor::DashScope => dashscope(params),
        _ => params,
    }
}

fn dashscope(mut params: Map<String, Value>) -> Map<String, Value> {
    let thinking = params
        .remove("thinking_enable")
        .filter(|v| !v.is_null())
        .unwrap_or(Value::Bool(false));
    if !params.contains_key("enable_thinking") {
        params.insert("enable_thinking".into(), thinking);
    }
    if let Some(voice) = params.remove("voice").filter(|v| !v.is_null()) {
        if !params.contains_key("audio") {
            params.insert("audio".into(), json!({"voice": voice, "format": "pcm16"}));
        }
        if !params.contains_key("modalities") {
            params.insert("modalities".into(), json!(["text", "audio"]));
        }
    }
    if params.get("parallel_tool_calls") == Some(&Value::Bool(true)) {
        params.remove("parallel_tool_calls");
    }
    for key in [
        "max_tokens",
        "thinking_budget",
        "temperature",
        "top_p",
        "top_k",
    ] {
        if params.get(key).is_some_and(Value::is_null) {
            params.remove(key);
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn dashscope(value: Value) -> Value {
        Value::Object(wire_parameters(Vendor::DashScope, map(value)))
    }

    #[test]
    fn dashscope_renames_thinking_and_always_says_whether_it_is_on() {
        assert_eq!(dashscope(json!({})), json!({"enable_thinking": false}));
        assert_eq!(
            dashscope(json!({"thinking_enable": true, "thinking_budget": 512, "top_k": 20})),
            json!({"enable_thinking": true, "thinking_budget": 512, "top_k": 20})
        );
        assert_eq!(
            dashscope(json!({"thinking_enable": true, "enable_thinking": false})),
            json!({"enable_thinking": false}),
            "the wire name wins"
        );
        assert_eq!(
            dashscope(json!({"thinking_enable": null, "max_tokens": null, "temperature": 0.5})),
            json!({"enable_thinking": false, "temperature": 0.5}),
            "unset card values are left out"
        );
    }

    #[test]
    fn dashscope_voice_asks_for_audio_and_parallel_calls_are_only_sent_when_off() {
        assert_eq!(
            dashscope(json!({"voice": "Cherry", "parallel_tool_calls": true})),
            json!({
                "enable_thinking": false,
                "audio": {"voice": "Cherry", "format": "pcm16"},
                "modalities": ["text", "audio"],
            })
        );
        assert_eq!(
            dashscope(json!({"voice": null, "parallel_tool_calls": false})),
            json!({"enable_thinking": false, "parallel_tool_calls": false})
        );
    }

    #[test]
    fn other_vendors_keep_their_parameters() {
        let params = map(json!({"thinking_enable": true, "voice": "alloy"}));
        for vendor in Vendor::ALL {
            if vendor != Vendor::DashScope {
                assert_eq!(
                    wire_parameters(vendor, params.clone()),
                    params,
                    "{vendor:?}"
                );
            }
        }
    }
}
