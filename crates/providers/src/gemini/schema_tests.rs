use super::*;
use pretty_assertions::assert_eq;

#[test]
fn nullable_type_arrays_become_nullable_and_unknown_keywords_go() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": {"type": ["string", "null"], "description": "A path", "format": "uri"},
            "count": {"type": ["integer", "string"], "exclusiveMinimum": 0},
            "mode": {"const": "fast"},
            "nothing": {"type": "null"},
        },
        "required": ["path", "ghost"],
    });
    assert_eq!(
        sanitize_schema(&schema),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A path", "nullable": true},
                "count": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "mode": {"enum": ["fast"]},
                "nothing": {"type": "object", "nullable": true},
            },
            "required": ["path"],
        })
    );
}

#[test]
fn optional_any_of_is_inlined_and_one_of_becomes_any_of() {
    let schema = json!({
        "type": "object",
        "properties": {
            "limit": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": null,
                "title": "Limit",
            },
            "target": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        },
    });
    assert_eq!(
        sanitize_schema(&schema),
        json!({
            "type": "object",
            "properties": {
                "limit": {
                    "default": null,
                    "title": "Limit",
                    "type": "integer",
                    "minimum": 1,
                    "nullable": true,
                },
                "target": {
                    "anyOf": [{"type": "string"}, {"type": "integer"}],
                    "nullable": true,
                },
            },
        })
    );
}

#[test]
fn local_references_are_inlined_and_recursion_is_cut() {
    let schema = json!({
        "type": "object",
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "number"}}},
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
        },
        "properties": {
            "at": {"$ref": "#/$defs/Point", "description": "Where"},
            "list": {"$ref": "#/$defs/Node"},
            "broken": {"$ref": "#/$defs/Missing"},
            "tuple": {"type": "array", "items": [{"type": "string"}]},
        },
    });
    let out = sanitize_schema(&schema);
    assert_eq!(
        out["properties"]["at"],
        json!({"description": "Where", "type": "object", "properties": {"x": {"type": "number"}}})
    );
    assert_eq!(out["properties"]["broken"], json!({"type": "object"}));
    assert_eq!(
        out["properties"]["tuple"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert!(out.get("$defs").is_none());
    let mut depth = 0;
    let mut node = &out["properties"]["list"];
    while let Some(next) = node.pointer("/properties/next") {
        node = next;
        depth += 1;
    }
    assert!((1..=MAX_REF_DEPTH).contains(&depth), "depth {depth}");
}

#[test]
fn exponential_reference_fan_out_stays_bounded() {
    let mut defs = Map::new();
    for level in 0..40 {
        let next = format!("#/$defs/L{}", level + 1);
        defs.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
        );
    }
    defs.insert("L40".into(), json!({"type": "string"}));
    let schema = json!({"$defs": defs, "$ref": "#/$defs/L0"});
    let out = sanitize_schema(&schema);
    let size = out.to_string().len();
    assert!(size < 2_000_000, "{size} bytes");
}

#[test]
fn all_of_parts_are_merged_and_garbage_is_an_empty_schema() {
    let schema = json!({
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
        ],
    });
    assert_eq!(
        sanitize_schema(&schema),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
            "required": ["a", "b"],
        })
    );
    assert_eq!(sanitize_schema(&json!(true)), json!({}));
    assert_eq!(
        sanitize_schema(&json!({"type": 7, "properties": 3})),
        json!({})
    );
}

#[test]
fn enums_of_other_values_than_strings_move_into_the_description() {
    let schema = json!({
        "type": "object",
        "properties": {
            "level": {"type": "integer", "enum": [1, 2, 3], "description": "How loud."},
            "flag": {"const": true},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "odd": {"type": "string", "enum": "red"},
        },
    });
    assert_eq!(
        sanitize_schema(&schema)["properties"],
        json!({
            "level": {"type": "integer", "description": "How loud. Allowed values: 1, 2, 3."},
            "flag": {"description": "Allowed values: true."},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "odd": {"type": "string"},
        })
    );
}
