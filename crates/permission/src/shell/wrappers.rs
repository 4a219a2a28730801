//! Commands that run another command (`sudo rm`, `timeout 5 make`, `xargs rm`).

/// Options (per wrapper) that take a separate argument.
fn option_takes_value(wrapper: &str, option: &str) -> bool {
    match wrapper {
        "sudo" | "doas" => matches!(
            option,
            "-u" | "-g" | "-C" | "-p" | "-U" | "-r" | "-t" | "-D" | "-h"
        ),
        "env" => matches!(option, "-u" | "-C" | "--unset" | "--chdir"),
        "nice" => matches!(option, "-n" | "--adjustment"),
        "ionice" => matches!(option, "-c" | "-n" | "-p"),
        "timeout" => matches!(option, "-s" | "-k" | "--signal" | "--kill-after"),
        "xargs" => matches!(
            option,
            "-I" | "-L"
                | "-n"
                | "-P"
                | "-d"
                | "-E"
                | "-s"
                | "-a"
                | "--arg-file"
                | "--delimiter"
                | "--max-args"
                | "--max-procs"
                | "--max-lines"
                | "--replace"
        ),
        "stdbuf" => matches!(option, "-i" | "-o" | "-e"),
        "exec" => option == "-a",
        "watch" => matches!(option, "-n" | "-d" | "--interval"),
        _ => false,
    }
}

const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "nohup", "nice", "ionice", "time", "timeout", "xargs", "command",
    "builtin", "exec", "stdbuf", "watch",
];

/// The last component of a command name (`/usr/bin/rm` -> `rm`).
#[must_use]
pub(crate) fn base_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// If `words` starts with a wrapper (or is `find -exec`), the words of the
/// command it runs (possibly empty, e.g. `xargs` alone); `None` otherwise.
#[must_use]
pub(crate) fn unwrap_once<'a>(words: &'a [&'a str]) -> Option<&'a [&'a str]> {
    let (first, rest) = words.split_first()?;
    let wrapper = base_name(first);
    if wrapper == "find" {
        // `find ... -exec CMD ARGS ;` runs CMD.
        let start = rest
            .iter()
            .position(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir"))?;
        let inner = &rest[start + 1..];
        let end = inner
            .iter()
            .position(|a| matches!(*a, ";" | "+"))
            .unwrap_or(inner.len());
        return Some(&inner[..end]);
    }
    if !WRAPPERS.contains(&wrapper) {
        return None;
    }
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i];
        if arg == "--" {
            i += 1;
            break;
        }
        if wrapper == "env" && arg.contains('=') && !arg.starts_with('-') {
            i += 1;
            continue;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            i += if option_takes_value(wrapper, arg) {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let mut inner = rest.get(i..).unwrap_or(&[]);
    if wrapper == "timeout" && !inner.is_empty() {
        inner = &inner[1..];
    }
    if wrapper == "nice"
        && let Some(first) = inner.first()
        && first.starts_with('-')
        && first[1..].chars().all(|c| c.is_ascii_digit())
    {
        inner = &inner[1..];
    }
    Some(inner)
}

/// The command and every command it wraps, outermost first.
#[must_use]
pub(crate) fn unwrap_all<'a>(words: &'a [&'a str]) -> Vec<&'a [&'a str]> {
    let mut out = vec![words];
    let mut current = words;
    while let Some(inner) = unwrap_once(current) {
        if inner.is_empty() || out.len() > 16 {
            break;
        }
        out.push(inner);
        current = inner;
    }
    out
}
