//! Word lexing for the shell parser: quotes, escapes, `$` expansions,
//! backticks, process substitution and brace expansion.

use super::ast::{Expansion, Hazard, Word};
use super::parse::{
    MAX_DEPTH, PResult, ParseError, Parser, Term, is_meta, is_name_char, is_name_start,
};

impl Parser {
    /// Lexes one word at the cursor (which is not on a blank).
    pub(super) fn lex_word(&mut self) -> PResult<Word> {
        let start = self.pos;
        let mut word = Word {
            tilde: self.peek() == Some('~'),
            ..Word::default()
        };
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 2;
                    self.substitution(Term::Paren)?;
                    word.expansions.push(Expansion::ProcessSubstitution);
                    self.hazard(Hazard::ProcessSubstitution);
                }
                c if is_meta(c) => break,
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(next) => {
                            word.value.push(next);
                            word.quoted = true;
                        }
                        None => word.value.push('\\'),
                    }
                    self.pos = (self.pos + 2).min(self.chars.len());
                }
                '\'' => {
                    self.pos += 1;
                    self.single_quoted(&mut word)?;
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut word)?;
                }
                '$' => self.dollar(&mut word, false)?,
                '`' => self.backtick(&mut word)?,
                '*' | '?' | '[' => {
                    word.glob = true;
                    word.value.push(c);
                    self.pos += 1;
                }
                '{' => {
                    if self.brace_expansion_ahead() {
                        word.expansions.push(Expansion::Brace);
                        self.hazard(Hazard::BraceExpansion);
                    }
                    word.value.push(c);
                    self.pos += 1;
                }
                _ => {
                    word.value.push(c);
                    self.pos += 1;
                }
            }
        }
        word.raw = self.text(start, self.pos);
        Ok(word)
    }

    /// Whether the `{` at the cursor opens a brace expansion (`{a,b}`, `{1..3}`).
    fn brace_expansion_ahead(&self) -> bool {
        let mut i = self.pos + 1;
        let mut level = 1usize;
        let mut comma = false;
        while let Some(&c) = self.chars.get(i) {
            match c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        let inner: String = self.chars[self.pos + 1..i].iter().collect();
                        return comma || inner.contains("..");
                    }
                }
                ',' if level == 1 => comma = true,
                '\'' | '"' | '\\' | '$' | '`' => return comma,
                c if is_meta(c) => return false,
                _ => {}
            }
            i += 1;
        }
        false
    }

    fn single_quoted(&mut self, word: &mut Word) -> PResult<()> {
        word.quoted = true;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated single quote")),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(c) => {
                    word.value.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self, word: &mut Word) -> PResult<()> {
        word.quoted = true;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated double quote")),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => match self.peek_at(1) {
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        word.value.push(next);
                        self.pos += 2;
                    }
                    Some('\n') => self.pos += 2,
                    _ => {
                        word.value.push('\\');
                        self.pos += 1;
                    }
                },
                Some('$') => self.dollar(word, true)?,
                Some('`') => self.backtick(word)?,
                Some(c) => {
                    word.value.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn dollar(&mut self, word: &mut Word, in_double_quotes: bool) -> PResult<()> {
        let start = self.pos;
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                self.pos += 1;
                self.skip_parenthesised()?;
                word.expansions.push(Expansion::Arithmetic);
                self.hazard(Hazard::Arithmetic);
            }
            Some('(') => {
                self.pos += 2;
                self.substitution(Term::Paren)?;
                word.expansions.push(Expansion::CommandSubstitution);
                self.hazard(Hazard::CommandSubstitution);
            }
            Some('{') => {
                self.pos += 2;
                let inner_start = self.pos;
                let mut level = 1usize;
                loop {
                    match self.peek() {
                        None => return Err(self.error("unterminated `${`")),
                        Some('{') => level += 1,
                        Some('}') => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        Some('\\') => self.pos += 1,
                        _ => {}
                    }
                    self.pos += 1;
                }
                let inner = self.text(inner_start, self.pos);
                self.pos += 1;
                let plain = inner.chars().next().is_some_and(is_name_start)
                    && inner.chars().all(is_name_char)
                    || (!inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit()))
                    || matches!(inner.as_str(), "@" | "*" | "#" | "?" | "-" | "$" | "!");
                if plain {
                    word.expansions.push(Expansion::Variable);
                } else {
                    word.expansions.push(Expansion::Parameter);
                    self.hazard(Hazard::ParameterExpansion);
                }
            }
            Some('\'') if !in_double_quotes => {
                self.pos += 2;
                word.quoted = true;
                loop {
                    match self.peek() {
                        None => return Err(self.error("unterminated `$'`")),
                        Some('\'') => {
                            self.pos += 1;
                            return Ok(());
                        }
                        Some('\\') => {
                            let escaped = self.peek_at(1).unwrap_or('\\');
                            word.value.push(match escaped {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                            self.pos = (self.pos + 2).min(self.chars.len());
                        }
                        Some(c) => {
                            word.value.push(c);
                            self.pos += 1;
                        }
                    }
                }
            }
            Some('"') if !in_double_quotes => {
                self.pos += 2;
                return self.double_quoted(word);
            }
            Some(c) if is_name_start(c) => {
                self.pos += 1;
                while self.peek().is_some_and(is_name_char) {
                    self.pos += 1;
                }
                word.expansions.push(Expansion::Variable);
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                self.pos += 2;
                word.expansions.push(Expansion::Variable);
            }
            _ => {
                word.value.push('$');
                self.pos += 1;
                return Ok(());
            }
        }
        let raw = self.text(start, self.pos);
        word.value.push_str(&raw);
        Ok(())
    }

    fn backtick(&mut self, word: &mut Word) -> PResult<()> {
        let start = self.pos;
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated backtick")),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    inner.extend(self.peek_at(1));
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        let mut sub = Parser::new(&inner, true, self.depth + 1);
        if sub.depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        sub.parse_list(Term::Eof).map_err(|e| ParseError {
            offset: start,
            reason: e.reason,
        })?;
        let sub = sub.finish().map_err(|e| ParseError {
            offset: start,
            reason: e.reason,
        })?;
        self.script.commands.extend(sub.commands);
        self.script.hazards.extend(sub.hazards);
        self.script.hazards.push(Hazard::CommandSubstitution);
        word.expansions.push(Expansion::CommandSubstitution);
        let raw = self.text(start, self.pos);
        word.value.push_str(&raw);
        Ok(())
    }
}
