//! The `sed` allowlist: substitutions and line printing only.

/// What a `sed` invocation does, once its options and expressions passed
/// the allowlist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SedCall<'a> {
    /// `-i` / `--in-place` was given.
    pub in_place: bool,
    /// The input files.
    pub files: Vec<&'a str>,
}

/// Checks a `sed` call (arguments after `sed`).
///
/// # Errors
/// A message naming the option or expression outside the allowlist
/// (`-f`, `-z`, write or execute flags, regex addresses, `{}` blocks, any
/// command other than `s` and `p`).
pub fn check_sed<'a>(args: &[&'a str]) -> Result<SedCall<'a>, String> {
    let mut call = SedCall::default();
    let mut expressions: Vec<&str> = Vec::new();
    let mut script_from_e = false;
    let mut positionals = Vec::new();
    let mut i = 0;
    let mut only_files = false;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if only_files || !arg.starts_with('-') || arg == "-" {
            positionals.push(arg);
            continue;
        }
        if arg == "--" {
            only_files = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "in-place" => call.in_place = true,
                "expression" => {
                    let expr = match value {
                        Some(v) => v,
                        None => {
                            i += 1;
                            args.get(i - 1)
                                .copied()
                                .ok_or("sed --expression without a value")?
                        }
                    };
                    expressions.push(expr);
                    script_from_e = true;
                }
                "quiet" | "silent" | "regexp-extended" | "separate" | "unbuffered" | "posix"
                | "debug" | "sandbox" | "follow-symlinks" => {}
                "file" => return Err("sed flag --file not allowed".into()),
                "null-data" => return Err("sed flag -z not allowed".into()),
                _ => return Err(format!("sed flag --{name} not allowed")),
            }
            continue;
        }
        let flags: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < flags.len() {
            match flags[j] {
                'n' | 'E' | 'r' | 's' | 'u' => j += 1,
                'i' => {
                    call.in_place = true;
                    break;
                }
                'e' => {
                    let rest: String = flags[j + 1..].iter().collect();
                    if rest.is_empty() {
                        i += 1;
                        expressions.push(args.get(i - 1).copied().ok_or("sed -e without a value")?);
                    } else {
                        // `-eEXPR`: the expression is the rest of this argument.
                        let start = arg.len() - rest.len();
                        expressions.push(&arg[start..]);
                    }
                    script_from_e = true;
                    break;
                }
                'f' => return Err("sed flag -f not allowed".into()),
                'z' => return Err("sed flag -z not allowed".into()),
                other => return Err(format!("sed flag -{other} not allowed")),
            }
        }
    }
    let mut positionals = positionals.into_iter();
    if !script_from_e {
        expressions.push(positionals.next().ok_or("sed without an expression")?);
    }
    call.files = positionals.collect();
    for expr in expressions {
        check_expression(expr)?;
    }
    Ok(call)
}

fn check_expression(expr: &str) -> Result<(), String> {
    let chars: Vec<char> = expr.chars().collect();
    let not_allowed = || format!("sed expression '{expr}' not in allowlist");
    let mut i = 0;
    loop {
        while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\n' | ';') {
            i += 1;
        }
        if i >= chars.len() {
            return Ok(());
        }
        // Optional address: line numbers or `$`, optionally a range.
        let is_line = |c: char| c.is_ascii_digit() || c == '$';
        let start = i;
        while i < chars.len() && is_line(chars[i]) {
            i += 1;
        }
        if i > start && chars.get(i) == Some(&',') {
            i += 1;
            let second = i;
            while i < chars.len() && is_line(chars[i]) {
                i += 1;
            }
            if i == second {
                return Err(not_allowed());
            }
        }
        match chars.get(i) {
            Some('p') => i += 1,
            Some('s') => {
                let delimiter = *chars.get(i + 1).ok_or_else(not_allowed)?;
                if matches!(delimiter, '\n' | '\\' | ' ') {
                    return Err(not_allowed());
                }
                i += 2;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delimiter {
                        i += if chars[i] == '\\' { 2 } else { 1 };
                    }
                    if i >= chars.len() {
                        return Err(not_allowed());
                    }
                    i += 1;
                }
                while let Some(&flag) = chars.get(i) {
                    match flag {
                        'g' | 'i' | 'I' | 'p' | 'm' | 'M' | '0'..='9' => i += 1,
                        'w' | 'W' => return Err("sed write operation (w/W) not allowed".into()),
                        'e' | 'E' => return Err("sed execute operation (e/E) not allowed".into()),
                        ';' | ' ' | '\t' | '\n' => break,
                        _ => return Err(not_allowed()),
                    }
                }
            }
            Some('{') => return Err("sed curly braces not allowed".into()),
            _ => return Err(not_allowed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_and_line_printing_pass() {
        let call = check_sed(&["-n", "1,5p", "a.txt"]).unwrap();
        assert_eq!(
            call,
            SedCall {
                in_place: false,
                files: vec!["a.txt"]
            }
        );
        let call = check_sed(&["-i.bak", "-e", "s/a/b/g", "-e", "s#c#d#2", "x", "y"]).unwrap();
        assert_eq!(
            call,
            SedCall {
                in_place: true,
                files: vec!["x", "y"]
            }
        );
        assert!(
            check_sed(&["--in-place=.orig", "s/a/b/;$p", "f"])
                .unwrap()
                .in_place
        );
        assert!(check_sed(&["-E", r"s/(a)\/x/\1/", "f"]).is_ok());
    }

    #[test]
    fn everything_else_is_refused_with_a_reason() {
        let refused = |args: &[&str]| check_sed(args).unwrap_err();
        assert!(refused(&["1d", "f"]).contains("not in allowlist"));
        assert!(refused(&["/x/p", "f"]).contains("not in allowlist"));
        assert!(refused(&["s/a/b/w out", "f"]).contains("write"));
        assert!(refused(&["s/a/b/e", "f"]).contains("execute"));
        assert!(refused(&["{p}", "f"]).contains("curly"));
        assert!(refused(&["-f", "x.sed", "f"]).contains("-f"));
        assert!(refused(&["-z", "s/a/b/", "f"]).contains("-z"));
        assert!(refused(&["s/a/b", "f"]).contains("not in allowlist"));
        assert!(refused(&[]).contains("without an expression"));
    }
}
