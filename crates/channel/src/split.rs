//! Long replies split to a platform's size limit: at a paragraph break,
//! else a line break, else a space, else anywhere — never inside a
//! character.

/// `text` in pieces of at most `max_chars` characters (at least one per
/// piece), none empty, that join back to `text` apart from the
/// whitespace at the cuts.
#[must_use]
pub fn split_message(text: &str, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        // The byte offset just past `max_chars` characters.
        let Some((limit, _)) = rest.char_indices().nth(max_chars) else {
            out.push(rest.to_owned());
            break;
        };
        let window = &rest[..limit];
        let cut = ["\n\n", "\n", " "]
            .iter()
            .filter_map(|sep| window.rfind(sep))
            .find(|&at| at > 0)
            .unwrap_or(limit);
        let (piece, tail) = rest.split_at(cut);
        let piece = piece.trim_end();
        if !piece.is_empty() {
            out.push(piece.to_owned());
        }
        rest = tail.trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_short_text_is_one_piece_and_blank_is_none() {
        assert_eq!(split_message("  hello  ", 10), vec!["hello"]);
        assert!(split_message(" \n ", 10).is_empty());
    }

    #[test]
    fn cuts_prefer_paragraphs_then_lines_then_spaces() {
        let text = "first paragraph here\n\nsecond one\nwith lines and words";
        assert_eq!(
            split_message(text, 25),
            vec!["first paragraph here", "second one", "with lines and words"]
        );
        assert_eq!(
            split_message("aaaa bbbb cccc", 9),
            vec!["aaaa", "bbbb cccc"]
        );
    }

    #[test]
    fn a_word_longer_than_the_limit_is_cut_between_characters() {
        let text = "ééééééé🙂🙂🙂";
        let pieces = split_message(text, 3);
        assert!(pieces.iter().all(|p| p.chars().count() <= 3), "{pieces:?}");
        assert_eq!(pieces.concat(), text);
    }

    #[test]
    fn every_piece_fits_and_nothing_but_cut_whitespace_is_lost() {
        let text = "lorem ipsum dolor sit amet, ".repeat(400);
        for max in [1, 7, 100, 4096] {
            let pieces = split_message(&text, max);
            assert!(
                pieces
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().count() <= max)
            );
            let squash = |s: &str| s.split_whitespace().collect::<String>();
            assert_eq!(squash(&pieces.join(" ")), squash(&text), "max {max}");
        }
    }
}
