//! Front matter of memory files: a YAML block between `---` lines at the
//! top, with `name`, `description` and `type`.

use serde::Deserialize;

/// The fields of a memory file's front matter (all optional; unknown
/// fields are ignored).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct FrontMatter {
    /// The memory's title.
    #[serde(default)]
    pub name: Option<String>,
    /// When a later conversation should read the file.
    #[serde(default)]
    pub description: Option<String>,
    /// `user`, `feedback`, `project` or `reference` (others are kept as
    /// written).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

/// Why a text has no usable front matter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    /// The text does not start with a `---` line.
    #[error("the file does not start with a front-matter block (`---`)")]
    Missing,
    /// The opening `---` has no closing `---` line.
    #[error("the front-matter block is not closed by a `---` line")]
    Unclosed,
}

/// The front matter at the top of `text` and the body after it.
///
/// The block is read as YAML; a block that is not valid YAML (models often
/// write an unquoted `:` inside a description) is read line by line as
/// `key: value` pairs instead. Only scalar string values are kept.
///
/// # Errors
/// [`FrontMatterError`] when there is no complete block at the top.
pub fn parse_front_matter(text: &str) -> Result<(FrontMatter, &str), FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.trim_start_matches([' ', '\t', '\r', '\n']);
    let Some(after_open) = rest
        .strip_prefix("---\r\n")
        .or_else(|| rest.strip_prefix("---\n"))
    else {
        return Err(FrontMatterError::Missing);
    };
    let mut offset = 0;
    let mut close = None;
    for line in after_open.split_inclusive('\n') {
        if line.trim_end() == "---" {
            close = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let (block_end, body_start) = close.ok_or(FrontMatterError::Unclosed)?;
    let block = &after_open[..block_end];
    let body = &after_open[body_start..];
    let fields = serde_yaml_ng::from_str::<Option<Loose>>(block)
        .map(|loose| loose.map(Loose::into_front_matter).unwrap_or_default())
        .unwrap_or_else(|_| line_fields(block));
    Ok((fields, body))
}

/// The YAML block with any value types, so that a number or a list in one
/// field does not lose the others.
#[derive(Deserialize)]
struct Loose {
    #[serde(default)]
    name: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    description: Option<serde_yaml_ng::Value>,
    #[serde(default, rename = "type")]
    kind: Option<serde_yaml_ng::Value>,
}

impl Loose {
    fn into_front_matter(self) -> FrontMatter {
        FrontMatter {
            name: self.name.and_then(scalar),
            description: self.description.and_then(scalar),
            kind: self.kind.and_then(scalar),
        }
    }
}

fn scalar(value: serde_yaml_ng::Value) -> Option<String> {
    let text = match value {
        serde_yaml_ng::Value::String(s) => s,
        serde_yaml_ng::Value::Number(n) => n.to_string(),
        serde_yaml_ng::Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    let text = text.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `key: value` lines of a block that is not valid YAML.
fn line_fields(block: &str) -> FrontMatter {
    let mut out = FrontMatter::default();
    for line in block.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        if value.is_empty() {
            continue;
        }
        let slot = match key.trim() {
            "name" => &mut out.name,
            "description" => &mut out.description,
            "type" => &mut out.kind,
            _ => continue,
        };
        *slot = Some(value.to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use pretty_assertions::assert_eq;

    use super::*;

    fn fm(name: &str, description: &str, kind: &str) -> FrontMatter {
        FrontMatter {
            name: Some(name.to_owned()),
            description: Some(description.to_owned()),
            kind: Some(kind.to_owned()),
        }
    }

    #[test]
    fn a_yaml_block_is_parsed_and_the_body_follows() {
        let text = "---\nname: User profile\ndescription: \"Where the user lives\"\ntype: user\n\
                    extra: [1, 2]\n---\nLives in Hangzhou.\n";
        let (fields, body) = parse_front_matter(text).unwrap();
        assert_eq!(fields, fm("User profile", "Where the user lives", "user"));
        assert_eq!(body, "Lives in Hangzhou.\n");
    }

    #[test]
    fn an_unquoted_colon_falls_back_to_lines() {
        let text = "---\nname: Reviews\ndescription: When reviewing: read this first\n\
                    type: feedback\n---\nbody";
        let (fields, body) = parse_front_matter(text).unwrap();
        assert_eq!(
            fields,
            fm("Reviews", "When reviewing: read this first", "feedback")
        );
        assert_eq!(body, "body");
    }

    #[test]
    fn crlf_bom_and_leading_blank_lines_are_accepted() {
        let text = "\u{feff}\r\n---\r\nname: A\r\ndescription: B\r\ntype: project\r\n---\r\nx";
        let (fields, body) = parse_front_matter(text).unwrap();
        assert_eq!(fields, fm("A", "B", "project"));
        assert_eq!(body, "x");
    }

    #[test]
    fn odd_values_are_kept_when_scalar() {
        let (fields, _) = parse_front_matter("---\nname: 42\ndescription: [a]\n---\n").unwrap();
        assert_eq!(fields.name.as_deref(), Some("42"));
        assert_eq!(fields.description, None);
        let (empty, _) = parse_front_matter("---\n---\nbody").unwrap();
        assert_eq!(empty, FrontMatter::default());
    }

    #[test]
    fn missing_or_unclosed_blocks_are_errors() {
        assert_eq!(
            parse_front_matter("# Just a note\n"),
            Err(FrontMatterError::Missing)
        );
        assert_eq!(
            parse_front_matter("---\nname: a\n"),
            Err(FrontMatterError::Unclosed)
        );
        assert_eq!(parse_front_matter(""), Err(FrontMatterError::Missing));
    }
}
