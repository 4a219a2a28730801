//! Bash rule patterns: `git commit:*` (prefix), `docker run *` (wildcard),
//! `npm test` (exact), matched per sub-command.
//!
//! Permissive (allow) rules are read narrowly: a prefix must match whole
//! words, an exact rule the whole sub-command, and only locale/colour
//! variables may precede the command. Restrictive (deny, ask) rules are read
//! broadly: an exact rule also matches the command with more arguments,
//! wrappers like `sudo` or `timeout` are looked through, and the raw text of
//! each sub-command is tried too.

use super::analyze::{harmless_assignments, is_read_only_command};
use super::ast::{Script, SimpleCommand};
use super::parse::parse;
use super::wrappers::unwrap_all;

/// A parsed Bash rule content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashPattern {
    /// `prefix:*`: the words of the prefix, then anything.
    Prefix(Vec<String>),
    /// Contains an unescaped `*`: a wildcard over the sub-command text.
    Wildcard(Vec<Token>),
    /// No wildcard: exactly these assignments and words.
    Exact(Vec<String>, Vec<String>),
}

/// One element of a wildcard pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// A literal character.
    Char(char),
    /// `*`: any run of characters.
    Star,
}

fn split_words(text: &str) -> (Vec<String>, Vec<String>) {
    if let Ok(script) = parse(text)
        && let [cmd] = script.commands.as_slice()
        && script.hazards.is_empty()
        && cmd.redirects.is_empty()
    {
        return (
            cmd.assignments.iter().map(|w| w.raw.clone()).collect(),
            cmd.values().map(str::to_owned).collect(),
        );
    }
    (
        Vec::new(),
        text.split_whitespace().map(str::to_owned).collect(),
    )
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(Token::Char(chars.next().unwrap_or('\\'))),
            '*' => out.push(Token::Star),
            other => out.push(Token::Char(other)),
        }
    }
    out
}

impl BashPattern {
    /// Parses a rule content.
    #[must_use]
    pub fn parse(content: &str) -> Self {
        let content = content.trim();
        if let Some(prefix) = content.strip_suffix(":*")
            && !tokens(prefix).contains(&Token::Star)
        {
            return Self::Prefix(split_words(prefix).1);
        }
        let toks = tokens(content);
        if toks.contains(&Token::Star) {
            return Self::Wildcard(toks);
        }
        let (assignments, words) = split_words(content);
        Self::Exact(assignments, words)
    }

    /// Whether this pattern matches one sub-command; `broad` selects the
    /// restrictive reading (deny / ask rules).
    #[must_use]
    pub fn matches(&self, cmd: &SimpleCommand, broad: bool) -> bool {
        let words: Vec<&str> = cmd.values().collect();
        if words.is_empty() {
            return false;
        }
        let assignments: Vec<&str> = cmd.assignments.iter().map(|w| w.raw.as_str()).collect();
        if !broad {
            return match self {
                Self::Prefix(prefix) => {
                    harmless_assignments(cmd) && starts_with_words(&words, prefix)
                }
                Self::Exact(a, w) => a == &assignments && w == &words,
                Self::Wildcard(toks) => {
                    let text = assignments
                        .iter()
                        .chain(words.iter())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" ");
                    wildcard(toks, &text)
                }
            };
        }
        let layers = unwrap_all(&words);
        layers.iter().any(|layer| self.matches_words_broadly(layer))
            || self.matches_text_broadly(&cmd.text)
    }

    fn matches_words_broadly(&self, words: &[&str]) -> bool {
        match self {
            Self::Prefix(prefix) | Self::Exact(_, prefix) => starts_with_words(words, prefix),
            Self::Wildcard(toks) => wildcard(toks, &words.join(" ")),
        }
    }

    /// Broad matching on raw text, for sub-commands and for chunks of a
    /// command line that could not be parsed.
    #[must_use]
    pub fn matches_text_broadly(&self, text: &str) -> bool {
        let words: Vec<&str> = text
            .split_whitespace()
            .skip_while(|w| w.contains('=') && !w.starts_with('-'))
            .collect();
        if words.is_empty() {
            return false;
        }
        match self {
            Self::Wildcard(toks) => wildcard(toks, text.trim()) || wildcard(toks, &words.join(" ")),
            _ => unwrap_all(&words)
                .iter()
                .any(|layer| self.matches_words_broadly(layer)),
        }
    }
}

fn starts_with_words(words: &[&str], prefix: &[String]) -> bool {
    !prefix.is_empty()
        && words.len() >= prefix.len()
        && words.iter().zip(prefix).all(|(w, p)| *w == p)
}

/// `*` matches any run of characters; a trailing ` *` may also match nothing.
fn wildcard(toks: &[Token], text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    if glob_match(toks, &chars) {
        return true;
    }
    match toks {
        [head @ .., Token::Char(' '), Token::Star] => glob_match(head, &chars),
        _ => false,
    }
}

fn glob_match(toks: &[Token], text: &[char]) -> bool {
    // Iterative matching with single-star backtracking: O(len(toks) * len(text)).
    let (mut t, mut s) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while s < text.len() {
        match toks.get(t) {
            Some(Token::Star) => {
                star = Some((t, s));
                t += 1;
            }
            Some(Token::Char(c)) if *c == text[s] => {
                t += 1;
                s += 1;
            }
            _ => match star {
                Some((st, ss)) => {
                    t = st + 1;
                    s = ss + 1;
                    star = Some((st, ss + 1));
                }
                None => return false,
            },
        }
    }
    toks[t.min(toks.len())..]
        .iter()
        .all(|tok| *tok == Token::Star)
}

/// Pieces of an unparseable command line, split at every operator,
/// parenthesis, backtick and `$(`, for broad (deny / ask) matching.
#[must_use]
pub fn lenient_chunks(command: &str) -> Vec<String> {
    command
        .replace("$(", "\n")
        .split(['\n', ';', '&', '|', '(', ')', '`', '{', '}'])
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Whether `pattern` matches some part of `script` (the broad reading).
#[must_use]
pub fn any_part_matches(pattern: &BashPattern, script: Option<&Script>, raw: &str) -> bool {
    if let Some(script) = script {
        if script.commands.iter().any(|c| pattern.matches(c, true)) {
            return true;
        }
        if script.hazards.is_empty() {
            return false;
        }
    }
    lenient_chunks(raw)
        .iter()
        .any(|chunk| pattern.matches_text_broadly(chunk))
}

/// Whether every sub-command of `script` is matched by one of `patterns`
/// (the narrow reading), read-only sub-commands counting as matched when
/// `read_only_covered` is set. A script with hazards never is.
#[must_use]
pub fn all_parts_allowed(
    patterns: &[BashPattern],
    script: &Script,
    read_only_covered: bool,
) -> bool {
    script.hazards.is_empty()
        && !script.commands.is_empty()
        && script.commands.iter().all(|cmd| {
            (read_only_covered && is_read_only_command(cmd))
                || patterns.iter().any(|p| p.matches(cmd, false))
        })
}

/// Tools whose second word names a sub-command (`git commit`, `npm run`), so
/// a suggested prefix keeps it.
const SUBCOMMAND_TOOLS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "npx",
    "cargo",
    "rustup",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "gh",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "conda",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "systemctl",
    "terraform",
    "make",
    "dotnet",
    "mvn",
    "gradle",
    "bundle",
    "gem",
    "rails",
    "composer",
    "deno",
];

/// Wrappers and interpreters: their argument is what runs, so a suggested
/// prefix keeps it (`python script.py:*`, `sudo rm:*`), as AgentScope does.
const RUNS_ITS_ARGUMENT: &[&str] = &[
    "sudo", "doas", "env", "nohup", "nice", "ionice", "time", "timeout", "xargs", "command",
    "builtin", "exec", "stdbuf", "watch", "eval", "source", ".", "bash", "sh", "zsh", "fish",
    "dash", "python", "python3", "node", "ruby", "perl", "php", "lua", "deno", "bun",
];

fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:@%+,-".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Suggested allow-rule contents, one per sub-command that is not read-only,
/// so that "allow similar calls" covers the command rather than this one call:
///
/// - `git commit:*` for a tool with sub-commands (`SUBCOMMAND_TOOLS`);
/// - `rm -rf:*` when the second word is an option (as AgentScope does);
/// - `touch:*` when the second word is an argument such as a file name
///   (AgentScope suggests `touch a.txt:*` here, which never matches a
///   similar call);
/// - the first two words (`python script.py:*`, `sudo rm:*`) for wrappers and
///   interpreters, where `python:*` would allow any code, as AgentScope does;
/// - the exact command when it has one word or needs environment variables.
#[must_use]
pub fn suggestions(script: &Script) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if !script.hazards.is_empty() {
        return out;
    }
    for cmd in &script.commands {
        if is_read_only_command(cmd)
            || cmd.words.is_empty()
            || cmd.words.iter().any(|w| !w.is_static())
        {
            continue;
        }
        let words: Vec<&str> = cmd.values().collect();
        if words[0].contains(['*', '\\']) {
            continue;
        }
        let rule = if !harmless_assignments(cmd) {
            cmd.assignments
                .iter()
                .map(|w| w.raw.clone())
                .chain(words.iter().map(|w| quote(w)))
                .collect::<Vec<_>>()
                .join(" ")
        } else if words.len() == 1 {
            quote(words[0])
        } else if words[1].contains(['*', '\\'])
            || !(words[1].starts_with('-')
                || SUBCOMMAND_TOOLS.contains(&words[0])
                || RUNS_ITS_ARGUMENT.contains(&words[0]))
        {
            format!("{}:*", quote(words[0]))
        } else {
            format!("{} {}:*", quote(words[0]), quote(words[1]))
        };
        if rule.contains('*') && !rule.ends_with(":*") {
            continue;
        }
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    out
}
