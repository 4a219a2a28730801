//! A recursive-descent parser for the subset of the POSIX / bash grammar an
//! agent's command lines use.
//!
//! It understands words with quotes and escapes, `&&` `||` `;` `|` `|&` `&`
//! and newlines, subshells `( )`, groups `{ }`, redirections (heredocs
//! included), `$(...)`, backticks, `<(...)` / `>(...)`, `${...}`, `$VAR`,
//! `$((...))`, brace expansion, `NAME=value` prefixes and comments. Control
//! flow (`if`, `for`, `while`, `case`, functions, `[[ ]]`) is recognised and
//! reported as a [`Hazard`]; the simple commands inside it are still
//! collected so deny rules can see them.

use super::ast::{Hazard, Redirect, RedirectOp, Script, SimpleCommand, Word};

/// Nesting deeper than this (subshells, substitutions) is refused.
pub(super) const MAX_DEPTH: usize = 48;

/// Why a command line could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Character offset where the parser gave up.
    pub offset: usize,
    /// What it found there.
    pub reason: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at character {}", self.reason, self.offset)
    }
}

pub(super) type PResult<T> = Result<T, ParseError>;

/// Parses a command line.
///
/// # Errors
/// A [`ParseError`] for unbalanced quotes, parentheses or braces, a
/// redirection without a target, an unterminated heredoc, nesting deeper
/// than 48 levels, or a character the grammar does not allow where it stands.
pub fn parse(source: &str) -> Result<Script, ParseError> {
    let mut parser = Parser::new(source, false, 0);
    parser.parse_list(Term::Eof)?;
    parser.finish()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Term {
    Eof,
    Paren,
    Brace,
}

#[derive(Debug)]
struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
}

#[derive(Debug)]
pub(super) struct Parser {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) nested: bool,
    pub(super) script: Script,
    heredocs: Vec<PendingHeredoc>,
}

pub(super) fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\r' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
    )
}

pub(super) fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

pub(super) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether a word is a `NAME=value` (or `NAME+=value`, `NAME[i]=value`) assignment.
fn is_assignment(word: &Word) -> bool {
    let mut chars = word.raw.chars().peekable();
    if !chars.next().is_some_and(is_name_start) {
        return false;
    }
    while chars.peek().is_some_and(|c| is_name_char(*c)) {
        chars.next();
    }
    if chars.peek() == Some(&'[') {
        for c in chars.by_ref() {
            if c == ']' {
                break;
            }
        }
    }
    match chars.next() {
        Some('=') => true,
        Some('+') => chars.next() == Some('='),
        _ => false,
    }
}

impl Parser {
    pub(super) fn new(source: &str, nested: bool, depth: usize) -> Self {
        Self {
            chars: source.chars().collect(),
            pos: 0,
            depth,
            nested,
            script: Script::default(),
            heredocs: Vec::new(),
        }
    }

    pub(super) fn finish(self) -> PResult<Script> {
        if self.heredocs.is_empty() {
            Ok(self.script)
        } else {
            Err(self.error("unterminated heredoc"))
        }
    }

    pub(super) fn error(&self, reason: &'static str) -> ParseError {
        ParseError {
            offset: self.pos,
            reason,
        }
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// Whether the unquoted word `w` stands at the cursor on its own.
    fn at_word(&self, w: &str) -> bool {
        self.starts_with(w)
            && self
                .chars
                .get(self.pos + w.chars().count())
                .is_none_or(|c| is_meta(*c))
    }

    pub(super) fn text(&self, start: usize, end: usize) -> String {
        self.chars[start..end].iter().collect()
    }

    pub(super) fn hazard(&mut self, hazard: Hazard) {
        self.script.hazards.push(hazard);
    }

    pub(super) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(self.error("nesting too deep"))
        } else {
            Ok(())
        }
    }

    /// Skips blanks, line continuations and comments; stops at a newline.
    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Skips blanks and newlines (reading any pending heredoc bodies).
    fn skip_blanks_and_newlines(&mut self) -> PResult<()> {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.newline()?;
            } else {
                return Ok(());
            }
        }
    }

    /// Consumes a newline, then the bodies of the heredocs opened on its line.
    fn newline(&mut self) -> PResult<()> {
        self.pos += 1;
        for doc in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return Err(self.error("unterminated heredoc"));
                }
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line = self.text(start, self.pos);
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let candidate = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if candidate == doc.delimiter {
                    break;
                }
                if !doc.quoted {
                    if line.contains("$((") {
                        self.hazard(Hazard::Arithmetic);
                    } else if line.contains("$(") || line.contains('`') {
                        self.hazard(Hazard::CommandSubstitution);
                    }
                    if line.contains("${") {
                        self.hazard(Hazard::ParameterExpansion);
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn parse_list(&mut self, term: Term) -> PResult<()> {
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return if term == Term::Eof {
                    Ok(())
                } else {
                    Err(self.error("unexpected end of input"))
                };
            };
            match c {
                '\n' => self.newline()?,
                ';' if self.peek_at(1) == Some(';') => {
                    return Err(self.error("`;;` outside `case`"));
                }
                ';' => self.pos += 1,
                '&' if !matches!(self.peek_at(1), Some('&' | '>')) => self.pos += 1,
                ')' if term == Term::Paren => {
                    self.pos += 1;
                    return Ok(());
                }
                ')' => return Err(self.error("unexpected `)`")),
                '}' if term == Term::Brace && self.at_word("}") => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    let before = self.pos;
                    self.parse_and_or()?;
                    if self.pos == before {
                        return Err(self.error("unexpected character"));
                    }
                }
            }
        }
    }

    fn parse_and_or(&mut self) -> PResult<()> {
        self.parse_pipeline()?;
        loop {
            self.skip_blanks();
            if self.starts_with("&&") || self.starts_with("||") {
                self.pos += 2;
                self.skip_blanks_and_newlines()?;
                self.parse_pipeline()?;
            } else {
                return Ok(());
            }
        }
    }

    fn parse_pipeline(&mut self) -> PResult<()> {
        self.skip_blanks();
        if self.at_word("!") {
            self.pos += 1;
        }
        let mut piped = false;
        loop {
            self.parse_command(piped)?;
            self.skip_blanks();
            if self.peek() == Some('|') && self.peek_at(1) != Some('|') {
                self.pos += 1;
                if self.peek() == Some('&') {
                    self.pos += 1;
                }
                self.skip_blanks_and_newlines()?;
                piped = true;
            } else {
                return Ok(());
            }
        }
    }

    fn parse_command(&mut self, piped: bool) -> PResult<()> {
        self.skip_blanks();
        match self.peek() {
            None => Err(self.error("missing command")),
            Some('(') if self.peek_at(1) == Some('(') => {
                self.hazard(Hazard::Arithmetic);
                self.skip_parenthesised()?;
                self.parse_trailing_redirects(piped)
            }
            Some('(') => {
                self.pos += 1;
                self.enter()?;
                self.parse_list(Term::Paren)?;
                self.depth -= 1;
                self.parse_trailing_redirects(piped)
            }
            Some('{') if self.at_word("{") => {
                self.pos += 1;
                self.enter()?;
                self.parse_list(Term::Brace)?;
                self.depth -= 1;
                self.parse_trailing_redirects(piped)
            }
            Some(_) => self.parse_simple(piped),
        }
    }

    /// Redirections after `( )`, `{ }` or `(( ))` apply to the whole body;
    /// they are kept as a command without words.
    fn parse_trailing_redirects(&mut self, piped: bool) -> PResult<()> {
        let start = self.pos;
        let mut cmd = SimpleCommand {
            piped_input: piped,
            nested: self.nested,
            ..Default::default()
        };
        loop {
            self.skip_blanks();
            if !self.at_redirect() {
                break;
            }
            let redirect = self.parse_redirect()?;
            cmd.redirects.push(redirect);
        }
        if !cmd.redirects.is_empty() {
            cmd.text = self.text(start, self.pos).trim().to_owned();
            self.script.commands.push(cmd);
        }
        Ok(())
    }

    /// Whether a redirection operator (with an optional descriptor number) starts here.
    fn at_redirect(&self) -> bool {
        let mut i = 0;
        while self.peek_at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        match self.peek_at(i) {
            Some('<' | '>') => self.peek_at(i + 1) != Some('('),
            Some('&') => i == 0 && self.peek_at(1) == Some('>'),
            _ => false,
        }
    }

    fn parse_simple(&mut self, piped: bool) -> PResult<()> {
        let start = self.pos;
        let mut cmd = SimpleCommand {
            piped_input: piped,
            nested: self.nested,
            ..Default::default()
        };
        let mut skip_header = false;
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            if matches!(c, '\n' | ';' | '|' | ')') || (c == '&' && self.peek_at(1) != Some('>')) {
                break;
            }
            if self.at_redirect() {
                let redirect = self.parse_redirect()?;
                cmd.redirects.push(redirect);
                continue;
            }
            if c == '(' {
                if skip_header && self.starts_with("((") {
                    self.skip_parenthesised()?;
                    continue;
                }
                if cmd.words.len() == 1 && cmd.assignments.is_empty() {
                    return self.parse_function_body(start);
                }
                return Err(self.error("unexpected `(`"));
            }
            let before = self.pos;
            let word = self.lex_word()?;
            if self.pos == before {
                return Err(self.error("unexpected character"));
            }
            if skip_header {
                continue;
            }
            if cmd.words.is_empty() && is_assignment(&word) {
                cmd.assignments.push(word);
                continue;
            }
            if cmd.words.is_empty() && !word.quoted && word.is_static() {
                match word.raw.as_str() {
                    "if" | "while" | "until" => {
                        self.hazard(Hazard::ControlFlow(match word.raw.as_str() {
                            "if" => "if",
                            "while" => "while",
                            _ => "until",
                        }));
                        continue;
                    }
                    "then" | "elif" | "else" | "do" | "fi" | "done" | "!" => continue,
                    "for" | "select" => {
                        self.hazard(Hazard::ControlFlow(if word.raw == "for" {
                            "for"
                        } else {
                            "select"
                        }));
                        skip_header = true;
                        continue;
                    }
                    "case" => {
                        self.hazard(Hazard::ControlFlow("case"));
                        self.skip_case()?;
                        continue;
                    }
                    "function" => {
                        self.hazard(Hazard::FunctionDefinition);
                        skip_header = true;
                        continue;
                    }
                    "[" => {
                        self.hazard(Hazard::TestCommand);
                    }
                    "[[" => {
                        self.hazard(Hazard::TestCommand);
                        self.skip_test()?;
                        continue;
                    }
                    "{" => {
                        // A group after a keyword (`then { ...; }`).
                        self.enter()?;
                        self.parse_list(Term::Brace)?;
                        self.depth -= 1;
                        continue;
                    }
                    _ => {}
                }
            }
            cmd.words.push(word);
        }
        self.push_simple(cmd, start);
        Ok(())
    }

    fn push_simple(&mut self, mut cmd: SimpleCommand, start: usize) {
        if cmd.words.first().is_some_and(|w| !w.is_static()) {
            self.hazard(Hazard::DynamicCommandName);
        }
        if cmd.words.is_empty() && cmd.assignments.is_empty() && cmd.redirects.is_empty() {
            return;
        }
        cmd.text = self.text(start, self.pos).trim().to_owned();
        self.script.commands.push(cmd);
    }

    /// `name ( ) body`: a function definition; the body is parsed for its commands.
    fn parse_function_body(&mut self, _start: usize) -> PResult<()> {
        self.pos += 1;
        self.skip_blanks();
        if self.peek() != Some(')') {
            return Err(self.error("unexpected `(`"));
        }
        self.pos += 1;
        self.hazard(Hazard::FunctionDefinition);
        self.skip_blanks_and_newlines()?;
        self.parse_command(false)
    }

    /// Skips `(( ... ))` (or any balanced parenthesised text).
    pub(super) fn skip_parenthesised(&mut self) -> PResult<()> {
        let mut level = 0usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '(' => level += 1,
                ')' => {
                    level = level.saturating_sub(1);
                    if level == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(self.error("unbalanced parentheses"))
    }

    /// Skips a `case ... esac` statement (nested ones included).
    fn skip_case(&mut self) -> PResult<()> {
        let mut level = 1usize;
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Err(self.error("unterminated `case`")),
                Some('\n') => self.newline()?,
                Some(c) if is_meta(c) => self.pos += 1,
                Some(_) => {
                    let before = self.pos;
                    let word = self.lex_word()?;
                    if self.pos == before {
                        self.pos += 1;
                    }
                    if !word.quoted {
                        if word.raw == "case" {
                            level += 1;
                        } else if word.raw == "esac" {
                            level -= 1;
                            if level == 0 {
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
    }

    /// Skips the operands of `[[ ... ]]`.
    fn skip_test(&mut self) -> PResult<()> {
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Err(self.error("unterminated `[[`")),
                Some('\n') => self.newline()?,
                Some(']') if self.at_word("]]") => {
                    self.pos += 2;
                    return Ok(());
                }
                Some(c)
                    if is_meta(c) && !(matches!(c, '<' | '>') && self.peek_at(1) == Some('(')) =>
                {
                    self.pos += 1;
                }
                Some(_) => {
                    let before = self.pos;
                    self.lex_word()?;
                    if self.pos == before {
                        self.pos += 1;
                    }
                }
            }
        }
    }

    fn parse_redirect(&mut self) -> PResult<Redirect> {
        let digits_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let fd = if self.pos > digits_start {
            Some(
                self.text(digits_start, self.pos)
                    .parse::<u32>()
                    .unwrap_or(u32::MAX),
            )
        } else {
            None
        };
        let (op, len, strip_tabs) = if self.starts_with("<<<") {
            (RedirectOp::HereString, 3, false)
        } else if self.starts_with("<<-") {
            (RedirectOp::HereDoc, 3, true)
        } else if self.starts_with("<<") {
            (RedirectOp::HereDoc, 2, false)
        } else if self.starts_with("<>") {
            (RedirectOp::ReadWrite, 2, false)
        } else if self.starts_with("<&") {
            (RedirectOp::Duplicate, 2, false)
        } else if self.starts_with("<") {
            (RedirectOp::Read, 1, false)
        } else if self.starts_with(">>") {
            (RedirectOp::Append, 2, false)
        } else if self.starts_with(">|") {
            (RedirectOp::Write, 2, false)
        } else if self.starts_with(">&") {
            (RedirectOp::Duplicate, 2, false)
        } else if self.starts_with(">") {
            (RedirectOp::Write, 1, false)
        } else if self.starts_with("&>>") {
            (RedirectOp::AppendBoth, 3, false)
        } else if self.starts_with("&>") {
            (RedirectOp::WriteBoth, 2, false)
        } else {
            return Err(self.error("expected a redirection"));
        };
        self.pos += len;
        self.skip_blanks();
        if self
            .peek()
            .is_none_or(|c| is_meta(c) && !matches!(c, '<' | '>'))
        {
            return Err(self.error("missing redirection target"));
        }
        let before = self.pos;
        let target = self.lex_word()?;
        if self.pos == before {
            return Err(self.error("missing redirection target"));
        }
        let op = match op {
            RedirectOp::Duplicate
                if !(target.value == "-" || target.value.chars().all(|c| c.is_ascii_digit())) =>
            {
                if self
                    .chars
                    .get(digits_start..)
                    .is_some_and(|s| s.first() == Some(&'<'))
                {
                    RedirectOp::Read
                } else {
                    RedirectOp::WriteBoth
                }
            }
            other => other,
        };
        if op == RedirectOp::HereDoc {
            self.heredocs.push(PendingHeredoc {
                delimiter: target.value.clone(),
                strip_tabs,
                quoted: target.quoted,
            });
        }
        Ok(Redirect { fd, op, target })
    }

    /// Parses a nested command list (after `$(`, `<(` or `>(`) as nested commands.
    pub(super) fn substitution(&mut self, term: Term) -> PResult<()> {
        let saved = self.nested;
        self.nested = true;
        self.enter()?;
        self.parse_list(term)?;
        self.depth -= 1;
        self.nested = saved;
        Ok(())
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
